#include "simulator/api/scale.h"

#include <charconv>
#include <chrono>
#include <memory>
#include <set>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "common/units.h"
#include "simulator/api/request_error.h"
#include "simulator/replay/replay.h"
#include "simulator/replay/replay_estimate.h"
#include "simulator/scaling/batch_plan.h"
#include "simulator/scaling/scaling_table.h"
#include "simulator/scenario/scenario_platform.h"
#include "simulator/scenario/scenario_scaling.h"

namespace ssgd::sim {
namespace {

// Bounds as the scenario keys have them: at most 1048576 nodes of 1024 GPUs,
// and scaling.global_batch at most 2^30.
constexpr std::int64_t kMaxGpus = 1'048'576LL * 1'024;
constexpr std::int64_t kMaxGlobalBatch = 1LL << 30;

void tell(const std::function<void(const std::string&)>& f, const std::string& line) {
  if (f) f(line);
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
  if (trim(text).empty()) {
    throw request_error("--gpus", text, "expected GPU counts such as 1,2,4,8");
  }
  std::vector<std::int64_t> out;
  std::set<std::int64_t> seen;
  for (const std::string_view raw : split_list(text)) {
    const std::string_view item = trim(raw);
    const auto v = parse_positive(item, kMaxGpus);
    if (!v) {
      throw request_error("--gpus", text,
                          fmt::format("item {} ('{}'): expected a GPU count from 1 to {}",
                                      out.size() + 1, bounded(item), kMaxGpus));
    }
    if (!seen.insert(*v).second) {
      throw request_error("--gpus", text, fmt::format("{} GPUs is listed twice", *v));
    }
    out.push_back(*v);
  }
  return out;
}

// The scenario on `gpus` GPUs: whole nodes of the scenario's gpus_per_node,
// or the first GPUs of one node.
Scenario on_gpus(const Scenario& base, std::int64_t gpus, const std::string& list) {
  Scenario s = base;
  const std::int64_t g = base.gpus_per_node;
  if (gpus == 1) {
    // One GPU is the baseline, which runs on the generic platform
    // (single_gpu_scenario): one GPU talks to no one.
    s.nodes = 1;
    s.gpus_per_node = 1;
  } else if (gpus % g == 0) {
    s.nodes = gpus / g;
  } else if (gpus < g) {
    // Part of one node: its first GPUs (a preset's node is cut to them,
    // platform/partial_node.h).
    s.nodes = 1;
    s.gpus_per_node = gpus;
    s.gpus_per_node_given = true;
  } else {
    throw request_error("--gpus", list,
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
  BatchPlan given_plan;           // the scenario as given, at its own GPU count
  BatchPlan one_plan;             // the baseline's
  Scenario baseline;  // one GPU, at the per-GPU batch (weak) or the global batch (strong)
  std::vector<Scenario> scenarios;  // one per count, in order
  ReplayOptions options;
};

SweepPlan plan_sweep(const trace::LayerProfile& profile, const Scenario& base,
                     const ScaleFlags& flags, const ScaleOptions& options) {
  SweepPlan p;
  // The global batch is fixed once, from the scenario as given (its own GPU
  // count), so that every count splits the same one.
  p.given_plan = batch_plan(profile, base);
  p.strong = base.scaling.mode == ScalingMode::kStrong;
  p.global_batch = p.strong ? flags.global_batch.value_or(p.given_plan.global_batch) : 0;
  for (const std::int64_t g : flags.counts) {
    Scenario s = on_gpus(base, g, flags.given.gpus);
    if (p.strong) {
      if (p.global_batch < g) {
        throw request_error("--gpus", flags.given.gpus,
                            fmt::format("{} GPUs: the global batch of {} samples cannot be split "
                                        "over them; every GPU needs at least one",
                                        g, p.global_batch));
      }
      s.scaling.global_batch = p.global_batch;
    }
    p.scenarios.push_back(std::move(s));
  }
  Scenario one_base = base;
  one_base.nodes = one_base.gpus_per_node = 1;
  if (p.strong) one_base.scaling.global_batch = p.global_batch;
  p.one_plan = batch_plan(profile, one_base);
  p.options.single_worker_baseline = false;
  p.options.progress = true;
  p.options.allow_large = options.allow_large;
  if (p.strong) {
    p.options.batch_model = std::make_shared<const BatchTimeModel>(
        scenario_batch_time_model(profile, base, p.one_plan));
  }
  p.baseline = single_gpu_scenario(one_base, p.one_plan);
  return p;
}

// Every count is estimated (simulator/replay/replay_estimate.h) before the
// first runs: one that cannot fit in memory is refused, naming --gpus and the
// count, unless allow_large; a sweep that will take a while says so.
void check_sweep_fits(const trace::LayerProfile& profile, const SweepPlan& p,
                      const ScaleFlags& flags, const ScaleOptions& options) {
  double seconds = 0;
  for (const Scenario& s : p.scenarios) {
    const ReplayEstimate e =
        with_located_errors(s, [&] { return estimate_replay(profile, s, p.options); });
    seconds += e.seconds;
    if (options.allow_large) continue;
    if (const auto why = too_large(e)) {
      throw request_error("--gpus", flags.given.gpus,
                          fmt::format("{} GPUs: {}; leave out counts this large, or give "
                                      "--allow-large to run anyway",
                                      s.workers(), *why));
    }
  }
  if (seconds > 2) {
    tell(options.info, fmt::format("scale: {} GPU counts, about {:.0f} s in all (estimate)",
                                   p.scenarios.size(), seconds));
  }
}

// Replays the baseline and every count. Progress: a line before each count
// once the sweep has run for a while or when the count is large (a big
// flow-model replay can take minutes), and one after each count that took
// more than two seconds.
ScaleResult run_sweep(const trace::LayerProfile& profile, const SweepPlan& p,
                      const ScaleOptions& options, double& seconds) {
  const ReplayResult baseline = replay(profile, p.baseline, p.options);
  ScaleResult out;
  out.single_gpu.per_gpu_batch = out.single_gpu.global_batch = p.one_plan.global_batch;
  out.single_gpu.iteration_time = baseline.iteration_time;
  out.single_gpu.throughput_samples_per_s = baseline.throughput_samples_per_s;
  out.single_gpu.speedup = out.single_gpu.efficiency = 1.0;
  out.gpu_change = baseline.gpu_change;
  out.interference = baseline.interference;
  out.kernel_classes = baseline.kernel_classes;

  const auto t0 = std::chrono::steady_clock::now();
  const auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  constexpr std::int64_t kLargeCount = 1024;
  for (std::size_t i = 0; i < p.scenarios.size(); ++i) {
    const Scenario& s = p.scenarios[i];
    if (since(t0) > 2 || s.workers() >= kLargeCount) {
      tell(options.info, fmt::format("scale: replaying {} GPUs ({} of {})", s.workers(), i + 1,
                                     p.scenarios.size()));
    }
    const auto row_start = std::chrono::steady_clock::now();
    const ReplayResult r = s.workers() == 1 ? baseline : replay(profile, s, p.options);
    if (since(row_start) > 2) {
      tell(options.info,
           fmt::format("scale: {} GPUs took {:.1f} s", s.workers(), since(row_start)));
    }
    const BatchPlan plan = batch_plan(profile, s);
    const ScalingFigures f = scaling_figures(plan, r.iteration_time, baseline.iteration_time);
    ScalingRow row;
    row.gpus = s.workers();
    row.nodes = s.nodes;
    row.gpus_per_node = s.gpus_per_node;
    row.per_gpu_batch = plan.per_gpu_batch;
    row.global_batch = plan.global_batch;
    row.iteration_time = r.iteration_time;
    row.throughput_samples_per_s = r.throughput_samples_per_s;
    row.speedup = f.speedup;
    row.efficiency = f.efficiency;
    // The one-GPU row is the baseline, replayed on the generic platform: its
    // GPU is still the scenario's, whose memory the estimate is held against.
    const std::int64_t gpu_memory =
        s.workers() == 1 ? scenario_platform_spec(s).node.gpu_memory : r.gpu_memory;
    out.rows.push_back({row, r.breakdown.exposed_comm, r.memory, gpu_memory});
    out.sharding = r.sharding;
  }
  seconds = since(t0);
  return out;
}

}  // namespace

ScaleFlags check_scale_request(const ScaleRequest& request) {
  ScaleFlags f;
  f.given = request;
  f.counts = parse_gpu_list(request.gpus);
  if (!request.mode.empty() && request.mode != "weak" && request.mode != "strong") {
    throw request_error(
        "--mode", request.mode,
        fmt::format("unknown scaling mode '{}'; expected weak or strong", request.mode));
  }
  if (!request.global_batch.empty()) {
    f.global_batch = parse_positive(trim(request.global_batch), kMaxGlobalBatch);
    if (!f.global_batch) {
      throw request_error(
          "--global-batch", request.global_batch,
          fmt::format("expected a number of samples from 1 to {}", kMaxGlobalBatch));
    }
  }
  return f;
}

// --mode overrides the scenario's scaling.mode; weak scaling has no global
// batch, so a scenario's is set aside (and said so), which lets one scenario
// file be swept both ways.
Scenario scale_base_scenario(const Scenario& loaded, const ScaleFlags& flags,
                             const ScaleOptions& options) {
  Scenario base = loaded;
  if (flags.given.mode == "weak") {
    if (base.scaling.global_batch) {
      tell(options.info,
           fmt::format("--mode weak: the scenario's scaling.global_batch ({}) is not used",
                       *base.scaling.global_batch));
    }
    base.scaling.mode = ScalingMode::kWeak;
    base.scaling.global_batch.reset();
  } else if (flags.given.mode == "strong") {
    base.scaling.mode = ScalingMode::kStrong;
  }
  if (flags.global_batch && base.scaling.mode != ScalingMode::kStrong) {
    throw request_error(
        "--global-batch", flags.given.global_batch,
        "fixes the global batch of strong scaling, and the mode is weak: use --mode strong");
  }
  return base;
}

ScaleRun run_scale(const SimulationInput& input, const Scenario& base, const ScaleFlags& flags,
                   const ScaleOptions& options) {
  require_profile_input(input);
  const trace::LayerProfile& profile = input.content.profile;
  if (profile.has_comm()) {
    tell(options.warn,
         fmt::format("{}: its measured comm_ns are replayed unchanged at every GPU count above 1, "
                     "though they were measured on one cluster; a policy that merges gradients "
                     "(e.g. --set policy.overlap=mgwfbp) models every collective instead",
                     input.path));
  }
  const SweepPlan plan = plan_sweep(profile, base, flags, options);
  check_sweep_fits(profile, plan, flags, options);
  ScaleRun run;
  run.result = run_sweep(profile, plan, options, run.seconds);
  ScaleResult& result = run.result;
  result.input = input.path;
  result.model = profile.model;
  result.scenario_file = options.scenario_file;
  result.scenario_sets = options.scenario_sets;
  result.mode = base.scaling.mode;
  result.reference_batch = plan.given_plan.reference_batch;
  result.batch_given = plan.given_plan.batch_known;
  if (plan.strong) {
    result.global_batch = plan.global_batch;
    result.compute_model = plan.options.batch_model->description;
  }
  result.overlap = base.overlap_policy;
  result.iterations = base.iterations;
  result.gpus_per_node = base.gpus_per_node;
  return run;
}

}  // namespace ssgd::sim
