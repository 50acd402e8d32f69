#include "dag/execution_dag.h"

#include <map>
#include <tuple>

#include <fmt/format.h>

#include "common/error.h"

namespace ssgd::dag {
namespace {

TaskKind task_kind_of(const GraphNodeWork& n) {
  if (n.task_kind == "forward") return TaskKind::kForward;
  if (n.task_kind == "backward") return TaskKind::kBackward;
  if (n.task_kind == "update") return TaskKind::kUpdate;
  if (n.task_kind == "io") return TaskKind::kIo;
  if (n.task_kind == "h2d") return TaskKind::kH2d;
  switch (n.kind) {
    case GraphNodeKind::kCollective:
    case GraphNodeKind::kSend:
    case GraphNodeKind::kRecv: return TaskKind::kComm;
    case GraphNodeKind::kMemory: return TaskKind::kIo;
    default: return TaskKind::kForward;
  }
}

struct Builder {
  const ExecutionGraph& g;
  const GraphCommTime& comm_time;
  const std::string& file;
  ExecutionDag out;
  std::vector<std::vector<TaskId>> task_of;  // [rank][node]

  [[noreturn]] void fail(const GraphNodeWork& n, std::size_t rank, const std::string& field,
                         const std::string& what) const {
    throw InputError(
        {file, std::nullopt, std::nullopt, field},
        fmt::format("event {}: rank {} node {} '{}': {}", n.record, rank, n.id, n.name, what));
  }

  // One shared comm task for `members` (rank, node index) pairs.
  void add_comm(const std::vector<std::pair<std::size_t, std::uint32_t>>& members,
                ResourceId resource, bool collective) {
    const auto& first = g.ranks[members.front().first][members.front().second];
    GraphCommCall call{first.op, first.bytes, static_cast<std::int64_t>(members.size()),
                       members.size() == g.ranks.size()};
    Duration recorded = Duration::zero();
    for (const auto& [r, i] : members) recorded = std::max(recorded, g.ranks[r][i].duration);
    Task t;
    t.kind = TaskKind::kComm;
    t.rank = kAllRanks;
    t.bytes = first.bytes;
    t.resource = resource;
    t.group = static_cast<std::int32_t>(out.comm.size());
    t.iteration = std::max(0, first.iteration);
    t.layer = first.layer;
    if (auto modelled = comm_time(call)) {
      t.duration = *modelled;
      t.duration_modelled = true;
      ++out.comm_modelled;
    } else {
      t.duration = recorded;
      ++out.comm_replayed;
    }
    out.comm.push_back(call);
    ++(collective ? out.collectives : out.point_to_point);
    const TaskId id = out.graph.add_task(t);
    for (const auto& [r, i] : members) task_of[r][i] = id;
  }

  void collectives() {
    // Per group, per rank, its collectives in order.
    std::map<std::string, std::map<std::size_t, std::vector<std::uint32_t>>> by_group;
    for (std::size_t r = 0; r < g.ranks.size(); ++r) {
      for (std::uint32_t i = 0; i < g.ranks[r].size(); ++i) {
        if (g.ranks[r][i].kind == GraphNodeKind::kCollective)
          by_group[g.ranks[r][i].group][r].push_back(i);
      }
    }
    for (const auto& [group, ranks] : by_group) {
      // An unnamed group is every rank.
      if (group.empty() && ranks.size() != g.ranks.size()) {
        for (std::size_t r = 0; r < g.ranks.size(); ++r) {
          if (!ranks.contains(r)) {
            const auto& [other, nodes] = *ranks.begin();
            const auto& n = g.ranks[other][nodes.front()];
            fail(n, other, "graph_node.group",
                 fmt::format("a collective without a process group spans every rank, but rank {} "
                             "has none",
                             r));
          }
        }
      }
      Resource net{ResourceKind::kNetwork, kAllRanks};
      const ResourceId resource = out.graph.add_resource(net);
      const auto& [first_rank, first_nodes] = *ranks.begin();
      for (const auto& [r, nodes] : ranks) {
        if (nodes.size() != first_nodes.size()) {
          const auto& n = g.ranks[r][nodes.size() < first_nodes.size() ? nodes.back()
                                                                       : nodes[first_nodes.size()]];
          fail(n, r, "graph_node.group",
               fmt::format("rank {} has {} collectives in group '{}', rank {} has {}: every member "
                           "runs each of the group's collectives",
                           r, nodes.size(), group, first_rank, first_nodes.size()));
        }
      }
      for (std::size_t k = 0; k < first_nodes.size(); ++k) {
        std::vector<std::pair<std::size_t, std::uint32_t>> members;
        const auto& a = g.ranks[first_rank][first_nodes[k]];
        for (const auto& [r, nodes] : ranks) {
          const auto& b = g.ranks[r][nodes[k]];
          if (b.op != a.op || b.bytes != a.bytes) {
            fail(
                b, r, b.op != a.op ? "graph_node.op" : "graph_node.size_bytes",
                fmt::format("collective {} of group '{}' is op {} of {} bytes here but op {} of {} "
                            "bytes on rank {} (node {})",
                            k, group, b.op, b.bytes, a.op, a.bytes, first_rank, a.id));
          }
          members.emplace_back(r, nodes[k]);
        }
        add_comm(members, resource, true);
      }
    }
  }

  void point_to_point() {
    // (from, to, tag) -> the sends on `from` and the receives on `to`, in order.
    std::map<std::tuple<std::size_t, std::size_t, std::int32_t>,
             std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>>>
        pairs;
    for (std::size_t r = 0; r < g.ranks.size(); ++r) {
      for (std::uint32_t i = 0; i < g.ranks[r].size(); ++i) {
        const auto& n = g.ranks[r][i];
        if (n.kind != GraphNodeKind::kSend && n.kind != GraphNodeKind::kRecv) continue;
        if (n.peer < 0 || static_cast<std::size_t>(n.peer) >= g.ranks.size()) {
          fail(n, r, "graph_node.peer",
               fmt::format("peer rank {} is not a rank of the graph's {}", n.peer, g.ranks.size()));
        }
        const auto peer = static_cast<std::size_t>(n.peer);
        if (n.kind == GraphNodeKind::kSend) {
          pairs[{r, peer, n.tag}].first.push_back(i);
        } else {
          pairs[{peer, r, n.tag}].second.push_back(i);
        }
      }
    }
    for (const auto& [key, sides] : pairs) {
      const auto& [from, to, tag] = key;
      const auto& [sends, recvs] = sides;
      if (sends.size() != recvs.size()) {
        const bool more_sends = sends.size() > recvs.size();
        const std::size_t r = more_sends ? from : to;
        const auto& n = g.ranks[r][more_sends ? sends[recvs.size()] : recvs[sends.size()]];
        fail(n, r, "graph_node.peer",
             fmt::format("{} sends from rank {} to rank {} with tag {}, but {} receives: each send "
                         "needs its receive",
                         sends.size(), from, to, tag, recvs.size()));
      }
      Resource net{ResourceKind::kNetwork, kAllRanks};
      const ResourceId resource = out.graph.add_resource(net);
      for (std::size_t k = 0; k < sends.size(); ++k) {
        const auto& s = g.ranks[from][sends[k]];
        const auto& v = g.ranks[to][recvs[k]];
        if (s.bytes != v.bytes) {
          fail(v, to, "graph_node.size_bytes",
               fmt::format("receives {} bytes, but the matching send on rank {} (node {}) sends {}",
                           v.bytes, from, s.id, s.bytes));
        }
        add_comm({{from, sends[k]}, {to, recvs[k]}}, resource, false);
      }
    }
  }

  void rank_tasks() {
    for (std::size_t r = 0; r < g.ranks.size(); ++r) {
      const auto rank = static_cast<std::int32_t>(r);
      const ResourceId gpu = out.graph.add_resource({ResourceKind::kCompute, rank});
      const ResourceId cpu = out.graph.add_resource({ResourceKind::kCompute, rank});
      const ResourceId io = out.graph.add_resource({ResourceKind::kIo, rank});
      const ResourceId copy = out.graph.add_resource({ResourceKind::kCopy, rank});
      for (std::uint32_t i = 0; i < g.ranks[r].size(); ++i) {
        if (task_of[r][i] != kNoTask) continue;  // a comm task
        const auto& n = g.ranks[r][i];
        Task t;
        t.rank = rank;
        t.kind = task_kind_of(n);
        t.duration = n.kind == GraphNodeKind::kMetadata ? Duration::zero() : n.duration;
        t.iteration = std::max(0, n.iteration);
        t.layer = n.layer;
        t.resource = t.kind == TaskKind::kH2d                                      ? copy
                     : t.kind == TaskKind::kIo || n.kind == GraphNodeKind::kMemory ? io
                     : n.on_cpu                                                    ? cpu
                                                                                   : gpu;
        task_of[r][i] = out.graph.add_task(t);
      }
    }
  }

  void edges() {
    for (std::size_t r = 0; r < g.ranks.size(); ++r) {
      for (std::uint32_t i = 0; i < g.ranks[r].size(); ++i) {
        for (const auto d : g.ranks[r][i].deps) {
          // A send to the rank itself and its receive are one task: an edge
          // between the two halves says nothing.
          if (task_of[r][d] != task_of[r][i]) out.graph.add_edge(task_of[r][d], task_of[r][i]);
        }
      }
    }
  }
};

}  // namespace

ExecutionDag build_execution_dag(const ExecutionGraph& graph, const GraphCommTime& comm_time,
                                 const std::string& file) {
  Builder b{graph, comm_time, file, {}, {}};
  b.task_of.resize(graph.ranks.size());
  std::size_t edges = 0;
  for (std::size_t r = 0; r < graph.ranks.size(); ++r) {
    b.task_of[r].assign(graph.ranks[r].size(), kNoTask);
    for (const auto& n : graph.ranks[r]) edges += n.deps.size();
  }
  b.out.graph.reserve(static_cast<std::size_t>(graph.nodes), edges);
  b.collectives();
  b.point_to_point();
  b.rank_tasks();
  b.edges();
  try {
    b.out.graph.finalize();
  } catch (const DagError& e) {
    // Each rank's graph was checked for cycles where it was read; what is
    // left waits across ranks (rank 0 receives from 1 before sending to it,
    // and 1 likewise; collectives in different orders).
    throw InputError({file, std::nullopt, std::nullopt, "graph_node"},
                     fmt::format("the ranks' graphs wait for each other and cannot run as one job: "
                                 "{}",
                                 e.what()));
  }
  return std::move(b.out);
}

}  // namespace ssgd::dag
