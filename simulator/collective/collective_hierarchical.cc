// Hierarchical collectives: one leader per node talks between nodes, the
// other ranks only inside their node (the two-level scheme of Horovod's
// hierarchical all-reduce and of Thakur et al.'s SMP-aware collectives;
// Sergeev and Del Balso, "Horovod", arXiv:1802.05799, 2018; Thakur,
// Rabenseifner and Gropp, IJHPCA 2005). With k ranks per node and N = P/k
// nodes:
//
//   all_reduce  1. binomial-tree reduce of M to the leader, local rank 0:
//                  ceil(log2 k) steps, every node at once, each moving M
//               2. ring all-reduce of M among the N leaders: 2(N-1) steps
//                  of M/N between nodes
//               3. binomial-tree broadcast of M from the leader, the
//                  reverse of 1
//               T = 2 ceil(log2 k) (alpha_intra + M beta_intra)
//                   + 2(N-1) (alpha_inter + M/N beta_inter)
//   broadcast   1. pipelined chain among the ranks with the root's local
//                  index, node after node from the root's, M in N-1 chunks:
//                  2N-3 steps of M/(N-1) between nodes
//               2. binomial-tree broadcast inside every node from that rank
//               T = (2N-3) (alpha_inter + M/(N-1) beta_inter)
//                   + ceil(log2 k) (alpha_intra + M beta_intra)
//
// The binomial tree inside the node (MPICH's short-message reduce and
// broadcast) needs ceil(log2 k) steps of M where a direct gather to the
// leader would push (k-1) M through the leader's port in one. With k = 1 the
// all-reduce is the plain ring; with one node it is reduce then broadcast.
// The phases run one after another (no pipelining between them).

#include <utility>

#include "simulator/collective/collective_algorithms.h"

namespace ssgd::sim::detail {
namespace {

// Ranks of every node, the rank with local index `first` leading.
std::vector<Group> node_groups(const CollectiveShape& shape, std::int64_t first) {
  const std::int64_t k = shape.ranks_per_node;
  std::vector<Group> groups;
  for (std::int64_t n = 0; n < shape.nodes(); ++n) {
    Group& g = groups.emplace_back();
    for (std::int64_t j = 0; j < k; ++j) {
      g.push_back(static_cast<std::int32_t>(n * k + (first + j) % k));
    }
  }
  return groups;
}

// The leaders (group heads), starting from node `first_node`.
Group leaders(const std::vector<Group>& groups, std::int64_t first_node) {
  Group out;
  const auto n = static_cast<std::int64_t>(groups.size());
  for (std::int64_t i = 0; i < n; ++i) out.push_back(groups[(first_node + i) % n].front());
  return out;
}

void append(std::vector<CollectiveStep>& to, std::vector<CollectiveStep> from) {
  for (CollectiveStep& s : from) to.push_back(std::move(s));
}

}  // namespace

std::vector<CollectiveStep> hierarchical_decompose(CollectiveOp op, const CollectiveShape& shape,
                                                   double bytes) {
  const std::int64_t nodes = shape.nodes();
  std::vector<CollectiveStep> steps;
  if (op == CollectiveOp::kBroadcast) {
    const std::int64_t k = shape.ranks_per_node;
    const std::vector<Group> groups = node_groups(shape, shape.root % k);
    append(steps, chain_broadcast(leaders(groups, shape.root / k), bytes));
    append(steps, binomial_broadcast(groups, bytes));
    return steps;
  }
  const std::vector<Group> groups = node_groups(shape, 0);
  append(steps, binomial_reduce(groups, bytes));
  if (nodes > 1) {
    steps.push_back(
        ring_step({leaders(groups, 0)}, bytes / static_cast<double>(nodes), 2 * (nodes - 1)));
  }
  append(steps, binomial_broadcast(groups, bytes));
  return steps;
}

CostPhases hierarchical_cost(CollectiveOp op, const CollectiveShape& shape, double bytes) {
  const std::int64_t nodes = shape.nodes();
  const std::int64_t local_steps = ceil_log2(shape.ranks_per_node);
  CostPhases phases;
  if (op == CollectiveOp::kBroadcast) {
    if (nodes > 1) {
      phases.push_back(
          uniform_phase(2 * nodes - 3, false, true, bytes / static_cast<double>(nodes - 1)));
    }
    if (local_steps > 0) phases.push_back(uniform_phase(local_steps, true, false, bytes));
    return phases;
  }
  if (local_steps > 0) phases.push_back(uniform_phase(2 * local_steps, true, false, bytes));
  if (nodes > 1) {
    phases.push_back(
        uniform_phase(2 * (nodes - 1), false, true, bytes / static_cast<double>(nodes)));
  }
  return phases;
}

}  // namespace ssgd::sim::detail
