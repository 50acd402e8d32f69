// Double binary tree (NCCL 2.4; Sanders, Speck and Träff, "Two-tree
// algorithms for full bandwidth broadcast, reduction and scan", Parallel
// Computing 2009; NVIDIA blog "Massively Scale Your Deep Learning Training
// with NCCL 2.4", 2019).
//
// Tree A is NCCL's binary tree over ranks (ncclGetBtree): rank 0 is the root
// with one child, and for v > 0 with lowest set bit b the parent is
// (v ^ b) | 2b, or v ^ b when that is not a rank. Tree B is A mirrored
// (v -> P-1-v) for even P and shifted by one (v -> v+1 mod P) for odd P
// (ncclGetDtree), so the leaves of one are mostly the inner nodes of the
// other. Both trees have depth D = ceil(log2 P).
//
// all_reduce: each tree carries half the buffer, M/2. Not pipelined: D
// reduce steps (in step i the nodes at depth D-i of both trees send their
// half to their parent), then D broadcast steps back down, 2 ceil(log2 P)
// steps. An inner node receives two halves from its children in one step,
// so on one level
//   T = 2 ceil(log2 P) alpha + beta x sum over steps of the busiest port
// and for P a power of two the sum is (2 log2 P - 1) M: every step moves M
// through the busiest port but those next to the roots, which have one child
// (DESIGN.md's binary tree row, 2 log2 P alpha + 2 log2 P M beta, rounds this
// up). How the trees fall on nodes decides which steps leave a node, so the
// closed form takes each step's busiest port of each level from the trees.
//
// broadcast: the trees are relabelled so the root is v = 0, tree A's root.
// In the first step the root also sends tree B's half to tree B's root; tree
// B then runs one step behind A, skipping the edge into the broadcast root:
// ceil(log2 P) + 1 steps (fewer for P = 2), each inner node sending M/2 to
// each child.
//
// NCCL builds these trees over nodes with a chain inside each node; here they
// span ranks directly, so the closed form stays independent of a topology.

#include <algorithm>
#include <array>
#include <utility>

#include "simulator/collective/collective_algorithms.h"

namespace ssgd::sim::detail {

constexpr std::int64_t kNoParent = -1;

std::int64_t btree_parent(std::int64_t v, std::int64_t p) {
  if (v == 0) return kNoParent;
  const std::int64_t bit = v & -v;
  const std::int64_t up = (v ^ bit) | (bit << 1);
  return up < p ? up : v ^ bit;
}

namespace {

// parent[v] and depth[v] of one tree over labels 0..P-1.
struct Tree {
  std::vector<std::int64_t> parent;
  std::vector<std::int64_t> depth;
  std::int64_t root = 0;
};

Tree make_tree(std::int64_t p, bool second) {
  Tree t;
  t.parent = nccl_tree_parents(p, second);
  for (std::int64_t v = 0; v < p; ++v) {
    if (t.parent[v] == kNoParent) t.root = v;
  }
  t.depth.assign(p, -1);
  t.depth[t.root] = 0;
  std::vector<std::int64_t> path;
  for (std::int64_t v = 0; v < p; ++v) {
    // Walk up to a node of known depth, then fill the path back down.
    path.clear();
    std::int64_t u = v;
    while (t.depth[u] < 0) {
      path.push_back(u);
      u = t.parent[u];
    }
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      t.depth[*it] = t.depth[t.parent[*it]] + 1;
    }
  }
  return t;
}

std::int64_t max_depth(const Tree& t) { return *std::max_element(t.depth.begin(), t.depth.end()); }

// A step's transfers as added; to_steps() makes a pair used by both trees
// in one step one transfer (its bytes summed in the order added) and orders
// them by (src, dst).
using StepLoad = std::vector<Transfer>;

void add(StepLoad& load, std::int64_t src, std::int64_t dst, double bytes) {
  load.push_back({static_cast<std::int32_t>(src), static_cast<std::int32_t>(dst), bytes});
}

std::vector<CollectiveStep> to_steps(std::vector<StepLoad>& loads) {
  std::vector<CollectiveStep> steps;
  for (StepLoad& load : loads) {
    if (load.empty()) continue;
    std::stable_sort(load.begin(), load.end(), [](const Transfer& a, const Transfer& b) {
      return a.src != b.src ? a.src < b.src : a.dst < b.dst;
    });
    CollectiveStep step;
    step.transfers.reserve(load.size());
    for (const Transfer& t : load) {
      if (!step.transfers.empty() && step.transfers.back().src == t.src &&
          step.transfers.back().dst == t.dst) {
        step.transfers.back().bytes += t.bytes;
      } else {
        step.transfers.push_back(t);
      }
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

std::vector<CollectiveStep> all_reduce(const CollectiveShape& shape, double bytes) {
  const std::int64_t p = shape.ranks;
  const std::array trees = {make_tree(p, false), make_tree(p, true)};
  const std::int64_t depth = std::max(max_depth(trees[0]), max_depth(trees[1]));
  const double half = bytes / 2;
  std::vector<StepLoad> loads(2 * depth);
  for (const Tree& t : trees) {
    for (std::int64_t v = 0; v < p; ++v) {
      if (t.parent[v] == kNoParent) continue;
      // Reduce: depth d sends up in step depth - d; broadcast: depth d
      // receives in step depth + d - 1.
      add(loads[depth - t.depth[v]], v, t.parent[v], half);
      add(loads[depth + t.depth[v] - 1], t.parent[v], v, half);
    }
  }
  return to_steps(loads);
}

std::vector<CollectiveStep> broadcast(const CollectiveShape& shape, double bytes) {
  const std::int64_t p = shape.ranks;
  const auto rank = [&](std::int64_t v) { return (v + shape.root) % p; };
  const Tree a = make_tree(p, false);
  const Tree b = make_tree(p, true);
  const double half = bytes / 2;
  std::vector<StepLoad> loads(std::max(max_depth(a), max_depth(b) + 1));
  add(loads[0], rank(0), rank(b.root), half);
  for (std::int64_t v = 1; v < p; ++v) add(loads[a.depth[v] - 1], rank(a.parent[v]), rank(v), half);
  for (std::int64_t v = 1; v < p; ++v) {
    if (b.parent[v] != kNoParent) add(loads[b.depth[v]], rank(b.parent[v]), rank(v), half);
  }
  return to_steps(loads);
}

}  // namespace

std::vector<CollectiveStep> tree_decompose(CollectiveOp op, const CollectiveShape& shape,
                                           double bytes) {
  return op == CollectiveOp::kBroadcast ? broadcast(shape, bytes) : all_reduce(shape, bytes);
}

CostPhases tree_cost(CollectiveOp op, const CollectiveShape& shape, double bytes) {
  CostPhases phases;
  for (const CollectiveStep& step : tree_decompose(op, shape, bytes)) {
    phases.push_back(busiest_ports(shape, step));
  }
  return phases;
}

}  // namespace ssgd::sim::detail

namespace ssgd::sim {

std::vector<std::int64_t> nccl_tree_parents(std::int64_t n, bool second) {
  std::vector<std::int64_t> parent(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
  for (std::int64_t v = 0; v < n; ++v) {
    if (!second) {
      parent[v] = detail::btree_parent(v, n);
    } else if (n % 2 == 0) {  // mirror
      const std::int64_t u = detail::btree_parent(n - 1 - v, n);
      parent[v] = u == detail::kNoParent ? detail::kNoParent : n - 1 - u;
    } else {  // shift
      const std::int64_t u = detail::btree_parent((v - 1 + n) % n, n);
      parent[v] = u == detail::kNoParent ? detail::kNoParent : (u + 1) % n;
    }
  }
  return parent;
}

}  // namespace ssgd::sim
