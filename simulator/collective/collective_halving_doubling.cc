// Recursive halving and doubling (Thakur, Rabenseifner and Gropp,
// "Optimization of Collective Communication Operations in MPICH", IJHPCA
// 2005; Rabenseifner, "Optimization of Collective Reduction Operations",
// ICCS 2004).
//
// For P a power of two, in the step at distance m rank r exchanges with
// r ^ m:
//   reduce_scatter  recursive halving, m = 1, 2, ..., P/2, moving M/(2m):
//                   T = log2 P alpha + (P-1)/P M beta
//   all_gather      recursive doubling, m = P/2, ..., 2, 1, moving M/(2m):
//                   T = log2 P alpha + (P-1)/P M beta
//   all_reduce      Rabenseifner: the two above, 2 log2 P steps:
//                   T = 2 log2 P alpha + 2(P-1)/P M beta
// The largest messages go to the nearest partners (MPICH's order), so on
// consecutive placement they stay inside a node.
//
// Other P fold in first (as in Thakur et al.'s all-reduce): with P' the largest power
// of two below P and r = P - P', each even rank 2i < 2r sends its data to
// 2i+1 and sits out; the odd ranks 2i+1 and the ranks from 2r on run the
// power-of-two algorithm over P' and, in a last step, 2i+1 sends 2i its
// result. Two steps more:
//   all_reduce      fold M, unfold M: T = (2 log2 P' + 2) alpha + (2(P'-1)/P' + 2) M beta
//   reduce_scatter  fold M, unfold the sitting-out rank's block M/P
//   all_gather      fold the block M/P, unfold M
// In between, the P' ranks are taken to hold equal shares of the data (a
// fluid simplification: MPICH splits the blocks of the folded ranks unevenly).
//
// broadcast: binomial tree from the root (relabelled v = r - root mod P),
// ceil(log2 P) steps each moving M over every active edge; the first step
// spans the largest distance:  T = ceil(log2 P) (alpha + M beta).
//
// Every rank sends and receives at most one message per step, so a step's
// bytes are its busiest port's on each level it uses; which levels a step
// uses depends on where its pairs fall and is found by walking them.

#include <algorithm>

#include "simulator/collective/collective_algorithms.h"

namespace ssgd::sim::detail {
namespace {

// The ranks taking part in the power-of-two core and the fold around it.
struct Fold {
  std::int64_t pow2 = 1;                                   // P'
  std::int64_t extra = 0;                                  // r = P - P'
  [[nodiscard]] std::int32_t rank(std::int64_t i) const {  // core index -> rank
    return static_cast<std::int32_t>(i < extra ? 2 * i + 1 : i + extra);
  }
};

Fold make_fold(std::int64_t p) {
  Fold f;
  while (f.pow2 * 2 <= p) f.pow2 *= 2;
  f.extra = p - f.pow2;
  return f;
}

// One step of the plan: either the fold (2i -> 2i+1), the unfold
// (2i+1 -> 2i), or an exchange at distance m among the core.
struct PlanStep {
  enum Kind { kFold, kUnfold, kExchange } kind;
  std::int64_t distance = 0;
  double bytes = 0;
};

std::vector<PlanStep> plan(CollectiveOp op, const Fold& f, std::int64_t p, double m) {
  const double block = m / static_cast<double>(p);
  std::vector<PlanStep> steps;
  if (f.extra > 0) {
    steps.push_back({PlanStep::kFold, 0, op == CollectiveOp::kAllGather ? block : m});
  }
  if (op != CollectiveOp::kAllGather) {  // recursive halving
    for (std::int64_t d = 1; d < f.pow2; d *= 2) {
      steps.push_back({PlanStep::kExchange, d, m / static_cast<double>(2 * d)});
    }
  }
  if (op != CollectiveOp::kReduceScatter) {  // recursive doubling
    for (std::int64_t d = f.pow2 / 2; d >= 1; d /= 2) {
      steps.push_back({PlanStep::kExchange, d, m / static_cast<double>(2 * d)});
    }
  }
  if (f.extra > 0) {
    steps.push_back({PlanStep::kUnfold, 0, op == CollectiveOp::kReduceScatter ? block : m});
  }
  return steps;
}

std::vector<Transfer> transfers(const PlanStep& s, const Fold& f) {
  std::vector<Transfer> out;
  switch (s.kind) {
    case PlanStep::kFold:
      for (std::int32_t i = 0; i < f.extra; ++i) out.push_back({2 * i, 2 * i + 1, s.bytes});
      break;
    case PlanStep::kUnfold:
      for (std::int32_t i = 0; i < f.extra; ++i) out.push_back({2 * i + 1, 2 * i, s.bytes});
      break;
    case PlanStep::kExchange:
      for (std::int64_t i = 0; i < f.pow2; ++i) {
        out.push_back({f.rank(i), f.rank(i ^ s.distance), s.bytes});
      }
      break;
  }
  return out;
}

// Binomial broadcast edges of a group of n, step by step: in the step at
// distance d (largest first), member j with j % 2d == 0 sends to j + d.
std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> binomial_edges(std::int64_t n) {
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> steps;
  for (std::int64_t d = (std::int64_t{1} << ceil_log2(n)) / 2; d >= 1; d /= 2) {
    auto& edges = steps.emplace_back();
    for (std::int64_t j = 0; j + d < n; j += 2 * d) edges.emplace_back(j, j + d);
  }
  return steps;
}

std::vector<CollectiveStep> binomial(const std::vector<Group>& groups, double bytes, bool reduce) {
  std::vector<CollectiveStep> steps;
  if (groups.empty()) return steps;
  for (const auto& edges : binomial_edges(static_cast<std::int64_t>(groups.front().size()))) {
    CollectiveStep& step = steps.emplace_back();
    for (const Group& g : groups) {
      for (const auto& [from, to] : edges) {
        step.transfers.push_back(reduce ? Transfer{g[to], g[from], bytes}
                                        : Transfer{g[from], g[to], bytes});
      }
    }
  }
  if (reduce) std::reverse(steps.begin(), steps.end());
  return steps;
}

std::vector<Group> whole_group_from_root(const CollectiveShape& shape) {
  Group g;
  for (std::int64_t v = 0; v < shape.ranks; ++v) {
    g.push_back(static_cast<std::int32_t>((v + shape.root) % shape.ranks));
  }
  return {g};
}

}  // namespace

std::vector<CollectiveStep> binomial_broadcast(const std::vector<Group>& groups, double bytes) {
  return binomial(groups, bytes, false);
}

std::vector<CollectiveStep> binomial_reduce(const std::vector<Group>& groups, double bytes) {
  return binomial(groups, bytes, true);
}

CostPhases binomial_cost(const CollectiveShape& shape, const std::vector<Group>& groups,
                         double bytes) {
  CostPhases phases;
  if (groups.empty()) return phases;
  for (const auto& edges : binomial_edges(static_cast<std::int64_t>(groups.front().size()))) {
    bool intra = false;
    bool inter = false;
    for (const Group& g : groups) {
      for (const auto& [from, to] : edges) {
        (crosses_nodes(shape, g[from], g[to]) ? inter : intra) = true;
      }
    }
    phases.push_back(uniform_phase(1, intra, inter, bytes));
  }
  return phases;
}

std::vector<CollectiveStep> halving_doubling_decompose(CollectiveOp op,
                                                       const CollectiveShape& shape, double bytes) {
  if (op == CollectiveOp::kBroadcast) {
    return binomial_broadcast(whole_group_from_root(shape), bytes);
  }
  const Fold f = make_fold(shape.ranks);
  std::vector<CollectiveStep> steps;
  for (const PlanStep& s : plan(op, f, shape.ranks, bytes)) steps.push_back({transfers(s, f), 1});
  return steps;
}

CostPhases halving_doubling_cost(CollectiveOp op, const CollectiveShape& shape, double bytes) {
  if (op == CollectiveOp::kBroadcast) {
    return binomial_cost(shape, whole_group_from_root(shape), bytes);
  }
  const Fold f = make_fold(shape.ranks);
  CostPhases phases;
  for (const PlanStep& s : plan(op, f, shape.ranks, bytes)) {
    bool intra = false;
    bool inter = false;
    if (s.kind == PlanStep::kExchange) {
      for (std::int64_t i = 0; i < f.pow2; ++i) {
        (crosses_nodes(shape, f.rank(i), f.rank(i ^ s.distance)) ? inter : intra) = true;
      }
    } else {
      for (std::int64_t i = 0; i < f.extra; ++i) {
        (crosses_nodes(shape, 2 * i, 2 * i + 1) ? inter : intra) = true;
      }
    }
    phases.push_back(uniform_phase(1, intra, inter, s.bytes));
  }
  return phases;
}

}  // namespace ssgd::sim::detail
