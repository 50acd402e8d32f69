// Ring collectives: ranks 0 -> 1 -> ... -> P-1 -> 0, so consecutive ranks,
// which share a node, are neighbours and the ring leaves each node once.
//
//   all_reduce      reduce-scatter then all-gather: 2(P-1) steps, each moving
//                   M/P over every ring edge at once
//                   T = 2(P-1) alpha + 2(P-1)/P M beta
//   reduce_scatter,
//   all_gather      P-1 steps of M/P:  T = (P-1) alpha + (P-1)/P M beta
//   broadcast       pipelined chain root -> root+1 -> ... -> root-1, the
//                   message cut into P-1 chunks: step t moves chunk t-h over
//                   hop h, so 2(P-1)-1 steps each moving M/(P-1) per active hop
//                   T = (2P-3) (alpha + M/(P-1) beta)
//   reduce          as gloo runs it (gloo/reduce.cc): a ring reduce-scatter
//                   (P-1 steps of M/P), then every rank sends the reduced
//                   chunk it holds to the root, all at once (one step in
//                   which the root receives (P-1)/P M)
//                   T = P alpha + 2(P-1)/P M beta
//   all_to_all      pairwise exchange: step s = 1..P-1 sends rank r's block
//                   for r+s, M/P:  T = (P-1) alpha + (P-1)/P M beta
// (Thakur, Rabenseifner and Gropp, "Optimization of Collective Communication
// Operations in MPICH", IJHPCA 2005; Patarasuk and Yuan, "Bandwidth optimal
// all-reduction algorithms for clusters of workstations", JPDC 2009.)
//
// On two levels a step is paced by the slower one it uses: a ring over
// several nodes of several ranks each pays max(alpha_intra, alpha_inter) and
// M/P / min(B_intra, B_inter) per step. In the broadcast pipeline and the
// all-to-all the levels a step uses change from step to step; the closed form
// counts the steps of each kind.

#include <algorithm>

#include "simulator/collective/collective_algorithms.h"

namespace ssgd::sim::detail {
namespace {

Group all_ranks_from(const CollectiveShape& shape, std::int64_t first) {
  Group ring;
  for (std::int64_t i = 0; i < shape.ranks; ++i) {
    ring.push_back(static_cast<std::int32_t>((first + i) % shape.ranks));
  }
  return ring;
}

// Every rank but the root sends the root `block` at once (gloo's gather at the
// end of its reduce).
CollectiveStep gather_to_root(const CollectiveShape& shape, double block) {
  CollectiveStep step;
  for (std::int64_t r = 0; r < shape.ranks; ++r) {
    if (r == shape.root) continue;
    step.transfers.push_back({static_cast<std::int32_t>(r), static_cast<std::int32_t>(shape.root), block});
  }
  return step;
}

}  // namespace

CollectiveStep ring_step(const std::vector<Group>& rings, double bytes, std::int64_t repeat) {
  CollectiveStep step;
  step.repeat = repeat;
  for (const Group& ring : rings) {
    const std::size_t n = ring.size();
    if (n < 2) continue;
    for (std::size_t i = 0; i < n; ++i) {
      step.transfers.push_back({ring[i], ring[(i + 1) % n], bytes});
    }
  }
  return step;
}

std::vector<CollectiveStep> chain_broadcast(const Group& chain, double bytes) {
  const auto n = static_cast<std::int64_t>(chain.size());
  std::vector<CollectiveStep> steps;
  if (n < 2) return steps;
  const std::int64_t chunks = n - 1;
  const std::int64_t hops = n - 1;
  const double chunk_bytes = bytes / static_cast<double>(chunks);
  for (std::int64_t t = 0; t < chunks + hops - 1; ++t) {
    CollectiveStep step;
    // Hop h forwards chunk t - h, so hop h is busy for t - chunks < h <= t.
    for (std::int64_t h = std::max<std::int64_t>(0, t - chunks + 1); h <= std::min(hops - 1, t);
         ++h) {
      step.transfers.push_back({chain[h], chain[h + 1], chunk_bytes});
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

CostPhases chain_broadcast_cost(const CollectiveShape& shape, const Group& chain, double bytes) {
  const auto n = static_cast<std::int64_t>(chain.size());
  CostPhases phases;
  if (n < 2) return phases;
  const std::int64_t chunks = n - 1;
  const std::int64_t hops = n - 1;
  // inter_before[h]: hops before h that leave a node.
  std::vector<std::int64_t> inter_before(hops + 1, 0);
  for (std::int64_t h = 0; h < hops; ++h) {
    inter_before[h + 1] = inter_before[h] + (crosses_nodes(shape, chain[h], chain[h + 1]) ? 1 : 0);
  }
  const double chunk_bytes = bytes / static_cast<double>(chunks);
  for (std::int64_t t = 0; t < chunks + hops - 1; ++t) {
    const std::int64_t lo = std::max<std::int64_t>(0, t - chunks + 1);
    const std::int64_t hi = std::min(hops - 1, t);
    const std::int64_t inter = inter_before[hi + 1] - inter_before[lo];
    const std::int64_t intra = (hi - lo + 1) - inter;
    const CostPhase phase = uniform_phase(1, intra > 0, inter > 0, chunk_bytes);
    if (!phases.empty() && phases.back().intra_bytes == phase.intra_bytes &&
        phases.back().inter_bytes == phase.inter_bytes) {
      ++phases.back().repeat;
    } else {
      phases.push_back(phase);
    }
  }
  return phases;
}

std::vector<CollectiveStep> ring_decompose(CollectiveOp op, const CollectiveShape& shape,
                                           double bytes) {
  const std::int64_t p = shape.ranks;
  const double block = bytes / static_cast<double>(p);
  switch (op) {
    case CollectiveOp::kAllReduce:
      return {ring_step({all_ranks_from(shape, 0)}, block, 2 * (p - 1))};
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather: return {ring_step({all_ranks_from(shape, 0)}, block, p - 1)};
    case CollectiveOp::kBroadcast: return chain_broadcast(all_ranks_from(shape, shape.root), bytes);
    case CollectiveOp::kReduce: {
      std::vector<CollectiveStep> steps{ring_step({all_ranks_from(shape, 0)}, block, p - 1)};
      steps.push_back(gather_to_root(shape, block));
      return steps;
    }
    case CollectiveOp::kAllToAll: {
      std::vector<CollectiveStep> steps;
      for (std::int64_t s = 1; s < p; ++s) {
        CollectiveStep step;
        for (std::int64_t r = 0; r < p; ++r) {
          step.transfers.push_back(
              {static_cast<std::int32_t>(r), static_cast<std::int32_t>((r + s) % p), block});
        }
        steps.push_back(std::move(step));
      }
      return steps;
    }
  }
  return {};
}

CostPhases ring_cost(CollectiveOp op, const CollectiveShape& shape, double bytes) {
  const std::int64_t p = shape.ranks;
  const std::int64_t k = shape.ranks_per_node;
  const bool one_node = shape.nodes() == 1;
  // The ring uses intra-node edges unless every rank has a node of its own,
  // and inter-node edges unless all share one.
  const bool intra = k > 1;
  const bool inter = !one_node;
  const double block = bytes / static_cast<double>(p);
  switch (op) {
    case CollectiveOp::kAllReduce: return {uniform_phase(2 * (p - 1), intra, inter, block)};
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather: return {uniform_phase(p - 1, intra, inter, block)};
    case CollectiveOp::kBroadcast:
      return chain_broadcast_cost(shape, all_ranks_from(shape, shape.root), bytes);
    case CollectiveOp::kReduce:
      return {uniform_phase(p - 1, intra, inter, block), busiest_ports(shape, gather_to_root(shape, block))};
    case CollectiveOp::kAllToAll: {
      // Offset s keeps some pair inside a node iff s < k or s > P-k; with more
      // than one node every offset also has a pair that crosses.
      if (one_node) return {uniform_phase(p - 1, true, false, block)};
      CostPhases phases;
      if (k > 1) phases.push_back(uniform_phase(2 * (k - 1), true, true, block));
      if (p - 1 > 2 * (k - 1)) {
        phases.push_back(uniform_phase(p - 1 - 2 * (k - 1), false, true, block));
      }
      return phases;
    }
  }
  return {};
}

}  // namespace ssgd::sim::detail
