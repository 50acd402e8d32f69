#include "simulator/replay/replay.h"

#include <cstdint>
#include <new>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "common/logging.h"
#include "common/units.h"
#include "common/work_context.h"

#include "simulator/perturb/repeat_stats.h"
#include "simulator/replay/replay_estimate.h"
#include "simulator/replay/replay_stages.h"
#include "simulator/scenario/scenario_scaling.h"

namespace ssgd::sim {
namespace {

// Repeat k draws its jitter from seed + k; without jitter every repeat is
// this run again, so none is simulated.
void add_repeats(const trace::LayerProfile& captured, const replay_stages::Plan& plan,
                 const ReplayOptions& options, ReplayResult& out) {
  const Scenario& scenario = plan.workload.scenario;
  const Scenario& given = plan.given;
  std::vector<Duration> runs{out.iteration_time};
  ReplayOptions repeat_opts;
  repeat_opts.single_worker_baseline = false;
  repeat_opts.fold_ranks = options.fold_ranks;
  repeat_opts.allow_large = options.allow_large;
  repeat_opts.batch_model = plan.batch_model;
  for (std::int64_t k = 1; k < scenario.perturb.repeats; ++k) {
    if (scenario.perturb.jitter.kind == JitterKind::kNone) {
      runs.push_back(out.iteration_time);
      continue;
    }
    Scenario again = given;
    again.perturb.seed = given.perturb.seed + static_cast<std::uint64_t>(k);
    again.perturb.repeats = 1;
    runs.push_back(replay(captured, again, repeat_opts).iteration_time);
  }
  out.repeat_iteration_times = runs;
  out.repeats = repeat_stats(runs);
}

// Weak: one GPU at the same batch; strong: one GPU computing the whole global
// batch. One rank, at most 3 iterations: cheap next to the run.
void add_single_worker_baseline(const trace::LayerProfile& captured,
                                const replay_stages::Plan& plan, const ReplayOptions& options,
                                ReplayResult& out) {
  ReplayOptions base_opts;
  base_opts.single_worker_baseline = false;
  base_opts.allow_large = options.allow_large;
  base_opts.batch_model = plan.batch_model;
  const ReplayResult base =
      replay(captured, single_gpu_scenario(plan.given, plan.batch), base_opts);
  out.single_worker_iteration_time = base.iteration_time;
  out.single_worker_batch = base.global_batch;
  out.single_worker_throughput_samples_per_s = base.throughput_samples_per_s;
  const ScalingFigures figures =
      scaling_figures(plan.batch, out.iteration_time, base.iteration_time);
  out.speedup = figures.speedup;
  out.scaling_efficiency = figures.efficiency;
}

// Nothing is built that cannot fit (replay_estimate.h); what the estimate
// says of a long run, said before it.
void log_estimate(const ReplayEstimate& estimate, const ReplayOptions& options) {
  logger("sim")->debug("estimate: {} tasks, {} events, {} nodes, {} workers: {:.0f} bytes, {:.2f} s",
                       estimate.tasks, estimate.events, estimate.nodes, estimate.workers,
                       estimate.bytes, estimate.seconds);
  if (options.progress && estimate.seconds > 2) {
    logger("sim")->info("replay: about {:.3g} tasks, {:.3g} events, {}; about {:.0f} s",
                        estimate.tasks, estimate.events, bytes_text(estimate.bytes),
                        estimate.seconds);
  }
}

// Out of memory all the same: said as the refusal would have said it, with
// the input the stage was working on (common/work_context.h), at the key
// that drives the size, or at the input where it drives it (a graph's).
[[noreturn]] void throw_out_of_memory(const ReplayEstimate& estimate, const char* what,
                                      const std::string& file) {
  const std::string stage = work_context_at_failure();
  const std::string message =
      fmt::format("out of memory while {} ({}; estimate: about {}, {} available)",
                  stage.empty() ? std::string(what) : stage, estimate.shape,
                  bytes_text(estimate.bytes), format_bytes(available_memory_bytes()));
  if (estimate.key.empty()) {
    throw InputError({file, std::nullopt, std::nullopt, ""}, message + "; its size drives it");
  }
  throw ParameterError(estimate.key, fmt::format("{}; {} drives it", message, estimate.key));
}

constexpr const char* kBuilding = "building the platform and the task graph";
constexpr const char* kSimulating = "simulating the task graph";

// The stages in order (replay_stages.h), then the experiment around them.
ReplayResult replay_scenario(const trace::LayerProfile& captured, const Scenario& requested,
                             const ReplayOptions& options) {
  namespace stages = replay_stages;
  ReplayResult out;
  const stages::Plan plan = stages::plan(captured, requested, options, out);
  const Scenario& scenario = plan.workload.scenario;
  const ReplayEstimate estimate = estimate_replay(plan.workload.profile, scenario, options);
  check_fits(estimate, options.allow_large);
  log_estimate(estimate, options);
  std::optional<stages::Build> built;
  try {
    const WorkContext stage(kBuilding);
    built.emplace(stages::build(plan, options, out));
  } catch (const std::bad_alloc&) {
    throw_out_of_memory(estimate, kBuilding, {});
  }
  std::optional<stages::Run> run;
  run.emplace();
  try {
    const WorkContext stage(kSimulating);
    if (!stages::run(*built, options, *run, out)) {
      // Refused as a list schedule, its source used up: the job's graph
      // made again (the comm model and the rest kept), run as events.
      run.reset();
      stages::rebuild_job(*built, plan, options);
      run.emplace();
      stages::run(*built, options, *run, out);
    }
    stages::measure(*built, scenario, *run, options, out);
  } catch (const std::bad_alloc&) {
    throw_out_of_memory(estimate, kSimulating, {});
  }
  const WorkContext more("replaying the repeats and the one-GPU baseline");
  if (scenario.perturb.repeats > 1) add_repeats(captured, plan, options, out);
  if (options.single_worker_baseline) add_single_worker_baseline(captured, plan, options, out);
  if (options.keep_schedule) {
    out.task_graph = std::move(built->job.graph);
    out.schedule = std::move(run->schedule);
  }
  return out;
}

}  // namespace

ReplayResult replay(const trace::LayerProfile& captured, const Scenario& requested,
                    const ReplayOptions& options) {
  // A model's complaint about a key's value names where the key was set.
  return with_located_errors(requested,
                             [&] { return replay_scenario(captured, requested, options); });
}

GraphReplayResult replay_graph(const dag::ExecutionGraph& graph, const Scenario& requested,
                               const ReplayOptions& options, const std::string& file) {
  namespace stages = replay_stages;
  GraphReplayResult out;
  const stages::GraphPlan plan{graph, file};
  stages::plan_graph(plan, requested, out);
  // The graph's size comes from the input, not from a key: refused naming it.
  const ReplayEstimate estimate = estimate_graph_replay(graph, out.scenario);
  check_fits(estimate, options.allow_large, file);
  log_estimate(estimate, options);
  std::optional<stages::Build> built;
  try {
    const WorkContext stage(kBuilding);
    built.emplace(stages::build_graph(plan, out));
  } catch (const std::bad_alloc&) {
    throw_out_of_memory(estimate, kBuilding, file);
  }
  stages::Run run;
  try {
    const WorkContext stage(kSimulating);
    // No source to refuse as a list schedule: the graph is built whole.
    stages::run(*built, options, run, out.run);
    stages::measure_graph(*built, run, options, out);
  } catch (const std::bad_alloc&) {
    throw_out_of_memory(estimate, kSimulating, file);
  }
  if (options.keep_schedule) {
    out.run.task_graph = std::move(built->job.graph);
    out.run.schedule = std::move(run.schedule);
  }
  return out;
}

}  // namespace ssgd::sim
