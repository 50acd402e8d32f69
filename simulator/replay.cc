#include "simulator/replay.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <map>

#include "common/error.h"
#include "common/logging.h"
#include "dag/profile_dag_builder.h"
#include "simulator/calibration/network_calibration.h"
#include "simulator/closed_form.h"
#include "simulator/network/comm_model.h"
#include "simulator/network/flow_network.h"
#include "simulator/platform/scenario_platform.h"
#include "simulator/policy/overlap_policy.h"

namespace ssgd::sim {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Gives modelled collectives their time with nothing else on the network
// (the flow model's executor replaces it with the time they really take).
void assign_comm_times(dag::TaskGraph& graph, const CommModel& comm) {
  for (dag::TaskId t = 0; t < graph.task_count(); ++t) {
    auto& task = graph.mutable_task(t);
    if (task.kind == dag::TaskKind::kComm && task.duration_modelled) {
      task.duration = comm.isolated_time(CollectiveOp::kAllReduce, static_cast<double>(task.bytes));
    }
  }
}

// Runs modelled gradient collectives on the flow-level network.
class FlowCommExecutor : public TaskExecutor {
 public:
  FlowCommExecutor(CollectiveRunner& runner, const CommModel& comm) : runner_(runner), comm_(comm) {}
  [[nodiscard]] bool handles(const dag::Task& task) const override {
    return task.kind == dag::TaskKind::kComm && task.duration_modelled;
  }
  void start(dag::TaskId, const dag::Task& task, std::function<void()> finished) override {
    runner_.run(comm_.call(CollectiveOp::kAllReduce, static_cast<double>(task.bytes)),
                std::move(finished));
  }

 private:
  CollectiveRunner& runner_;
  const CommModel& comm_;
};

// Bytes each link carries in one collective of one byte, per algorithm: the
// decomposition's bytes scale with the message size, so one routing pass per
// algorithm gives every collective's traffic.
std::vector<double> unit_link_load(const CommModel& comm, CollectiveAlgorithm algorithm) {
  const Platform& platform = comm.platform();
  std::vector<double> load(platform.links().size(), 0.0);
  const auto steps = decompose(CollectiveOp::kAllReduce, algorithm, comm.shape(), 1.0);
  RouteCache routes(platform);
  for (const auto& step : steps) {
    for (const auto& t : step.transfers) {
      const Route& r = routes.get(comm.endpoints()[static_cast<std::size_t>(t.src)],
                                  comm.endpoints()[static_cast<std::size_t>(t.dst)]);
      for (auto l : r.links) load[l] += t.bytes * static_cast<double>(step.repeat);
    }
  }
  return load;
}

void summarise_links(const Platform& platform, const std::vector<double>& bytes, Duration span,
                     ReplayResult& out) {
  const double seconds = std::max(1e-9, static_cast<double>(span.ns()) * 1e-9);
  std::vector<LinkRecord> records;
  std::array<LinkKindSummary, kLinkKindCount> kinds{};
  for (LinkId l = 0; l < bytes.size(); ++l) {
    if (!(bytes[l] > 0)) continue;
    const auto& link = platform.links()[l];
    const double u = bytes[l] / (link.bandwidth_bytes_per_s * seconds);
    auto& k = kinds[static_cast<std::size_t>(link.kind)];
    k.kind = to_string(link.kind);
    ++k.links;
    k.bytes += bytes[l];
    k.mean_utilisation += u;
    k.max_utilisation = std::max(k.max_utilisation, u);
    records.push_back({platform.link_name(l), to_string(link.kind), link.bandwidth_bytes_per_s,
                       bytes[l], u});
  }
  for (auto& k : kinds) {
    if (k.links == 0) continue;
    k.mean_utilisation /= static_cast<double>(k.links);
    out.link_kinds.push_back(k);
  }
  std::stable_sort(records.begin(), records.end(), [](const LinkRecord& a, const LinkRecord& b) {
    return a.utilisation > b.utilisation;
  });
  if (records.size() > 10) records.resize(10);
  out.busiest_links = std::move(records);
}

// Links inside the nodes that hold ranks 0..ranks-1, and their NIC links.
std::vector<bool> tracked_links(const Platform& platform, std::int64_t ranks) {
  const std::int64_t g = platform.gpus_per_node();
  const std::int64_t nodes = ranks <= 0 ? platform.nodes() : std::min(platform.nodes(), (ranks + g - 1) / g);
  std::vector<bool> keep(platform.links().size(), false);
  for (LinkId l = 0; l < keep.size(); ++l) {
    const auto& link = platform.links()[l];
    const auto a = platform.node_of(link.from), b = platform.node_of(link.to);
    keep[l] = (a >= 0 && a < nodes) || (b >= 0 && b < nodes);
  }
  return keep;
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

  const CommModel comm = scenario_comm_model(scenario);
  const Platform* platform = &comm.platform();
  out.network = comm.describe();
  out.network_model = to_string(scenario.network_model);
  const auto plan = make_comm_plan(scenario.overlap, profile);
  out.comm_replayed = profile.has_comm() && out.workers > 1;
  if (profile.has_comm() && out.workers == 1 && options.single_worker_baseline) {
    log->info("one worker: the profile's measured comm_ns are not replayed (nothing to all-reduce)");
  }

  const dag::DagShape shape{scenario.workers(), scenario.iterations, scenario.io_time,
                            scenario.h2d_time, scenario.update_time};
  const LayerTimes times = layer_times(profile, scenario, comm);
  check_size(shape, profile.layers.size(), times);
  auto t0 = std::chrono::steady_clock::now();
  auto graph = std::make_shared<dag::TaskGraph>(dag::build_profile_dag(profile, shape, plan));
  assign_comm_times(*graph, comm);
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
  Engine engine;
  std::unique_ptr<FlowNetwork> flows;
  std::unique_ptr<CollectiveRunner> runner;
  std::unique_ptr<FlowCommExecutor> executor;
  const bool flow = scenario.network_model == NetworkModelKind::kFlow && out.workers > 1;
  const std::vector<bool> tracked =
      options.keep_schedule ? tracked_links(*platform, options.link_track_ranks) : std::vector<bool>{};
  if (flow) {
    flows = std::make_unique<FlowNetwork>(engine, platform->link_capacities());
    if (options.keep_schedule) flows->record_activity(tracked);
    runner = std::make_unique<CollectiveRunner>(engine, *flows, *platform);
    executor = std::make_unique<FlowCommExecutor>(*runner, comm);
    sched_opts.executor = executor.get();
  }
  auto schedule = std::make_shared<Schedule>(
      std::move(run_schedules(engine, {graph.get()}, {sched_opts}).front()));
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
  // The collectives of the last iteration, as nccl-tests would report them.
  // Analytical link traffic: the bytes of each algorithm's collectives
  // together, spread by its one-byte link load once at the end.
  std::map<CollectiveAlgorithm, double> bytes_by_algorithm;
  for (dag::TaskId t = 0; t < graph->task_count(); ++t) {
    const auto& task = graph->task(t);
    if (task.kind != dag::TaskKind::kComm) continue;
    const double bytes = static_cast<double>(task.bytes);
    const CollectiveAlgorithm algorithm = comm.algorithm_for(CollectiveOp::kAllReduce, bytes);
    if (!flow && task.duration_modelled && bytes > 0) bytes_by_algorithm[algorithm] += bytes;
    if (task.iteration != out.iterations - 1) continue;
    CollectiveRecord rec;
    rec.group = task.group;
    rec.bytes = task.bytes;
    rec.algorithm = task.duration_modelled ? to_string(algorithm) : "measured";
    rec.time = schedule->end[t] - schedule->start[t];
    rec.replayed = !task.duration_modelled;
    if (rec.time > Duration::zero()) {
      rec.algbw_bytes_per_s = bytes / (static_cast<double>(rec.time.ns()) * 1e-9);
      rec.busbw_bytes_per_s =
          rec.algbw_bytes_per_s * bus_bandwidth_factor(CollectiveOp::kAllReduce, out.workers);
    }
    out.collectives.push_back(std::move(rec));
  }
  std::vector<double> link_bytes;
  // Per algorithm, the tracked links its collectives send over (analytical).
  std::map<CollectiveAlgorithm, std::vector<LinkId>> shown_links;
  if (flow) {
    flows->settle();
    link_bytes.reserve(platform->links().size());
    for (const auto& u : flows->usage()) link_bytes.push_back(u.bytes);
  } else {
    link_bytes.assign(platform->links().size(), 0.0);
    for (const auto& [algorithm, total] : bytes_by_algorithm) {
      const std::vector<double> load = unit_link_load(comm, algorithm);
      auto& shown = shown_links[algorithm];
      for (LinkId l = 0; l < load.size(); ++l) {
        link_bytes[l] += load[l] * total;
        if (!tracked.empty() && tracked[l] && load[l] > 0) shown.push_back(l);
      }
    }
  }
  summarise_links(*platform, link_bytes, schedule->makespan - Time::zero(), out);
  if (options.keep_schedule) {
    std::map<LinkId, std::vector<std::pair<Time, Time>>> busy;
    if (flow) {
      for (const auto& a : flows->activity()) busy[a.link].push_back({a.start, a.end});
    } else {
      // The analytical model has no per-link timing: a link is shown busy for
      // the whole of every collective that sends over it.
      for (dag::TaskId t = 0; t < graph->task_count(); ++t) {
        const auto& task = graph->task(t);
        if (task.kind != dag::TaskKind::kComm || !task.duration_modelled || task.bytes == 0) continue;
        const auto algorithm = comm.algorithm_for(CollectiveOp::kAllReduce, static_cast<double>(task.bytes));
        for (LinkId l : shown_links[algorithm]) busy[l].push_back({schedule->start[t], schedule->end[t]});
      }
    }
    for (auto& [l, intervals] : busy) {
      std::sort(intervals.begin(), intervals.end());
      out.link_tracks.push_back({platform->link_name(l), std::move(intervals)});
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
    // One worker communicates with no one: the platform does not matter.
    one.platform = PlatformChoice{};
    one.intra_node_given = one.inter_node_given = false;
    one.gpus_per_node_given = false;
    one.calibration.reset();
    one.algorithm = CollectiveAlgorithm::kAuto;
    one.network_model = NetworkModelKind::kAnalytical;
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
