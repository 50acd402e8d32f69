#pragma once
// Replays an execution graph (dag/execution_graph.h: a trace `ssgd import
// chakra` wrote) under a scenario's platform and network: the graph's own
// tasks and dependencies (dag/execution_dag.h), compute at its recorded
// durations, and every collective that spans the whole world and that ssgd
// models (all-reduce, reduce-scatter, all-gather, broadcast, all-to-all)
// timed by the scenario's network model; other collectives, collectives of
// smaller process groups, and point-to-point transfers at their recorded
// durations (counted, and said in the summary). The graph time is from time
// zero to its last task; a graph ssgd exported also has its iterations.
//
// The scenario's GPU count must be the graph's rank count: when
// cluster.nodes is not given it is set to ranks / cluster.gpus_per_node. The
// keys of the S-SGD template (iterations, policy.*, workload.*, perturb.*,
// scaling.*) do not apply to a graph and are ignored with a warning, so the
// scenario a graph was exported under can be given again. Under the flow
// model (network.model: flow) the modelled collectives run as flows on the
// platform's links, sharing them with each other. What a graph's replay
// does not do yet (graph_gap) is refused before anything runs, in one place
// with one message. replay_graph() runs the stages a profile's replay runs
// (replay_stages.h: plan_graph, the estimate, build_graph, run,
// measure_graph).

#include <cstdint>
#include <optional>
#include <string>

#include "dag/execution_dag.h"
#include "dag/execution_graph.h"
#include "simulator/replay/replay.h"
#include "simulator/scenario/scenario.h"

namespace ssgd::sim {

struct GraphReplayResult {
  // With iterations_known (a graph ssgd wrote: its update tasks carry their
  // iteration), iteration_times and the steady iteration_time as replay()
  // measures them, and the breakdown over the steady iterations; else one
  // iteration, the whole graph.
  ReplayResult run;
  Duration graph_time;  // from time zero to the end of the last task
  bool iterations_known = false;
  std::int64_t nodes = 0;
  std::int64_t collectives = 0;  // shared collective tasks
  std::int64_t point_to_point = 0;
  std::int64_t comm_modelled = 0;
  std::int64_t comm_replayed = 0;
  Duration recorded_span;  // the recording's span: last end - first start over all nodes
  Scenario scenario;       // as replayed (graph_scenario)
};

// Something asked of a graph that its replay does not do yet: the scenario
// key or command-line flag that asks, what it asks, and what to do instead.
struct GraphGap {
  std::string asked_by;  // "jobs", "interference.model", "platform.gpu.model", "--trace"
  std::string what;
  std::string instead;
};

// The one list of what a graph's replay does not do yet:
//   jobs              other jobs sharing the fabric
//   interference.*    compute slowed by communication (and the reverse)
//   platform.gpu.model  moving the graph's times to another GPU
//   --trace           a simulated trace of the run
// graph_gap: the first key of `scenario` that asks one of the first three
// (graph_scenario refuses it); graph_trace_gap: the last, for the command
// that writes simulated traces.
std::optional<GraphGap> graph_gap(const Scenario& scenario);
GraphGap graph_trace_gap();

// Its one message: "an execution graph replays its own nodes and their
// recorded times: <what> is not yet replayed for one; <instead>".
std::string graph_gap_message(const GraphGap& gap);

// The scenario with the graph's rank count (see above); replay_graph() uses
// it. Throws InputError located at the key, graph_gap's first among them.
Scenario graph_scenario(const dag::ExecutionGraph& graph, const Scenario& requested);

GraphReplayResult replay_graph(const dag::ExecutionGraph& graph, const Scenario& scenario,
                               const ReplayOptions& options, const std::string& file);

}  // namespace ssgd::sim
