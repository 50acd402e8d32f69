#include "traces/graph_node_check.h"

#include <deque>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

namespace ssgd::trace {

std::optional<GraphProblem> check_rank_graph(std::span<const GraphNodeDeps> nodes,
                                             const std::function<std::string(std::size_t)>& where) {
  std::unordered_map<std::uint64_t, std::size_t> index;
  index.reserve(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (auto [it, fresh] = index.emplace(nodes[i].id, i); !fresh) {
      return GraphProblem{
          i, "id",
          fmt::format("node id {} is used again: {} has it too", nodes[i].id, where(it->second))};
    }
  }
  std::vector<std::uint32_t> waiting(nodes.size(), 0);
  std::vector<std::vector<std::uint32_t>> successors(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    for (const auto& [deps, field] :
         {std::pair{n.data_deps, "data_deps"}, std::pair{n.ctrl_deps, "ctrl_deps"}}) {
      for (const auto dep : deps) {
        const auto it = index.find(dep);
        if (it == index.end()) {
          return GraphProblem{i, field,
                              fmt::format("node {} '{}' depends on node {}, which this rank does "
                                          "not have",
                                          n.id, n.name, dep)};
        }
        if (it->second == i) {
          return GraphProblem{i, field,
                              fmt::format("node {} '{}' depends on itself", n.id, n.name)};
        }
        successors[it->second].push_back(static_cast<std::uint32_t>(i));
        ++waiting[i];
      }
    }
  }
  // Kahn's algorithm; what is left waiting lies on or behind a cycle.
  std::deque<std::uint32_t> ready;
  for (std::uint32_t i = 0; i < waiting.size(); ++i) {
    if (waiting[i] == 0) ready.push_back(i);
  }
  std::size_t done = 0;
  while (!ready.empty()) {
    const auto i = ready.front();
    ready.pop_front();
    ++done;
    for (const auto s : successors[i]) {
      if (--waiting[s] == 0) ready.push_back(s);
    }
  }
  if (done == nodes.size()) return std::nullopt;
  // Walk back along unfinished dependencies until a node repeats: it is on a cycle.
  std::size_t at = 0;
  while (waiting[at] == 0) ++at;
  std::vector<int> seen(nodes.size(), -1);
  std::vector<std::size_t> path;
  while (seen[at] < 0) {
    seen[at] = static_cast<int>(path.size());
    path.push_back(at);
    std::size_t next = at;
    for (const auto deps : {nodes[at].data_deps, nodes[at].ctrl_deps}) {
      for (const auto d : deps) {
        if (waiting[index.at(d)] != 0) next = index.at(d);
      }
    }
    at = next;
  }
  std::vector<std::string> cycle;
  for (std::size_t k = static_cast<std::size_t>(seen[at]); k < path.size() && cycle.size() < 8;
       ++k) {
    cycle.push_back(std::to_string(nodes[path[k]].id));
  }
  const auto& n = nodes[at];
  return GraphProblem{
      at, "data_deps",
      fmt::format(
          "node {} '{}' is on a dependency cycle (nodes {}{}); a graph must have none", n.id,
          n.name, fmt::join(cycle, " -> "),
          path.size() - static_cast<std::size_t>(seen[at]) > cycle.size() ? " -> ..." : "")};
}

}  // namespace ssgd::trace
