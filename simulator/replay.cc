#include "simulator/replay.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "common/logging.h"
#include "dag/profile_dag_builder.h"
#include "simulator/closed_form.h"
#include "simulator/network/network_model.h"
#include "simulator/policy/overlap_policy.h"

namespace ssgd::sim {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Gives modelled collectives their time from the network model.
void assign_comm_times(dag::TaskGraph& graph, const NetworkModel& network) {
  for (dag::TaskId t = 0; t < graph.task_count(); ++t) {
    auto& task = graph.mutable_task(t);
    if (task.kind == dag::TaskKind::kComm && task.duration_modelled) {
      task.duration = network.allreduce_time(task.bytes);
    }
  }
}

// Refuses, with the numbers, runs whose DAG would not fit in this machine's
// memory or whose simulated time would overflow int64 nanoseconds.
void check_size(const dag::DagShape& shape, std::size_t layers, const LayerTimes& times) {
  const double tasks = dag::profile_dag_task_count(layers, shape);
  // About 120 bytes a task: the task, its edges, and its start, end and release records.
  const double bytes = tasks * 120.0;
  const double memory = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) *
                        static_cast<double>(::sysconf(_SC_PAGESIZE));
  if (memory > 0 && bytes > 0.8 * memory) {
    throw std::invalid_argument(fmt::format(
        "this run needs about {:.1f} GB for {:.3g} tasks ({} workers x {} iterations x {} tasks), "
        "more than 80% of this machine's {:.1f} GB; use fewer iterations or workers",
        bytes / 1e9, tasks, shape.workers, shape.iterations, 2 * layers + 3, memory / 1e9));
  }
  // An upper bound of one iteration: everything one after another.
  double ns = static_cast<double>((times.io + times.h2d + times.update).ns());
  for (std::size_t l = 0; l < layers; ++l) {
    ns += static_cast<double>(times.forward[l].ns()) + static_cast<double>(times.backward[l].ns()) +
          static_cast<double>(times.comm[l].ns());
  }
  if (ns * static_cast<double>(shape.iterations) > 4e18) {
    throw std::invalid_argument(fmt::format(
        "{} iterations of up to {:.3g} s each would overflow the simulated clock (int64 "
        "nanoseconds, about 292 years); check the profile's times and the scenario",
        shape.iterations, ns * 1e-9));
  }
}

}  // namespace

ReplayResult replay(const trace::LayerProfile& profile, const Scenario& scenario,
                    const ReplayOptions& options) {
  auto log = logger("sim");
  ReplayResult out;
  out.workers = scenario.workers();
  out.iterations = scenario.iterations;
  if (scenario.batch_per_gpu) {
    out.batch_per_gpu = *scenario.batch_per_gpu;
    out.batch_given = true;
  } else if (profile.batch_per_gpu) {
    out.batch_per_gpu = *profile.batch_per_gpu;
    out.batch_given = true;
  } else {
    out.batch_per_gpu = 1;
  }

  const NetworkModel network(scenario);
  out.network = network.describe();
  const auto plan = make_comm_plan(scenario.overlap, profile);
  out.comm_replayed = profile.has_comm() && out.workers > 1;
  if (profile.has_comm() && out.workers == 1 && options.single_worker_baseline) {
    log->info("one worker: the profile's measured comm_ns are not replayed (nothing to all-reduce)");
  }

  const dag::DagShape shape{scenario.workers(), scenario.iterations, scenario.io_time,
                            scenario.h2d_time, scenario.update_time};
  const LayerTimes times = layer_times(profile, scenario, network);
  check_size(shape, profile.layers.size(), times);
  auto t0 = std::chrono::steady_clock::now();
  auto graph = std::make_shared<dag::TaskGraph>(dag::build_profile_dag(profile, shape, plan));
  assign_comm_times(*graph, network);
  out.build_seconds = seconds_since(t0);
  out.tasks = graph->task_count();
  out.edges = graph->edge_count();
  log->debug("DAG: {} tasks, {} edges, built in {:.3f} s", out.tasks, out.edges, out.build_seconds);

  ScheduleOptions sched_opts;
  if (options.progress && out.tasks > (1u << 21)) {
    // At most one line every two seconds.
    auto last = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
    sched_opts.progress = [log, last](double f) {
      const auto now = std::chrono::steady_clock::now();
      if (now - *last < std::chrono::seconds(2)) return;
      *last = now;
      log->info("simulating: {:.0f}% of tasks done", 100 * f);
    };
  }
  t0 = std::chrono::steady_clock::now();
  auto schedule = std::make_shared<Schedule>(run_schedule(*graph, sched_opts));
  out.simulate_seconds = seconds_since(t0);
  out.events = schedule->events;

  // Iteration ends: the last update of each iteration, over all ranks.
  const auto P = static_cast<std::size_t>(out.workers);
  const auto N = static_cast<std::size_t>(out.iterations);
  std::vector<Time> iter_end(N, Time::zero());
  std::vector<std::vector<Time>> update_end(N, std::vector<Time>(P));
  for (dag::TaskId t = 0; t < graph->task_count(); ++t) {
    const auto& task = graph->task(t);
    if (task.kind == dag::TaskKind::kUpdate) {
      const auto i = static_cast<std::size_t>(task.iteration);
      update_end[i][static_cast<std::size_t>(task.rank)] = schedule->end[t];
      iter_end[i] = max(iter_end[i], schedule->end[t]);
    } else if (task.kind == dag::TaskKind::kComm && task.iteration == 0) {
      out.comm_per_iteration += task.duration;
      ++out.collectives_per_iteration;
    }
  }
  Time prev = Time::zero();
  for (auto e : iter_end) {
    out.iteration_times.push_back(e - prev);
    prev = e;
  }
  // Steady state: the first iteration may differ (nothing overlaps it), so it
  // is left out whenever there is more than one.
  const std::size_t first = N > 1 ? 1 : 0;
  const auto steady = static_cast<std::int64_t>(N - first);
  const Duration span = iter_end[N - 1] - (first == 0 ? Time::zero() : iter_end[first - 1]);
  out.iteration_time = Duration((span.ns() + steady / 2) / steady);
  out.throughput_samples_per_s =
      out.iteration_time > Duration::zero()
          ? static_cast<double>(out.workers * out.batch_per_gpu) /
                (static_cast<double>(out.iteration_time.ns()) * 1e-9)
          : 0.0;

  std::vector<Time> from(P, Time::zero());
  if (first == 1) from = update_end[0];
  out.breakdown =
      dag::average_breakdown(*graph, schedule->view(), from, update_end[N - 1], steady);
  out.critical_path = dag::scheduled_critical_path(*graph, schedule->view());

  if (scenario.overlap == OverlapPolicy::kBsp || scenario.overlap == OverlapPolicy::kWfbp) {
    out.closed_form = closed_form_iteration_time(scenario.overlap, times);
  }

  if (options.single_worker_baseline) {
    Scenario one = scenario;
    one.nodes = 1;
    one.gpus_per_node = 1;
    one.iterations = std::min<std::int64_t>(scenario.iterations, 3);
    ReplayOptions base_opts;
    base_opts.single_worker_baseline = false;
    const ReplayResult base = replay(profile, one, base_opts);
    out.single_worker_iteration_time = base.iteration_time;
    const double t1 = static_cast<double>(base.iteration_time.ns());
    const double tp = static_cast<double>(out.iteration_time.ns());
    out.scaling_efficiency = tp > 0 ? t1 / tp : 0;
    out.speedup = out.scaling_efficiency * static_cast<double>(out.workers);
  }
  if (options.keep_schedule) {
    out.graph = std::move(graph);
    out.schedule = std::move(schedule);
  }
  return out;
}

}  // namespace ssgd::sim
