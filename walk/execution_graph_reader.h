#pragma once
// The reader of execution graphs (dag/execution_graph.h): a trace of
// GraphNode events, as `ssgd import chakra` writes it.

#include <string>

#include "dag/execution_graph.h"
#include "traces/proto/trace_events.pb.h"
#include "traces/trace_reader.h"

namespace ssgd::walk {

// True when `first` (a trace's first event) is a GraphNode: the trace holds a
// graph.
bool starts_a_graph(const trace::v1::Event& first);

// Reads every GraphNode of the trace. Throws InputError naming the file,
// the event and the field: another payload in a graph trace, a rank outside
// the world, a rank's graph that breaks traces/graph_node_check.h (a node
// id used twice, a dependency on a node the rank does not have, a cycle);
// and when the trace holds no node.
dag::ExecutionGraph read_execution_graph(trace::TraceReader& reader, const std::string& file);

}  // namespace ssgd::walk
