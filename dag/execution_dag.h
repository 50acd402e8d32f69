#pragma once
// The task graph that replays an execution graph (execution_graph.h) with
// the graph's own dependencies, not the S-SGD template:
//   - each rank's compute, memory, metadata and unknown nodes are tasks of
//     that rank at their recorded durations: GPU work on the rank's compute
//     resource, on_cpu work on its CPU resource, memory nodes and S-SGD io
//     tasks on its io resource, S-SGD h2d tasks on its copy resource
//     (metadata nodes take no time);
//   - the k-th collective of a process group on every member rank is one
//     task shared by the members (rank kAllRanks), run on the group's own
//     network resource, timed by `comm_time` (the network model), or at the
//     longest recorded duration of its members when `comm_time` gives none;
//     the members must agree on the operation and its bytes;
//   - the k-th SEND from a to b with a tag and the k-th RECV on b from a
//     with that tag are one shared task, likewise;
//   - every dependency of a node is an edge into its task.
// Task kinds: a node ssgd wrote keeps its S-SGD kind (GraphNodeWork::
// task_kind); other compute and unknown nodes count as forward, memory
// nodes as io, collectives and point-to-point as comm.
// Errors are InputErrors naming `file`, the event and the field: ranks that
// disagree on a group's collectives, a SEND without its RECV, and ranks
// whose collectives and transfers wait for each other in a cycle (each
// rank's own graph has none: that is checked where it is read).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dag/execution_graph.h"
#include "dag/task_graph.h"

namespace ssgd::dag {

struct GraphCommCall {
  std::int32_t op = 0;  // traces' Collective::Op
  std::int64_t bytes = 0;
  std::int64_t ranks = 0;    // members of the group (2 for point-to-point)
  bool whole_world = false;  // the members are every rank of the graph
};
// The modelled time of a collective or point-to-point, or nullopt to
// replay its recorded duration.
using GraphCommTime = std::function<std::optional<Duration>(const GraphCommCall&)>;

struct ExecutionDag {
  TaskGraph graph;
  std::int64_t collectives = 0;     // shared collective tasks
  std::int64_t point_to_point = 0;  // shared send/recv tasks
  std::int64_t comm_modelled = 0;   // of both, timed by the network model
  std::int64_t comm_replayed = 0;   // of both, at their recorded durations
  std::vector<GraphCommCall> comm;  // per comm task, by Task::group
};

// The task graph, finalized. Throws InputError (see above).
ExecutionDag build_execution_dag(const ExecutionGraph& graph, const GraphCommTime& comm_time,
                                 const std::string& file);

}  // namespace ssgd::dag
