#pragma once
// The rules of one rank's execution graph (graph_node events,
// traces/README.md): node ids are unique, every data and control dependency
// names another node of the same rank, and no node waits for itself through
// a cycle. `ssgd import chakra` checks each rank's graph before it writes
// it, and dag/execution_graph.h again where a graph trace is read, since a
// graph trace may come from elsewhere (`ssgd pack`).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ssgd::trace {

// One node as the check sees it.
struct GraphNodeDeps {
  std::uint64_t id = 0;
  std::string_view name;
  std::span<const std::uint64_t> data_deps;
  std::span<const std::uint64_t> ctrl_deps;
};

struct GraphProblem {
  std::size_t node = 0;  // index of the node the problem is found at
  std::string field;     // "id", "data_deps" or "ctrl_deps"
  std::string what;      // "node 2 'b' depends on node 9, which this rank does not have"
};

// The first problem of the graph, or nullopt. `where(i)` names node i's
// place in the caller's input ("record 3"), for the message of an id used
// twice.
std::optional<GraphProblem> check_rank_graph(std::span<const GraphNodeDeps> nodes,
                                             const std::function<std::string(std::size_t)>& where);

}  // namespace ssgd::trace
