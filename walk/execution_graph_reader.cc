#include "walk/execution_graph_reader.h"

#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "common/error.h"
#include "traces/graph_node_check.h"

namespace ssgd::walk {

namespace v1 = trace::v1;
using dag::ExecutionGraph;
using dag::GraphNodeKind;
using dag::GraphNodeWork;

bool starts_a_graph(const v1::Event& first) {
  return first.payload_case() == v1::Event::kGraphNode;
}

namespace {

GraphNodeKind kind_of(v1::GraphNode::Kind kind) {
  switch (kind) {
    case v1::GraphNode::COMPUTE: return GraphNodeKind::kCompute;
    case v1::GraphNode::COLLECTIVE: return GraphNodeKind::kCollective;
    case v1::GraphNode::SEND: return GraphNodeKind::kSend;
    case v1::GraphNode::RECV: return GraphNodeKind::kRecv;
    case v1::GraphNode::MEMORY: return GraphNodeKind::kMemory;
    case v1::GraphNode::METADATA: return GraphNodeKind::kMetadata;
    default: return GraphNodeKind::kUnknown;
  }
}

}  // namespace

ExecutionGraph read_execution_graph(trace::TraceReader& reader, const std::string& file) {
  ExecutionGraph g;
  g.provenance = reader.metadata().provenance();
  const std::int32_t world = reader.metadata().world_size();
  if (const auto& hosts = reader.metadata().hosts(); !hosts.empty() && world > 0) {
    const int per_host = hosts[0].gpus_size();
    bool even = per_host > 0;
    for (const auto& h : hosts) even = even && h.gpus_size() == per_host;
    if (even && static_cast<std::int64_t>(hosts.size()) * per_host == world) g.gpus_per_node = per_host;
  }
  // Each node's dependencies as ids until the rank's graph is checked.
  struct DepIds {
    std::vector<std::uint64_t> data, ctrl;
  };
  std::vector<std::vector<DepIds>> dep_ids;
  v1::Event event;
  std::int64_t index = -1;
  const auto fail = [&](const std::string& field, const std::string& what) {
    throw InputError(
        {file, std::nullopt, static_cast<std::int64_t>(reader.chunks_read()) - 1, field},
        fmt::format("event {}: {}", index, what));
  };
  while (reader.next(event)) {
    ++index;
    if (event.payload_case() != v1::Event::kGraphNode) {
      fail("payload",
           "a trace of graph nodes (ssgd import chakra) holds nothing else; this event "
           "is not a graph_node");
    }
    const v1::GraphNode& n = event.graph_node();
    const std::int32_t rank = event.rank();
    if (world > 0 && rank >= world) {
      fail("rank", fmt::format("rank {} is not a rank of the world of {}", rank, world));
    }
    const auto r = static_cast<std::size_t>(rank);
    if (r >= g.ranks.size()) {
      g.ranks.resize(r + 1);
      dep_ids.resize(r + 1);
    }
    auto& nodes = g.ranks[r];
    if (nodes.size() >= std::numeric_limits<std::uint32_t>::max() - 1) {
      fail("graph_node", "a rank has more than 2^32-2 nodes");
    }
    GraphNodeWork w;
    w.id = n.id();
    w.name = n.name();
    w.kind = kind_of(n.kind());
    w.op = static_cast<std::int32_t>(n.op());
    w.bytes = n.size_bytes();
    w.group = n.group();
    w.peer = n.peer();
    w.tag = n.tag();
    w.on_cpu = n.on_cpu();
    w.start = Time(n.start_ns());
    w.duration = Duration(n.end_ns() - n.start_ns());
    w.task_kind = n.task_kind();
    w.iteration = n.iteration();
    w.layer = n.layer();
    w.record = index;
    nodes.push_back(std::move(w));
    dep_ids[r].push_back({{n.data_deps().begin(), n.data_deps().end()},
                          {n.ctrl_deps().begin(), n.ctrl_deps().end()}});
  }
  if (index < 0) {
    throw InputError({file, std::nullopt, std::nullopt, ""},
                     "the trace holds no graph node: nothing to replay");
  }
  g.world = std::max<std::int32_t>(world, static_cast<std::int32_t>(g.ranks.size()));
  g.ranks.resize(static_cast<std::size_t>(g.world));
  // Each rank's graph is checked as `ssgd import chakra` checks it
  // (traces/graph_node_check.h), then its dependencies become indices.
  for (std::size_t r = 0; r < dep_ids.size(); ++r) {
    auto& nodes = g.ranks[r];
    std::vector<trace::GraphNodeDeps> check;
    check.reserve(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      check.push_back({nodes[i].id, nodes[i].name, dep_ids[r][i].data, dep_ids[r][i].ctrl});
    }
    if (auto problem = trace::check_rank_graph(
            check, [&nodes](std::size_t i) { return fmt::format("event {}", nodes[i].record); })) {
      throw InputError(
          {file, std::nullopt, std::nullopt, "graph_node." + problem->field},
          fmt::format("event {}: rank {}: {}", nodes[problem->node].record, r, problem->what));
    }
    std::unordered_map<std::uint64_t, std::uint32_t> ids;
    ids.reserve(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i)
      ids.emplace(nodes[i].id, static_cast<std::uint32_t>(i));
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      for (const auto* deps : {&dep_ids[r][i].data, &dep_ids[r][i].ctrl}) {
        for (const auto d : *deps) nodes[i].deps.push_back(ids.at(d));
      }
    }
    g.nodes += static_cast<std::int64_t>(nodes.size());
  }
  return g;
}

}  // namespace ssgd::walk
