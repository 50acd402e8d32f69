#pragma once
// An execution graph: each rank's nodes and the nodes of the same rank each
// waits for, as a trace of GraphNode events holds them (`ssgd import
// chakra`, traces/proto/trace_events.proto). walk/execution_graph_reader.h
// is the one reader of such traces; build_execution_dag() (execution_dag.h)
// makes the task graph that replays it.

#include <cstdint>
#include <string>
#include <vector>

#include "common/time.h"

namespace ssgd::dag {

enum class GraphNodeKind : std::uint8_t {
  kCompute,
  kCollective,
  kSend,
  kRecv,
  kMemory,
  kMetadata,
  kUnknown,
};
const char* to_string(GraphNodeKind kind);

struct GraphNodeWork {
  std::uint64_t id = 0;
  std::string name;
  GraphNodeKind kind = GraphNodeKind::kCompute;
  std::int32_t op = 0;  // traces' Collective::Op, for collectives and point-to-point
  std::int64_t bytes = 0;
  std::string group;       // a collective's process group; empty: every rank
  std::int32_t peer = -1;  // SEND, RECV
  std::int32_t tag = 0;    // SEND, RECV
  bool on_cpu = false;
  Time start;                       // as recorded
  Duration duration;                // as recorded
  std::string task_kind;            // ssgd's task kind when ssgd wrote the graph
  std::int32_t iteration = -1;      // ssgd's iteration, likewise; -1 when unknown
  std::int32_t layer = -1;          // ssgd's layer, likewise
  std::vector<std::uint32_t> deps;  // indices of this rank's nodes it waits for
  std::int64_t record = 0;          // the trace event it came from, for messages
};

struct ExecutionGraph {
  std::int32_t world = 0;
  std::vector<std::vector<GraphNodeWork>> ranks;  // [rank][node], in the trace's order
  std::int64_t nodes = 0;
  std::string provenance;  // the trace's
  // The ranks' nodes as the trace's hosts say them (every host with the same
  // number of GPUs, hosts x GPUs = world): GPUs per node; 0 when not said.
  std::int64_t gpus_per_node = 0;
};

}  // namespace ssgd::dag
