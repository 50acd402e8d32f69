#include "simulator/replay/graph_replay.h"

#include <algorithm>
#include <chrono>
#include <string_view>

#include <fmt/format.h>

#include "common/error.h"
#include "common/logging.h"
#include "dag/critical_path.h"
#include "dag/time_breakdown.h"
#include "simulator/engine/schedule.h"
#include "simulator/network/collective_runner.h"
#include "simulator/network/flow_network.h"
#include "simulator/replay/job_graph.h"
#include "simulator/replay/replay_estimate.h"
#include "simulator/scenario/scenario_network.h"
#include "simulator/scenario/scenario_platform.h"
#include "traces/proto/trace_events.pb.h"
#include "traces/trace_collectives.h"

namespace ssgd::sim {
namespace {

// Keys that shape the S-SGD template, which a graph does not use: the
// scenario a graph was exported under can be given again, and they are
// ignored with a warning. Jobs (other traffic on the fabric) are refused.
constexpr std::string_view kTemplateKeys[] = {"iterations", "policy.", "workload.", "perturb.",
                                              "scaling."};

// A graph node's op (a trace's Collective::Op, as an integer) in the
// models' words (traces/trace_collectives.h); none for the ops they do not
// model.
std::optional<CollectiveOp> modelled_op(std::int32_t op) {
  return trace::modelled_op(static_cast<trace::v1::Collective::Op>(op));
}

}  // namespace

std::optional<GraphGap> graph_gap(const Scenario& scenario) {
  for (const auto& [key, origin] : scenario.origins) {
    if (key == "jobs" || key.starts_with("jobs.")) {
      return GraphGap{key, "other jobs sharing the fabric",
                      "leave jobs out, or replay the trace the graph came from"};
    }
  }
  if (scenario.interference.active()) {
    return GraphGap{"interference.model", "interference between compute and communication",
                    "set interference.model: none, or replay the trace the graph came from"};
  }
  // Its nodes' times are replayed as recorded: the what-if to another GPU
  // (simulator/perturb/gpu_change.h) works on profiles, not on graphs.
  if (scenario.platform.gpu_model_from_key && scenario.platform.gpu_model != "capture") {
    return GraphGap{"platform.gpu.model", "moving its times to another GPU",
                    "set platform.gpu.model: capture, or replay the trace the graph came from"};
  }
  return std::nullopt;
}

GraphGap graph_trace_gap() { return {"--trace", "a simulated trace", "use --timeline"}; }

std::string graph_gap_message(const GraphGap& gap) {
  return fmt::format(
      "an execution graph replays its own nodes and their recorded times: {} is not yet "
      "replayed for one; {}",
      gap.what, gap.instead);
}

Scenario graph_scenario(const dag::ExecutionGraph& graph, const Scenario& requested) {
  Scenario s = requested;
  return with_located_errors(s, [&]() -> Scenario {
    if (const auto gap = graph_gap(s)) {
      throw ParameterError(gap->asked_by, graph_gap_message(*gap));
    }
    std::vector<std::string> ignored;
    for (const auto& [key, origin] : s.origins) {
      for (const auto prefix : kTemplateKeys) {
        if (key.starts_with(prefix)) ignored.push_back(key);
      }
    }
    if (!ignored.empty()) {
      logger("sim")->warn("an execution graph replays its own tasks and times: {} ignored",
                          fmt::join(ignored, ", "));
    }
    if (const std::string gpu = scenario_gpu_model(s); !gpu.empty()) {
      logger("sim")->warn("an execution graph replays its nodes' recorded times, not on the "
                          "preset's {} (replay the trace it came from to move it to that GPU)",
                          gpu);
    }
    const std::int64_t ranks = graph.world;
    // The nodes the graph's ranks sat on (its hosts, as `ssgd export chakra`
    // records them), unless the scenario names its own.
    if (graph.gpus_per_node > 0 && !s.gpus_per_node_given) {
      if (s.platform.preset != "generic" && graph.gpus_per_node > s.gpus_per_node) {
        throw ParameterError(
            "platform.preset",
            fmt::format("the graph's ranks sat on nodes of {} GPUs, more than a {} node has ({}): "
                        "set cluster.gpus_per_node to replay them on other nodes",
                        graph.gpus_per_node, s.platform.preset, s.gpus_per_node));
      }
      s.gpus_per_node_given = s.gpus_per_node != graph.gpus_per_node;
      s.gpus_per_node = graph.gpus_per_node;
    } else if (graph.gpus_per_node > 0 && s.gpus_per_node != graph.gpus_per_node) {
      logger("sim")->info("the graph's ranks sat on nodes of {} GPUs; replayed on nodes of {} "
                          "(cluster.gpus_per_node)",
                          graph.gpus_per_node, s.gpus_per_node);
    } else if (graph.gpus_per_node == 0 && ranks > 1 && !s.gpus_per_node_given) {
      logger("sim")->warn("the graph does not record how its {} ranks sat on nodes: replayed on "
                          "nodes of {} GPU{} ({}; set cluster.gpus_per_node to the job's)",
                          ranks, s.gpus_per_node, s.gpus_per_node == 1 ? "" : "s",
                          s.platform.preset == "generic" ? "the default"
                                                         : "a " + s.platform.preset + " node");
    }
    if (s.origins.contains("cluster.nodes")) {
      if (s.workers() != ranks) {
        throw ParameterError("cluster.nodes",
                             fmt::format("the graph has {} ranks, but cluster.nodes x "
                                         "cluster.gpus_per_node is {} x {} = {}",
                                         ranks, s.nodes, s.gpus_per_node, s.workers()));
      }
    } else if (ranks % s.gpus_per_node != 0) {
      throw ParameterError(
          "cluster.gpus_per_node",
          fmt::format("the graph's {} ranks do not fill nodes of {} GPUs", ranks, s.gpus_per_node));
    } else {
      s.nodes = ranks / s.gpus_per_node;
    }
    return s;
  });
}

GraphReplayResult replay_graph(const dag::ExecutionGraph& graph, const Scenario& requested,
                               const ReplayOptions& options, const std::string& file) {
  auto log = logger("sim");
  GraphReplayResult out;
  out.scenario = graph_scenario(graph, requested);
  const Scenario& scenario = out.scenario;
  ReplayResult& r = out.run;
  r.workers = graph.world;
  r.iterations = 1;
  r.ranks_simulated = graph.world;
  out.nodes = graph.nodes;
  const CommModel comm =
      with_located_errors(scenario, [&] { return scenario_comm_model(scenario); });
  r.network = comm.describe();
  r.network_model = scenario.network_model;
  Time first = Time(std::numeric_limits<std::int64_t>::max());
  Time last = Time::zero();
  for (const auto& rank : graph.ranks) {
    for (const auto& n : rank) {
      if (n.start < first) first = n.start;
      last = max(last, n.start + n.duration);
    }
  }
  out.recorded_span = last > first ? last - first : Duration::zero();

  // Nothing is built that cannot fit, as replay() refuses (replay_estimate.h);
  // the graph's size comes from the input, not from a key.
  if (!options.allow_large) {
    const ReplayEstimate estimate = estimate_graph_replay(graph, scenario);
    if (const auto why = too_large(estimate)) {
      throw InputError({file, std::nullopt, std::nullopt, ""},
                       *why + "; give --allow-large to run anyway");
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  const dag::GraphCommTime comm_time =
      [&comm](const dag::GraphCommCall& call) -> std::optional<Duration> {
    if (!call.whole_world) return std::nullopt;
    const auto op = modelled_op(call.op);
    if (!op) return std::nullopt;
    return comm.isolated_time(*op, static_cast<double>(call.bytes));
  };
  auto dag = std::make_shared<dag::ExecutionDag>(dag::build_execution_dag(graph, comm_time, file));
  r.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.collectives = dag->collectives;
  out.point_to_point = dag->point_to_point;
  out.comm_modelled = dag->comm_modelled;
  out.comm_replayed = dag->comm_replayed;
  if (dag->comm_replayed > 0) {
    log->info(
        "{} of {} collective and point-to-point operations replayed at their recorded "
        "times (not modelled: another op, a smaller group, or point-to-point)",
        dag->comm_replayed, dag->comm_replayed + dag->comm_modelled);
  }
  const dag::TaskGraph& tasks = dag->graph;
  r.tasks = tasks.task_count();
  r.edges = tasks.edge_count();

  Engine engine;
  ScheduleOptions sched;
  std::unique_ptr<NetworkRun> network;
  std::unique_ptr<CollectiveExecutor> executor;
  if (comm.model().shares_links() && graph.world > 1) {
    // The modelled collectives run on the model's network, each with its
    // own operation.
    network = comm.model().open(engine, comm.platform(), comm.planner(), {});
    executor = std::make_unique<CollectiveExecutor>(
        *network, comm, [&dag, &comm](const dag::Task& task) {
          return comm.call(*modelled_op(dag->comm[static_cast<std::size_t>(task.group)].op),
                           static_cast<double>(task.bytes));
        });
    sched.executor = executor.get();
  }
  const auto t1 = std::chrono::steady_clock::now();
  auto schedule =
      std::make_shared<Schedule>(std::move(run_schedules(engine, {&tasks}, {sched}).front()));
  r.simulate_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  r.events = schedule->events;

  out.graph_time = schedule->makespan - Time::zero();
  // A graph ssgd wrote has its S-SGD iterations: measured as replay() does,
  // from each iteration's last update; any other graph is one iteration.
  std::int32_t last_iteration = -1;
  for (dag::TaskId t = 0; t < tasks.task_count(); ++t) {
    if (tasks.task(t).kind == dag::TaskKind::kUpdate) {
      last_iteration = std::max(last_iteration, tasks.task(t).iteration);
    }
  }
  if (last_iteration >= 0) {
    r.iterations = last_iteration + 1;
    out.iterations_known = true;
    IterationMeasures m = iteration_measures(tasks, *schedule, r.iterations, graph.world);
    r.iteration_times = std::move(m.times);
    r.iteration_time = m.steady;
    r.breakdown = m.breakdown;
  } else {
    r.iteration_time = out.graph_time;
    r.iteration_times = {r.iteration_time};
    const std::vector<Time> from(static_cast<std::size_t>(graph.world), Time::zero());
    const std::vector<Time> to(static_cast<std::size_t>(graph.world), schedule->makespan);
    r.breakdown = dag::average_breakdown(tasks, schedule->view(), from, to, 1);
  }
  r.critical_path = dag::scheduled_critical_path(tasks, schedule->view());
  for (dag::TaskId t = 0; t < tasks.task_count(); ++t) {
    const auto& task = tasks.task(t);
    if (task.kind != dag::TaskKind::kComm || task.rank != dag::kAllRanks) continue;
    if (task.iteration != std::max(0, last_iteration)) continue;
    // As it ran: under the flow model, with whatever shared its links.
    r.comm_per_iteration = r.comm_per_iteration + (schedule->end[t] - schedule->start[t]);
    ++r.collectives_per_iteration;
  }
  if (options.keep_schedule) {
    r.task_graph = std::shared_ptr<const dag::TaskGraph>(dag, &dag->graph);
    r.schedule = schedule;
  }
  return out;
}

}  // namespace ssgd::sim
