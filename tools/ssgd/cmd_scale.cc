// ssgd scale INPUT --gpus LIST [--mode weak|strong] [--global-batch N]
//                  [--scenario FILE.yaml] [--set key.path=value]... [--report FILE.json]
//                  [--allow-truncated]
//
// Replays the scenario at each GPU count of LIST and prints one row per
// count: GPUs, nodes, per-GPU batch, global batch, iteration time,
// samples/s, and speedup and scaling efficiency against one GPU (weak or
// strong scaling, docs/scaling.md). A count of G GPUs runs on G /
// gpus_per_node whole nodes; fewer GPUs than one node holds run on one node
// of G GPUs (generic platform only); one GPU is the baseline itself.

#include <charconv>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/logging.h"
#include "common/units.h"
#include "simulator/input/replay_input.h"
#include "simulator/replay/replay.h"
#include "simulator/replay/replay_estimate.h"
#include "simulator/report/scale_report.h"
#include "simulator/scaling/batch_plan.h"
#include "simulator/scaling/scaling_table.h"
#include "simulator/scenario/scenario.h"
#include "simulator/scenario/scenario_scaling.h"
#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"

namespace ssgd::tools {
namespace {

struct ScaleArgs {
  std::string input;
  std::string gpus;
  std::string mode;
  std::string global_batch;
  ScenarioOptions scenario;
  OutputFile report;
  bool allow_truncated = false;
  bool allow_large = false;
};

// Bounds as the scenario keys have them: at most 1048576 nodes of 1024 GPUs,
// and scaling.global_batch at most 2^30.
constexpr std::int64_t kMaxGpus = 1'048'576LL * 1'024;
constexpr std::int64_t kMaxGlobalBatch = 1LL << 30;

std::optional<std::int64_t> parse_positive(std::string_view text, std::int64_t max) {
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || v < 1 || v > max) {
    return std::nullopt;
  }
  return v;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

std::vector<std::int64_t> parse_gpu_list(const std::string& text) {
  if (trim(text).empty()) throw flag_error("--gpus", text, "expected GPU counts such as 1,2,4,8");
  std::vector<std::int64_t> out;
  std::set<std::int64_t> seen;
  for (const std::string_view raw : split_list(text)) {
    const std::string_view item = trim(raw);
    const auto v = parse_positive(item, kMaxGpus);
    if (!v) {
      throw flag_error("--gpus", text,
                       fmt::format("item {} ('{}'): expected a GPU count from 1 to {}",
                                   out.size() + 1, item, kMaxGpus));
    }
    if (!seen.insert(*v).second) {
      throw flag_error("--gpus", text, fmt::format("{} GPUs is listed twice", *v));
    }
    out.push_back(*v);
  }
  return out;
}

// The sweep's own flags, checked before the scenario is read.
struct SweepFlags {
  std::vector<std::int64_t> counts;          // --gpus, in order
  std::optional<std::int64_t> global_batch;  // --global-batch
};

SweepFlags parse_sweep_flags(const ScaleArgs& a) {
  SweepFlags f;
  f.counts = parse_gpu_list(a.gpus);
  if (!a.mode.empty() && a.mode != "weak" && a.mode != "strong") {
    throw flag_error("--mode", a.mode,
                     fmt::format("unknown scaling mode '{}'; expected weak or strong", a.mode));
  }
  if (!a.global_batch.empty()) {
    f.global_batch = parse_positive(trim(a.global_batch), kMaxGlobalBatch);
    if (!f.global_batch) {
      throw flag_error("--global-batch", a.global_batch,
                       fmt::format("expected a number of samples from 1 to {}", kMaxGlobalBatch));
    }
  }
  return f;
}

// The scenario as given, with --mode applied: it overrides the scenario's
// scaling.mode; weak scaling has no global batch, so a scenario's is set
// aside (and said so), which lets one scenario file be swept both ways.
sim::Scenario sweep_base_scenario(const ScaleArgs& a, const SweepFlags& flags) {
  sim::Scenario base = load_scenario(a.scenario);
  if (a.mode == "weak") {
    if (base.scaling.global_batch) {
      logger("tools")->info("--mode weak: the scenario's scaling.global_batch ({}) is not used",
                            *base.scaling.global_batch);
    }
    base.scaling.mode = sim::ScalingMode::kWeak;
    base.scaling.global_batch.reset();
  } else if (a.mode == "strong") {
    base.scaling.mode = sim::ScalingMode::kStrong;
  }
  if (flags.global_batch && base.scaling.mode != sim::ScalingMode::kStrong) {
    throw flag_error(
        "--global-batch", a.global_batch,
        "fixes the global batch of strong scaling, and the mode is weak: use --mode strong");
  }
  return base;
}

// The scenario on `gpus` GPUs: whole nodes of the scenario's gpus_per_node,
// or one smaller node of the generic platform.
sim::Scenario on_gpus(const sim::Scenario& base, std::int64_t gpus, const std::string& list) {
  sim::Scenario s = base;
  const std::int64_t g = base.gpus_per_node;
  if (gpus == 1) {
    // One GPU is the baseline, which runs on the generic platform
    // (single_gpu_scenario): one GPU talks to no one.
    s.nodes = 1;
    s.gpus_per_node = 1;
  } else if (gpus % g == 0) {
    s.nodes = gpus / g;
  } else if (gpus < g && base.platform.preset == "generic") {
    s.nodes = 1;
    s.gpus_per_node = gpus;
    s.gpus_per_node_given = true;
  } else if (gpus < g) {
    throw flag_error("--gpus", list,
                     fmt::format("{} GPUs is less than one {} node ({} GPUs), and a platform "
                                 "preset's nodes are whole: use 1 or multiples of {}",
                                 gpus, base.platform.preset, g, g));
  } else {
    throw flag_error("--gpus", list,
                     fmt::format("{} GPUs is not a multiple of cluster.gpus_per_node ({}): "
                                 "nodes are whole",
                                 gpus, g));
  }
  return s;
}

// What the sweep replays: a scenario per GPU count and the one-GPU baseline
// they are all compared with.
struct SweepPlan {
  bool strong = false;
  std::int64_t global_batch = 0;  // strong: the one every count splits; 0 when weak
  sim::BatchPlan given_plan;      // the scenario as given, at its own GPU count
  sim::BatchPlan one_plan;        // the baseline's
  sim::Scenario baseline;  // one GPU, at the per-GPU batch (weak) or the global batch (strong)
  std::vector<sim::Scenario> scenarios;  // one per --gpus count, in order
  sim::ReplayOptions options;
};

SweepPlan plan_sweep(const ScaleArgs& a, const trace::LayerProfile& profile,
                     const sim::Scenario& base, const SweepFlags& flags) {
  SweepPlan p;
  // The global batch is fixed once, from the scenario as given (its own GPU
  // count), so that every count splits the same one.
  p.given_plan = sim::batch_plan(profile, base);
  p.strong = base.scaling.mode == sim::ScalingMode::kStrong;
  p.global_batch = p.strong ? flags.global_batch.value_or(p.given_plan.global_batch) : 0;
  for (const std::int64_t g : flags.counts) {
    sim::Scenario s = on_gpus(base, g, a.gpus);
    if (p.strong) {
      if (p.global_batch < g) {
        throw flag_error("--gpus", a.gpus,
                         fmt::format("{} GPUs: the global batch of {} samples cannot be split "
                                     "over them; every GPU needs at least one",
                                     g, p.global_batch));
      }
      s.scaling.global_batch = p.global_batch;
    }
    p.scenarios.push_back(std::move(s));
  }
  sim::Scenario one_base = base;
  one_base.nodes = one_base.gpus_per_node = 1;
  if (p.strong) one_base.scaling.global_batch = p.global_batch;
  p.one_plan = sim::batch_plan(profile, one_base);
  p.options.single_worker_baseline = false;
  p.options.progress = true;
  p.options.allow_large = a.allow_large;
  if (p.strong) {
    p.options.batch_model = std::make_shared<const sim::BatchTimeModel>(
        sim::scenario_batch_time_model(profile, base, p.one_plan));
  }
  p.baseline = sim::single_gpu_scenario(one_base, p.one_plan);
  return p;
}

// Every count is estimated (simulator/replay/replay_estimate.h) before the
// first runs: one that cannot fit in memory is refused, naming --gpus and the
// count, unless --allow-large; a sweep that will take a while says so.
void check_sweep_fits(const ScaleArgs& a, const trace::LayerProfile& profile,
                      const SweepPlan& p) {
  double seconds = 0;
  for (const sim::Scenario& s : p.scenarios) {
    const sim::ReplayEstimate e = sim::with_located_errors(
        s, [&] { return sim::estimate_replay(profile, s, p.options); });
    seconds += e.seconds;
    if (a.allow_large) continue;
    if (const auto why = sim::too_large(e)) {
      throw flag_error("--gpus", a.gpus,
                       fmt::format("{} GPUs: {}; leave out counts this large, or give "
                                   "--allow-large to run anyway",
                                   s.workers(), *why));
    }
  }
  if (seconds > 2) {
    logger("tools")->info("scale: {} GPU counts, about {:.0f} s in all (estimate)",
                          p.scenarios.size(), seconds);
  }
}

// Replays the baseline and every count. Progress: a line before each count
// once the sweep has run for a while or when the count is large (a big
// flow-model replay can take minutes), and one after each count that took
// more than two seconds.
sim::ScaleResult run_sweep(const trace::LayerProfile& profile, const SweepPlan& p,
                           double& seconds) {
  auto log = logger("tools");
  const sim::ReplayResult baseline = sim::replay(profile, p.baseline, p.options);
  sim::ScaleResult out;
  out.single_gpu.per_gpu_batch = out.single_gpu.global_batch = p.one_plan.global_batch;
  out.single_gpu.iteration_time = baseline.iteration_time;
  out.single_gpu.throughput_samples_per_s = baseline.throughput_samples_per_s;
  out.single_gpu.speedup = out.single_gpu.efficiency = 1.0;

  const auto t0 = std::chrono::steady_clock::now();
  const auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  constexpr std::int64_t kLargeCount = 1024;
  for (std::size_t i = 0; i < p.scenarios.size(); ++i) {
    const sim::Scenario& s = p.scenarios[i];
    if (since(t0) > 2 || s.workers() >= kLargeCount) {
      log->info("scale: replaying {} GPUs ({} of {})", s.workers(), i + 1, p.scenarios.size());
    }
    const auto row_start = std::chrono::steady_clock::now();
    const sim::ReplayResult r = s.workers() == 1 ? baseline : sim::replay(profile, s, p.options);
    if (since(row_start) > 2) {
      log->info("scale: {} GPUs took {:.1f} s", s.workers(), since(row_start));
    }
    const sim::BatchPlan plan = sim::batch_plan(profile, s);
    const sim::ScalingFigures f =
        sim::scaling_figures(plan, r.iteration_time, baseline.iteration_time);
    sim::ScalingRow row;
    row.gpus = s.workers();
    row.nodes = s.nodes;
    row.gpus_per_node = s.gpus_per_node;
    row.per_gpu_batch = plan.per_gpu_batch;
    row.global_batch = plan.global_batch;
    row.iteration_time = r.iteration_time;
    row.throughput_samples_per_s = r.throughput_samples_per_s;
    row.speedup = f.speedup;
    row.efficiency = f.efficiency;
    out.rows.push_back({row, r.breakdown.exposed_comm});
  }
  seconds = since(t0);
  return out;
}

void print_sweep(const sim::ScaleResult& r, double seconds, std::ostream& out) {
  const std::string model = r.model.empty() ? r.input : r.model;
  if (r.global_batch) {
    out << fmt::format("ssgd scale: {}, strong scaling of a global batch of {} samples\n", model,
                       *r.global_batch);
    out << fmt::format("  compute model: {}\n", r.compute_model);
  } else {
    out << fmt::format("ssgd scale: {}, weak scaling at {} {} per GPU\n", model, r.reference_batch,
                       r.batch_given ? "samples" : "batch (no batch size given)");
  }
  out << fmt::format(
      "  policy {}, {} iterations, {} GPU(s) per node; speedup and efficiency "
      "against 1 GPU at batch {} ({})\n\n",
      sim::to_string(r.overlap), r.iterations, r.gpus_per_node, r.single_gpu.global_batch,
      format_duration(r.single_gpu.iteration_time));
  std::vector<sim::ScalingRow> table;
  for (const auto& row : r.rows) table.push_back(row.row);
  sim::print_scaling_table(table, "  ", out);
  out << fmt::format("\n  replayed {} GPU counts in {:.3f} s\n", r.rows.size(), seconds);
}

void run_scale(const ScaleArgs& a) {
  auto log = logger("tools");
  check_outputs({&a.report}, {a.input, a.scenario.file});
  check_input(a.input, "INPUT");
  const SweepFlags flags = parse_sweep_flags(a);
  const sim::Scenario base = sweep_base_scenario(a, flags);
  sim::ReplayInput input = sim::load_replay_input(a.input, {a.allow_truncated});
  for (const auto& w : input.warnings) log->warn("{}", w);
  const trace::LayerProfile& profile = input.profile;
  if (profile.has_comm()) {
    log->warn(
        "{}: its measured comm_ns are replayed unchanged at every GPU count above 1, though they "
        "were measured on one cluster; a policy that merges gradients (e.g. --set "
        "policy.overlap=mgwfbp) models every collective instead",
        a.input);
  }

  const SweepPlan plan = plan_sweep(a, profile, base, flags);
  check_sweep_fits(a, profile, plan);
  double seconds = 0;
  sim::ScaleResult result = run_sweep(profile, plan, seconds);
  result.input = a.input;
  result.model = profile.model;
  result.scenario_file = a.scenario.file;
  result.mode = base.scaling.mode;
  result.reference_batch = plan.given_plan.reference_batch;
  result.batch_given = plan.given_plan.batch_known;
  if (plan.strong) {
    result.global_batch = plan.global_batch;
    result.compute_model = plan.options.batch_model->description;
  }
  result.overlap = base.overlap;
  result.iterations = base.iterations;
  result.gpus_per_node = base.gpus_per_node;

  if (a.report.given()) {
    const std::string report = json_report_text(sim::scale_report_json(result));
    write_output(a.report, [&] { write_file_atomically(a.report.path, report); });
  }
  print_sweep(result, seconds, std::cout);
  if (a.report.given()) log->info("report written to {}", a.report.path);
}

}  // namespace

void add_scale_command(CLI::App& app) {
  auto args = std::make_shared<ScaleArgs>();
  auto* cmd = app.add_subcommand(
      "scale",
      "Replay a scenario at several GPU counts: speedup and scaling efficiency (weak or strong)");
  cmd->add_option("INPUT", args->input, "ssgd trace, layer-profile CSV or B-Caffe log")->required();
  cmd->add_option("--gpus", args->gpus, "GPU counts, comma-separated, e.g. 1,2,4,8,16,32,64")
      ->required();
  cmd->add_option("--mode", args->mode,
                  "weak (each GPU keeps its batch) or strong (fixed global batch); "
                  "default: scaling.mode");
  cmd->add_option(
      "--global-batch", args->global_batch,
      "strong: the global batch (default: scaling.global_batch, else the input's batch x "
      "the scenario's GPUs)");
  add_scenario_options(*cmd, args->scenario, ScenarioJobs::kRefuse);
  add_output_option(*cmd, args->report, "--report", "write the rows as JSON here");
  add_allow_truncated_flag(*cmd, args->allow_truncated);
  add_allow_large_flag(*cmd, args->allow_large);
  cmd->callback([args] { run_scale(*args); });
}

}  // namespace ssgd::tools
