#include "simulator/replay/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <map>

#include "common/error.h"
#include "common/logging.h"
#include "simulator/calibration/network_calibration.h"
#include "simulator/replay/closed_form.h"
#include "simulator/replay/job_graph.h"
#include "simulator/network/comm_model.h"
#include "simulator/network/flow_network.h"
#include "simulator/perturb/repeat_stats.h"
#include "simulator/scenario/scenario_platform.h"
#include "simulator/policy/overlap_policy.h"
#include "simulator/scaling/batch_plan.h"
#include "simulator/scenario/scenario_network.h"
#include "simulator/scenario/scenario_scaling.h"

namespace ssgd::sim {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

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


ReplayResult replay_scenario(const trace::LayerProfile& captured, const Scenario& requested,
                             const ReplayOptions& options) {
  auto log = logger("sim");
  // The input's measured update, unless the scenario sets workload.update_time.
  const Scenario given = scenario_for_profile(requested, captured);
  ReplayResult out;
  out.update_time = given.update_time;
  out.workers = given.workers();
  out.iterations = given.iterations;
  // The batch each GPU computes, and what compute and I/O cost at that batch.
  const BatchPlan plan = batch_plan(captured, given);
  std::shared_ptr<const BatchTimeModel> batch_model = options.batch_model;
  if (!batch_model && plan.mode == ScalingMode::kStrong) {
    batch_model =
        std::make_shared<const BatchTimeModel>(scenario_batch_time_model(captured, given, plan));
  }
  const BatchWorkload workload = workload_at_batch(captured, given, plan, batch_model.get());
  const trace::LayerProfile& profile = workload.profile;
  const Scenario& scenario = workload.scenario;
  out.batch_per_gpu = plan.per_gpu_batch;
  out.batch_given = plan.batch_known;
  out.scaling_mode = plan.mode;
  out.global_batch = plan.global_batch;
  out.reference_batch = plan.reference_batch;
  if (batch_model) out.compute_model = batch_model->description;

  const CommModel comm = scenario_comm_model(scenario);
  const Platform* platform = &comm.platform();
  out.network = comm.describe();
  out.network_model = to_string(scenario.network_model);
  out.comm_replayed = profile.has_comm() && out.workers > 1 && !merges_gradients(scenario.overlap);
  if (profile.has_comm() && out.workers > 1 && merges_gradients(scenario.overlap) &&
      options.single_worker_baseline) {
    log->warn("policy {} merges gradients: the input's measured per-layer comm_ns cannot be merged, "
              "so every collective is modelled ({})",
              to_string(scenario.overlap), comm.describe());
  }
  if (profile.has_comm() && out.workers == 1 && options.single_worker_baseline) {
    log->info("one worker: the profile's measured comm_ns are not replayed (nothing to all-reduce)");
  }

  const JobGraph job = build_job_graph(
      profile, scenario, comm,
      options.fold_ranks && (!options.keep_schedule || options.keep_folded_schedule));
  auto graph = job.graph;
  const LayerTimes& times = job.times;
  out.ranks_simulated = job.ranks_built;
  out.build_seconds = job.build_seconds;
  out.tasks = graph->task_count();
  out.edges = graph->edge_count();
  log->debug("DAG: {} tasks, {} edges ({} of {} ranks), built in {:.3f} s", out.tasks, out.edges,
             job.ranks_built, out.workers, out.build_seconds);

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
  // Partitions a prioritized network starts together run as one collective.
  sched_opts.batch_duration = [&comm](const dag::Task& merged) {
    return comm.isolated_time(CollectiveOp::kAllReduce, static_cast<double>(merged.bytes));
  };
  const auto t0 = std::chrono::steady_clock::now();
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

  const auto N = static_cast<std::size_t>(out.iterations);
  const IterationEnds ends = iteration_ends(*graph, *schedule, out.iterations, job.ranks_built);
  // The collectives as they ran: one per comm task, except that the
  // partitions a prioritized network started together ran as one.
  struct Unit {
    dag::TaskId first;
    std::int64_t bytes;
    Duration isolated;  // its time with nothing else on the network
  };
  std::vector<Unit> units;
  std::vector<bool> batched(graph->task_count(), false);
  for (const auto& batch : schedule->batches) {
    Unit u{batch.front(), 0, Duration::zero()};
    for (dag::TaskId t : batch) {
      batched[t] = true;
      u.bytes += graph->task(t).bytes;
    }
    dag::Task merged = graph->task(batch.front());
    merged.bytes = u.bytes;
    u.isolated = sched_opts.batch_duration(merged);
    units.push_back(u);
  }
  for (dag::TaskId t = 0; t < graph->task_count(); ++t) {
    const auto& task = graph->task(t);
    if (task.kind == dag::TaskKind::kComm && !batched[t]) units.push_back({t, task.bytes, task.duration});
  }
  std::sort(units.begin(), units.end(), [](const Unit& a, const Unit& b) { return a.first < b.first; });
  for (const Unit& u : units) {
    if (graph->task(u.first).iteration != 0) continue;
    out.comm_per_iteration += u.isolated;
    ++out.collectives_per_iteration;
  }
  // The collectives of the last iteration, as nccl-tests would report them.
  // Analytical link traffic: the bytes of each algorithm's collectives
  // together, spread by its one-byte link load once at the end.
  std::map<CollectiveAlgorithm, double> bytes_by_algorithm;
  for (const Unit& u : units) {
    const dag::TaskId t = u.first;
    const auto& task = graph->task(t);
    const double bytes = static_cast<double>(u.bytes);
    const CollectiveAlgorithm algorithm = comm.algorithm_for(CollectiveOp::kAllReduce, bytes);
    if (!flow && task.duration_modelled && bytes > 0) bytes_by_algorithm[algorithm] += bytes;
    if (task.iteration != out.iterations - 1) continue;
    CollectiveRecord rec;
    rec.group = task.group;
    rec.bytes = u.bytes;
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
  for (auto e : ends.end) {
    out.iteration_times.push_back(e - prev);
    prev = e;
  }
  out.iteration_time = steady_iteration_time(ends.end);
  out.throughput_samples_per_s =
      out.iteration_time > Duration::zero()
          ? static_cast<double>(out.global_batch) /
                (static_cast<double>(out.iteration_time.ns()) * 1e-9)
          : 0.0;

  // Steady state: the first iteration may differ (nothing overlaps it), so it
  // is left out whenever there is more than one.
  const std::size_t first = N > 1 ? 1 : 0;
  const auto steady = static_cast<std::int64_t>(N - first);
  std::vector<Time> from(static_cast<std::size_t>(job.ranks_built), Time::zero());
  if (first == 1) from = ends.update_end[0];
  out.breakdown =
      dag::average_breakdown(*graph, schedule->view(), from, ends.update_end[N - 1], steady);
  out.critical_path = dag::scheduled_critical_path(*graph, schedule->view());

  // The closed forms assume identical ranks: with stragglers, imbalance or
  // jitter there is none to compare with.
  out.ranks_differ = job.ranks_differ;
  if (!job.ranks_differ) out.closed_form = scenario_closed_form(scenario, times);

  if (scenario.perturb.repeats > 1) {
    // Repeat k draws its jitter from seed + k; without jitter every repeat
    // is this run again, so none is simulated.
    std::vector<Duration> runs{out.iteration_time};
    ReplayOptions repeat_opts;
    repeat_opts.single_worker_baseline = false;
    repeat_opts.fold_ranks = options.fold_ranks;
    repeat_opts.batch_model = batch_model;
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

  if (options.single_worker_baseline) {
    // Weak: one GPU at the same batch; strong: one GPU computing the whole
    // global batch. One rank, at most 3 iterations: cheap next to the run.
    ReplayOptions base_opts;
    base_opts.single_worker_baseline = false;
    base_opts.batch_model = batch_model;
    const ReplayResult base = replay(captured, single_gpu_scenario(given, plan), base_opts);
    out.single_worker_iteration_time = base.iteration_time;
    out.single_worker_batch = base.global_batch;
    out.single_worker_throughput_samples_per_s = base.throughput_samples_per_s;
    const ScalingFigures figures = scaling_figures(plan, out.iteration_time, base.iteration_time);
    out.speedup = figures.speedup;
    out.scaling_efficiency = figures.efficiency;
  }
  if (options.keep_schedule) {
    out.graph = std::move(graph);
    out.schedule = std::move(schedule);
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

}  // namespace ssgd::sim
