// The measure stage of a replay (replay_stages.h): what the schedule says
// about the collectives, the links and the iterations.
#include <algorithm>
#include <array>
#include <map>
#include <utility>

#include "common/logging.h"
#include "dag/critical_path.h"
#include "dag/time_breakdown.h"
#include "simulator/replay/closed_form.h"
#include "simulator/replay/gradient_buffers.h"
#include "simulator/replay/replay_stages.h"
#include "traces/proto/trace_events.pb.h"
#include "traces/trace_collectives.h"

namespace ssgd::sim::replay_stages {
namespace {

void summarise_links(const Platform& platform, const std::vector<double>& bytes, Duration span,
                     ReplayResult& out) {
  const double seconds = std::max(1e-9, static_cast<double>(span.ns()) * 1e-9);
  std::vector<LinkRecord> records;
  std::array<LinkKindSummary, kLinkKindCount> kinds{};
  const bool pcie_free = platform.spec().node.pcie_free;
  for (LinkId l = 0; l < bytes.size(); ++l) {
    if (!(bytes[l] > 0)) continue;
    const auto& link = platform.links()[l];
    // A hop that stands for no link (the generic platform's PCIe): no figures.
    if (pcie_free && link.kind == LinkKind::kPcie) continue;
    const double u = bytes[l] / (link.bandwidth_bytes_per_s * seconds);
    auto& k = kinds[static_cast<std::size_t>(link.kind)];
    k.kind = to_string(link.kind);
    ++k.links;
    k.bytes += bytes[l];
    k.mean_utilisation += u;
    k.max_utilisation = std::max(k.max_utilisation, u);
    records.push_back(
        {platform.link_name(l), to_string(link.kind), link.bandwidth_bytes_per_s, bytes[l], u});
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

// The collectives as they ran, by task id: read off the whole schedule, or
// as observed while a windowed graph ran.
std::vector<CommRun> comm_runs(const Build& build, const Run& run) {
  if (run.observer) return run.observer->collectives();
  const dag::TaskGraph& graph = *build.job.graph;
  std::vector<CommRun> out;
  for (dag::TaskId t = 0; t < graph.task_count(); ++t) {
    const auto& task = graph.task(t);
    if (task.kind == dag::TaskKind::kComm)
      out.push_back({t, task, run.schedule->start[t], run.schedule->end[t]});
  }
  return out;
}

const std::vector<std::vector<dag::TaskId>>& batches_of(const Run& run) {
  return run.windowed ? run.windowed->batches : run.schedule->batches;
}

// One collective as it ran: one per comm task, except that the partitions a
// prioritized network started together ran as one.
struct Unit {
  std::size_t first;  // in the comm runs
  std::int64_t bytes;
  Duration isolated;  // its time with nothing else on the network
};

std::vector<Unit> collective_units(const std::vector<CommRun>& comm, const Run& run) {
  const auto index = [&comm](dag::TaskId t) {
    return static_cast<std::size_t>(
        std::lower_bound(comm.begin(), comm.end(), t,
                         [](const CommRun& c, dag::TaskId id) { return c.id < id; }) -
        comm.begin());
  };
  std::vector<Unit> units;
  std::vector<bool> batched(comm.size(), false);
  for (const auto& batch : batches_of(run)) {
    Unit u{index(batch.front()), 0, Duration::zero()};
    for (dag::TaskId t : batch) {
      const std::size_t k = index(t);
      batched[k] = true;
      u.bytes += comm[k].task.bytes;
    }
    dag::Task merged = comm[u.first].task;
    merged.bytes = u.bytes;
    u.isolated = run.options.batch_duration(merged);
    units.push_back(u);
  }
  for (std::size_t k = 0; k < comm.size(); ++k) {
    if (!batched[k]) units.push_back({k, comm[k].task.bytes, comm[k].task.duration});
  }
  std::sort(units.begin(), units.end(),
            [](const Unit& a, const Unit& b) { return a.first < b.first; });
  return units;
}

// What a modelled collective runs: a replicated job's all-reduce of its
// bytes, a sharded job's collective (sharded_target), or an execution
// graph's call. Keyed by the bytes and by the sharded collective's index,
// -1 for a replicated all-reduce, or -2 - op for a graph's call of that op
// (its trace Collective::Op).
using SizeKey = std::pair<std::int32_t, double>;
SizeKey size_key(const Build& build, const dag::Task& task, double bytes) {
  if (build.job.execution) {
    return {-2 - build.job.execution->comm[static_cast<std::size_t>(task.group)].op, bytes};
  }
  return {build.job.sharded ? task.group : -1, bytes};
}
// A sharded collective's analytical link traffic, on its own communicator's
// links (the first shard group's, for HSDP's shard groups).
void add_target_link_bytes(const ShardedTarget& t, std::vector<double>& into, double times) {
  if (t.link_share != nullptr) {
    const double carried = t.bytes * times * static_cast<double>(t.calls);
    for (std::size_t l = 0; l < into.size(); ++l) into[l] += (*t.link_share)[l] * carried;
    return;
  }
  if (t.op == CollectiveOp::kReduce && t.calls > 1 && !t.comm->nccl_runs(t.op)) {
    // One reduce to each rank in turn (a ring reduce-scatter, then a gather to
    // the root): the gathers of all the roots together send every rank's
    // chunk to every other rank once, an all-to-all's traffic; counted so,
    // the roots' ports share the gathers as they do, not rank 0's alone.
    t.comm->add_link_bytes(CollectiveOp::kReduceScatter, t.bytes, into,
                           times * static_cast<double>(t.calls));
    t.comm->add_link_bytes(CollectiveOp::kAllToAll, t.bytes, into, times);
    return;
  }
  t.comm->add_link_bytes(t.op, t.bytes, into, times * static_cast<double>(t.calls));
}

// The analytical link traffic of `times` such collectives. An HSDP shard
// group's collective runs in every group at once: the first group's traffic
// (its communicator's), and the same on each other group's nodes. Returns
// the bytes no other group's link could be found for (leaf uplinks of groups
// that are not whole leaves), left out.
double add_key_link_bytes(const Build& build, const SizeKey& key, std::vector<double>& into,
                          double times) {
  if (key.first <= -2) {
    const auto op = trace::modelled_op(static_cast<trace::v1::Collective::Op>(-2 - key.first));
    if (op) build.comm.add_link_bytes(*op, key.second, into, times);
    return 0;
  }
  if (key.first < 0) {
    build.comm.add_link_bytes(CollectiveOp::kAllReduce, key.second, into, times);
    return 0;
  }
  const ShardedTarget t = sharded_target(build.job, build.comm, key.first);
  const JobGraph& job = build.job;
  const std::int64_t groups = job.shard_groups();
  if (job.collectives[static_cast<std::size_t>(key.first)].scope != dag::CommScope::kShardGroup ||
      groups < 2) {
    add_target_link_bytes(t, into, times);
    return 0;
  }
  std::vector<double> first(into.size(), 0.0);
  add_target_link_bytes(t, first, times);
  const Platform& platform = build.comm.platform();
  const std::int64_t group_nodes = job.shard_ranks / platform.gpus_per_node();
  double unplaced = 0;
  for (LinkId l = 0; l < first.size(); ++l) {
    if (first[l] == 0) continue;
    into[l] += first[l];
    for (std::int64_t g = 1; g < groups; ++g) {
      if (const auto s = platform.shifted_link(l, g * group_nodes)) {
        into[*s] += first[l];
      } else {
        unplaced += first[l];
      }
    }
  }
  return unplaced;
}

// The collectives of the first iteration (count and isolated time) and of the
// last, as nccl-tests would report them. Returns how many modelled
// collectives of each kind and size ran, for the analytical link traffic.
std::map<SizeKey, double> measure_collectives(const Build& build, const std::vector<CommRun>& comm,
                                              const Run& run, bool flow, ReplayResult& out) {
  const std::vector<Unit> units = collective_units(comm, run);
  for (const Unit& u : units) {
    if (comm[u.first].task.iteration != 0) continue;
    out.comm_per_iteration += u.isolated;
    ++out.collectives_per_iteration;
  }
  std::map<SizeKey, double> sizes;
  for (const Unit& u : units) {
    const CommRun& c = comm[u.first];
    const auto& task = c.task;
    const double bytes = static_cast<double>(u.bytes);
    if (!flow && task.duration_modelled && bytes > 0) sizes[size_key(build, task, bytes)] += 1;
    if (task.iteration != out.iterations - 1) continue;
    CollectiveRecord rec;
    rec.group = task.group;
    rec.bytes = u.bytes;
    ShardedTarget t{&build.comm, CollectiveOp::kAllReduce, bytes, out.workers};
    if (build.job.sharded) {
      const dag::CommScope scope =
          build.job.collectives[static_cast<std::size_t>(task.group)].scope;
      t = sharded_target(build.job, build.comm, task.group);
      rec.op = to_string(t.op);
      rec.scope = scope == dag::CommScope::kJob          ? "job"
                  : scope == dag::CommScope::kShardGroup ? "shard_group"
                                                         : "replicas";
    }
    if (task.duration_modelled && bytes > 0 && out.workers > 1) {
      auto how = t.comm->run_description(t.op, t.bytes);
      rec.algorithm = std::move(how.algorithm);
      rec.protocol = std::move(how.protocol);
      rec.channels = how.channels;
    } else {
      rec.algorithm = task.duration_modelled ? "none" : "measured";
    }
    rec.time = c.end - c.start;
    rec.replayed = !task.duration_modelled;
    if (rec.time > Duration::zero()) {
      rec.algbw_bytes_per_s = bytes / (static_cast<double>(rec.time.ns()) * 1e-9);
      rec.busbw_bytes_per_s = rec.algbw_bytes_per_s * bus_bandwidth_factor(t.op, t.ranks);
    }
    out.collectives.push_back(std::move(rec));
  }
  return sizes;
}

// The bytes on every link over the run (a network where collectives share
// links counts them; else each collective's traffic, CommModel::
// add_link_bytes, times how many of its size ran),
// the busiest links, and, with keep_schedule, a busy track per shown link.
void measure_links(const Build& build, const std::vector<CommRun>& comm, Run& run, bool flow,
                   const std::map<SizeKey, double>& sizes, const ReplayOptions& options,
                   ReplayResult& out) {
  const Platform& platform = build.comm.platform();
  std::vector<double> link_bytes;
  // Per kind and size, the tracked links its collectives send over (analytical).
  std::map<SizeKey, std::vector<LinkId>> shown_links;
  if (flow) {
    link_bytes = run.network->link_bytes();
  } else {
    link_bytes.assign(platform.links().size(), 0.0);
    std::vector<double> one;
    double unplaced = 0;
    for (const auto& [key, count] : sizes) {
      unplaced += add_key_link_bytes(build, key, link_bytes, count);
      if (run.tracked.empty()) continue;
      one.assign(platform.links().size(), 0.0);
      add_key_link_bytes(build, key, one, 1);
      auto& shown = shown_links[key];
      for (LinkId l = 0; l < one.size(); ++l) {
        if (run.tracked[l] && one[l] > 0) shown.push_back(l);
      }
    }
    if (unplaced > 0) {
      logger("sim")->warn(
          "sharding.strategy hsdp: {:.0f} bytes of the other shard groups' collectives cross "
          "fat-tree leaf uplinks of groups that are not whole leaves; the link utilisation "
          "leaves them out",
          unplaced);
    }
  }
  const Time makespan = run.windowed ? run.windowed->makespan : run.schedule->makespan;
  summarise_links(platform, link_bytes, makespan - Time::zero(), out);
  if (!options.keep_schedule) return;
  std::map<LinkId, std::vector<std::pair<Time, Time>>> busy;
  if (flow) {
    for (const auto& a : run.network->activity()) busy[a.link].push_back({a.start, a.end});
  } else {
    // The analytical model has no per-link timing: a link is shown busy for
    // the whole of every collective that sends over it.
    for (const CommRun& c : comm) {
      if (!c.task.duration_modelled || c.task.bytes == 0) continue;
      const SizeKey key = size_key(build, c.task, static_cast<double>(c.task.bytes));
      for (LinkId l : shown_links[key]) busy[l].push_back({c.start, c.end});
    }
  }
  // The generic platform's free PCIe hop is no link (NodeSpec::pcie_free):
  // no track for it, as it has no row in the link utilisation.
  const bool pcie_free = platform.spec().node.pcie_free;
  for (auto& [l, intervals] : busy) {
    if (pcie_free && platform.links()[l].kind == LinkKind::kPcie) continue;
    std::sort(intervals.begin(), intervals.end());
    out.link_tracks.push_back({platform.link_name(l), std::move(intervals)});
  }
}

// Iteration times, throughput, the steady-state breakdown, the critical path
// and the closed forms.
void measure_iterations(const Build& build, const Scenario& scenario, const Run& run,
                        ReplayResult& out) {
  const JobGraph& job = build.job;
  IterationMeasures m;
  if (run.observer) {
    m = iteration_measures(run.observer->iteration_end(), run.observer->breakdown());
    out.critical_path = run.windowed->critical_path;
  } else {
    m = iteration_measures(*job.graph, *run.schedule, out.iterations, job.ranks_built,
                           job.rank_weight);
    out.critical_path = dag::scheduled_critical_path(*job.graph, run.schedule->view());
  }
  out.iteration_times = std::move(m.times);
  out.iteration_time = m.steady;
  out.throughput_samples_per_s = out.iteration_time > Duration::zero()
                                     ? static_cast<double>(out.global_batch) /
                                           (static_cast<double>(out.iteration_time.ns()) * 1e-9)
                                     : 0.0;
  out.breakdown = m.breakdown;

  // The closed forms assume identical ranks: with stragglers, imbalance or
  // jitter there is none to compare with.
  out.ranks_differ = job.ranks_differ;
  // Nor does either model interference.
  if (!job.ranks_differ && !build.interference.active) {
    out.closed_form =
        job.sharded ? job.sharded_closed_form : scenario_closed_form(scenario, job.times);
  }
}

}  // namespace

// ZeRO-2 and up: the gradient buffers waiting for their reductions, read
// off the run in place of the formula's one unit (gradient_buffers.h).
void measure_waiting_gradients(const Build& build, const Run& run,
                               const std::vector<CommRun>& comm, ReplayResult& out) {
  if (!build.job.sharded || out.memory.waiting_gradients == 0) return;
  BackwardStarts backward;
  if (run.windowed) {
    if (run.observer == nullptr) return;
    backward = run.observer->backward_starts();
  } else {
    const dag::TaskGraph& g = *build.job.graph;
    for (dag::TaskId t = 0; t < g.task_count(); ++t) {
      const dag::Task& task = g.task(t);
      if (task.kind != dag::TaskKind::kBackward || task.rank != 0) continue;
      Time& at = backward[{task.iteration, task.layer}];
      at = max(at, run.schedule->start[t]);
    }
  }
  if (const auto peak = waiting_gradient_peak(build.job.collectives, comm, backward)) {
    out.memory.waiting_gradients = std::max(out.memory.waiting_gradients, *peak);
    out.memory.waiting_from_schedule = true;
  }
}

void measure(const Build& build, const Scenario& scenario, Run& run, const ReplayOptions& options,
             ReplayResult& out) {
  const bool flow = run.network != nullptr;
  const std::vector<CommRun> comm = comm_runs(build, run);
  const auto sizes = measure_collectives(build, comm, run, flow, out);
  measure_links(build, comm, run, flow, sizes, options, out);
  measure_iterations(build, scenario, run, out);
  measure_waiting_gradients(build, run, comm, out);
}

void measure_graph(const Build& build, Run& run, const ReplayOptions& options,
                   GraphReplayResult& out) {
  ReplayResult& r = out.run;
  const dag::TaskGraph& tasks = *build.job.graph;
  const Schedule& schedule = *run.schedule;
  const std::int64_t ranks = build.job.ranks_built;
  out.graph_time = schedule.makespan - Time::zero();
  // A graph ssgd wrote has its S-SGD iterations: measured as a profile's
  // are, from each iteration's last update; any other graph is one
  // iteration.
  std::int32_t last_iteration = -1;
  for (dag::TaskId t = 0; t < tasks.task_count(); ++t) {
    if (tasks.task(t).kind == dag::TaskKind::kUpdate) {
      last_iteration = std::max(last_iteration, tasks.task(t).iteration);
    }
  }
  if (last_iteration >= 0) {
    r.iterations = last_iteration + 1;
    out.iterations_known = true;
    IterationMeasures m = iteration_measures(tasks, schedule, r.iterations, ranks);
    r.iteration_times = std::move(m.times);
    r.iteration_time = m.steady;
    r.breakdown = m.breakdown;
  } else {
    r.iteration_time = out.graph_time;
    r.iteration_times = {r.iteration_time};
    const std::vector<Time> from(static_cast<std::size_t>(ranks), Time::zero());
    const std::vector<Time> to(static_cast<std::size_t>(ranks), schedule.makespan);
    r.breakdown = dag::average_breakdown(tasks, schedule.view(), from, to, 1);
  }
  r.critical_path = dag::scheduled_critical_path(tasks, schedule.view());
  for (dag::TaskId t = 0; t < tasks.task_count(); ++t) {
    const auto& task = tasks.task(t);
    if (task.kind != dag::TaskKind::kComm || task.rank != dag::kAllRanks) continue;
    if (task.iteration != std::max(0, last_iteration)) continue;
    // As it ran: under the flow model, with whatever shared its links.
    r.comm_per_iteration = r.comm_per_iteration + (schedule.end[t] - schedule.start[t]);
    ++r.collectives_per_iteration;
  }
  // The links' traffic over the whole graph, as a profile's is measured:
  // the modelled collectives' (the others were replayed at their recorded
  // times and put nothing on the platform's links).
  const bool flow = run.network != nullptr;
  const std::vector<CommRun> comm = comm_runs(build, run);
  std::map<SizeKey, double> sizes;
  if (!flow) {
    for (const CommRun& c : comm) {
      if (!c.task.duration_modelled || c.task.bytes <= 0) continue;
      sizes[size_key(build, c.task, static_cast<double>(c.task.bytes))] += 1;
    }
  }
  measure_links(build, comm, run, flow, sizes, options, r);
}

}  // namespace ssgd::sim::replay_stages
