// 2D-torus all-reduce (Mikami et al., "Massively Distributed SGD:
// ImageNet/ResNet-50 Training in a Flash", arXiv:1811.05233, 2018; Ying et
// al., "Image Classification at Supercomputer Scale", arXiv:1811.06992,
// 2018). The ranks form a grid of X = ranks_per_node columns by Y = nodes
// rows; rank r = y X + x sits in row y (its node) and column x (its local
// index).
//   1. reduce-scatter along every row at once (a ring inside each node):
//      X-1 steps of M/X
//   2. all-reduce of each rank's M/X piece along every column at once (X
//      rings across the nodes, one per local index): 2(Y-1) steps of M/(XY)
//   3. all-gather along every row: X-1 steps of M/X
//   T = 2(X-1) (alpha_intra + M/X beta_intra) + 2(Y-1) (alpha_inter + M/(XY) beta_inter)
// Rows stay inside a node and columns cross between nodes, so each step uses
// one level. With X = 1 this is the ring over the nodes, with Y = 1 the ring
// inside the node; on one level it is the ring's 2(P-1)/P M beta with
// 2(X-1) + 2(Y-1) latency terms instead of 2(P-1).

#include "simulator/collective/collective_algorithms.h"

namespace ssgd::sim::detail {
namespace {

std::vector<Group> rows(const CollectiveShape& shape) {
  const std::int64_t x = shape.ranks_per_node;
  std::vector<Group> out;
  for (std::int64_t y = 0; y < shape.nodes(); ++y) {
    Group& row = out.emplace_back();
    for (std::int64_t i = 0; i < x; ++i) row.push_back(static_cast<std::int32_t>(y * x + i));
  }
  return out;
}

std::vector<Group> columns(const CollectiveShape& shape) {
  const std::int64_t x = shape.ranks_per_node;
  std::vector<Group> out;
  for (std::int64_t i = 0; i < x; ++i) {
    Group& column = out.emplace_back();
    for (std::int64_t y = 0; y < shape.nodes(); ++y) {
      column.push_back(static_cast<std::int32_t>(y * x + i));
    }
  }
  return out;
}

}  // namespace

std::vector<CollectiveStep> torus2d_decompose(CollectiveOp /*op: all_reduce*/,
                                              const CollectiveShape& shape, double bytes) {
  const std::int64_t x = shape.ranks_per_node;
  const std::int64_t y = shape.nodes();
  const double piece = bytes / static_cast<double>(x);
  std::vector<CollectiveStep> steps;
  if (x > 1) steps.push_back(ring_step(rows(shape), piece, x - 1));
  if (y > 1) {
    steps.push_back(ring_step(columns(shape), piece / static_cast<double>(y), 2 * (y - 1)));
  }
  if (x > 1) steps.push_back(ring_step(rows(shape), piece, x - 1));
  return steps;
}

CostPhases torus2d_cost(CollectiveOp /*op: all_reduce*/, const CollectiveShape& shape,
                        double bytes) {
  const std::int64_t x = shape.ranks_per_node;
  const std::int64_t y = shape.nodes();
  const double piece = bytes / static_cast<double>(x);
  CostPhases phases;
  if (x > 1) phases.push_back(uniform_phase(2 * (x - 1), true, false, piece));
  if (y > 1) {
    phases.push_back(uniform_phase(2 * (y - 1), false, true, piece / static_cast<double>(y)));
  }
  return phases;
}

}  // namespace ssgd::sim::detail
