// ssgd scale INPUT --gpus LIST [--mode weak|strong] [--global-batch N]
//                  [--scenario FILE.yaml] [--set key.path=value]... [--report FILE.json]
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
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/logging.h"
#include "common/units.h"
#include "simulator/replay/replay.h"
#include "simulator/input/replay_input.h"
#include "simulator/scaling/batch_plan.h"
#include "simulator/scaling/scaling_table.h"
#include "simulator/scenario/scenario.h"
#include "simulator/scenario/scenario_scaling.h"
#include "tools/ssgd/commands.h"
#include "tools/ssgd/output_path.h"

namespace ssgd::tools {
namespace {

struct ScaleArgs {
  std::string input;
  std::string gpus;
  std::string mode;
  std::string global_batch;
  std::string scenario;
  std::vector<std::string> sets;
  std::string report;
};

// Bounds as the scenario keys have them: at most 1048576 nodes of 1024 GPUs,
// and scaling.global_batch at most 2^30.
constexpr std::int64_t kMaxGpus = 1'048'576LL * 1'024;
constexpr std::int64_t kMaxGlobalBatch = 1LL << 30;

InputError flag_error(const std::string& flag, const std::string& reason) {
  return InputError({"command line", std::nullopt, std::nullopt, flag}, reason);
}

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
  if (trim(text).empty()) throw flag_error("--gpus", "expected GPU counts such as 1,2,4,8");
  std::vector<std::int64_t> out;
  std::set<std::int64_t> seen;
  for (const std::string_view raw : split_list(text)) {
    const std::string_view item = trim(raw);
    const auto v = parse_positive(item, kMaxGpus);
    if (!v) {
      throw flag_error("--gpus",
                       fmt::format("item {} ('{}') of '{}': expected a GPU count from 1 to {}",
                                   out.size() + 1, item, text, kMaxGpus));
    }
    if (!seen.insert(*v).second) {
      throw flag_error("--gpus", fmt::format("{} GPUs is listed twice in '{}'", *v, text));
    }
    out.push_back(*v);
  }
  return out;
}

// The scenario on `gpus` GPUs: whole nodes of the scenario's gpus_per_node,
// or one smaller node of the generic platform.
sim::Scenario on_gpus(const sim::Scenario& base, std::int64_t gpus) {
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
    throw flag_error("--gpus",
                     fmt::format("{} GPUs is less than one {} node ({} GPUs), and a platform "
                                 "preset's nodes are whole: use 1 or multiples of {}",
                                 gpus, base.platform.preset, g, g));
  } else {
    throw flag_error("--gpus",
                     fmt::format("{} GPUs is not a multiple of cluster.gpus_per_node ({}): "
                                 "nodes are whole",
                                 gpus, g));
  }
  return s;
}

struct Row {
  sim::ScalingRow row;
  sim::ReplayResult result;
};

void run_scale(const ScaleArgs& a) {
  auto log = logger("tools");
  check_output_path(a.report, "--report");
  const std::vector<std::int64_t> counts = parse_gpu_list(a.gpus);
  if (!a.mode.empty() && a.mode != "weak" && a.mode != "strong") {
    throw flag_error("--mode",
                     fmt::format("unknown scaling mode '{}'; expected weak or strong", a.mode));
  }
  std::optional<std::int64_t> global_batch;
  if (!a.global_batch.empty()) {
    global_batch = parse_positive(trim(a.global_batch), kMaxGlobalBatch);
    if (!global_batch) {
      throw flag_error("--global-batch",
                       fmt::format("expected a number of samples from 1 to {}, got '{}'",
                                   kMaxGlobalBatch, a.global_batch));
    }
  }
  const std::optional<std::filesystem::path> scenario_file =
      a.scenario.empty() ? std::nullopt : std::optional<std::filesystem::path>(a.scenario);
  sim::Scenario base = sim::load_scenario(scenario_file, a.sets);
  // --mode overrides the scenario's scaling.mode; weak scaling has no global
  // batch, so a scenario's is set aside (and said so), which lets one
  // scenario file be swept both ways.
  if (a.mode == "weak") {
    if (base.scaling.global_batch) {
      log->info("--mode weak: the scenario's scaling.global_batch ({}) is not used",
                *base.scaling.global_batch);
    }
    base.scaling.mode = sim::ScalingMode::kWeak;
    base.scaling.global_batch.reset();
  } else if (a.mode == "strong") {
    base.scaling.mode = sim::ScalingMode::kStrong;
  }
  if (global_batch && base.scaling.mode != sim::ScalingMode::kStrong) {
    throw flag_error(
        "--global-batch",
        "fixes the global batch of strong scaling, and the mode is weak: use --mode strong");
  }
  if (!base.jobs.empty()) {
    throw InputError(
        {a.scenario.empty() ? std::string("--set") : a.scenario, std::nullopt, std::nullopt,
         "jobs"},
        "ssgd scale replays the scenario's own job alone; leave jobs out (ssgd simulate "
        "runs them on a shared fabric)");
  }
  sim::ReplayInput input = sim::load_replay_input(a.input);
  for (const auto& w : input.warnings) log->warn("{}", w);
  const trace::LayerProfile& profile = input.profile;
  if (profile.has_comm()) {
    log->warn(
        "{}: its measured comm_ns are replayed unchanged at every GPU count above 1, though they "
        "were measured on one cluster; a policy that merges gradients (e.g. --set "
        "policy.overlap=mgwfbp) models every collective instead",
        a.input);
  }

  // The global batch is fixed once, from the scenario as given (its own GPU
  // count), so that every count splits the same one.
  const sim::BatchPlan given_plan = sim::batch_plan(profile, base);
  const bool strong = base.scaling.mode == sim::ScalingMode::kStrong;
  const std::int64_t batch = strong ? global_batch.value_or(given_plan.global_batch) : 0;
  std::vector<sim::Scenario> scenarios;
  for (const std::int64_t g : counts) {
    sim::Scenario s = on_gpus(base, g);
    if (strong) {
      if (batch < g) {
        throw flag_error("--gpus",
                         fmt::format("{} GPUs: the global batch of {} samples cannot be split "
                                     "over them; every GPU needs at least one",
                                     g, batch));
      }
      s.scaling.global_batch = batch;
    }
    scenarios.push_back(std::move(s));
  }

  // One baseline for every row: one GPU, at the per-GPU batch (weak) or
  // computing the whole global batch (strong).
  sim::Scenario one_base = base;
  one_base.nodes = one_base.gpus_per_node = 1;
  if (strong) one_base.scaling.global_batch = batch;
  const sim::BatchPlan one_plan = sim::batch_plan(profile, one_base);
  sim::ReplayOptions options;
  options.single_worker_baseline = false;
  options.progress = true;
  if (strong) {
    options.batch_model = std::make_shared<const sim::BatchTimeModel>(
        sim::scenario_batch_time_model(profile, base, one_plan));
  }
  const sim::ReplayResult baseline =
      sim::replay(profile, sim::single_gpu_scenario(one_base, one_plan), options);

  // Progress: a line before each count once the sweep has run for a while
  // or when the count is large (a big flow-model replay can take minutes),
  // and one after each count that took more than two seconds.
  const auto t0 = std::chrono::steady_clock::now();
  const auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  constexpr std::int64_t kLargeCount = 1024;
  std::vector<Row> rows;
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    const sim::Scenario& s = scenarios[i];
    if (since(t0) > 2 || s.workers() >= kLargeCount) {
      log->info("scale: replaying {} GPUs ({} of {})", s.workers(), i + 1, scenarios.size());
    }
    const auto row_start = std::chrono::steady_clock::now();
    sim::ReplayResult r = s.workers() == 1 ? baseline : sim::replay(profile, s, options);
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
    rows.push_back({row, std::move(r)});
  }
  const double seconds = since(t0);

  const std::string model = profile.model.empty() ? a.input : profile.model;
  const std::string compute_model = strong ? options.batch_model->description : std::string();
  if (!a.report.empty()) {
    nlohmann::json j;
    j["input"] = {{"path", a.input}, {"model", profile.model}};
    j["scenario_file"] = a.scenario;
    j["mode"] = sim::to_string(base.scaling.mode);
    j["reference_batch"] = given_plan.reference_batch;
    j["batch_given"] = given_plan.batch_known;
    j["global_batch"] = strong ? nlohmann::json(batch) : nlohmann::json(nullptr);
    j["compute_model"] = compute_model;
    j["policy"] = sim::to_string(base.overlap);
    j["iterations"] = base.iterations;
    sim::ScalingRow one;
    one.per_gpu_batch = one.global_batch = one_plan.global_batch;
    one.iteration_time = baseline.iteration_time;
    one.throughput_samples_per_s = baseline.throughput_samples_per_s;
    one.speedup = one.efficiency = 1.0;
    j["single_gpu"] = sim::scaling_row_json(one);
    nlohmann::json list = nlohmann::json::array();
    for (const auto& r : rows) {
      nlohmann::json row = sim::scaling_row_json(r.row);
      row["exposed_comm_ns"] = r.result.breakdown.exposed_comm.ns();
      list.push_back(std::move(row));
    }
    j["rows"] = list;
    AtomicFile file(a.report);
    file.stream() << j.dump(2) << "\n";
    file.commit();
  }

  if (strong) {
    std::cout << fmt::format("ssgd scale: {}, strong scaling of a global batch of {} samples\n",
                             model, batch);
    std::cout << fmt::format("  compute model: {}\n", compute_model);
  } else {
    std::cout << fmt::format("ssgd scale: {}, weak scaling at {} {} per GPU\n", model,
                             given_plan.reference_batch,
                             given_plan.batch_known ? "samples" : "batch (no batch size given)");
  }
  std::cout << fmt::format(
      "  policy {}, {} iterations, {} GPU(s) per node; speedup and efficiency "
      "against 1 GPU at batch {} ({})\n\n",
      sim::to_string(base.overlap), base.iterations, base.gpus_per_node, one_plan.global_batch,
      format_duration(baseline.iteration_time));
  std::vector<sim::ScalingRow> table;
  for (const auto& r : rows) table.push_back(r.row);
  sim::print_scaling_table(table, "  ", std::cout);
  std::cout << fmt::format("\n  replayed {} GPU counts in {:.3f} s\n", rows.size(), seconds);
  if (!a.report.empty()) log->info("report written to {}", a.report);
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
  cmd->add_option("--scenario", args->scenario, "scenario YAML file (see scenarios/README.md)");
  cmd->add_option("--set", args->sets, "override a scenario key: key.path=value (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--report", args->report, "write the rows as JSON here");
  cmd->callback([args] { run_scale(*args); });
}

}  // namespace ssgd::tools
