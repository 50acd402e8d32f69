#pragma once
// Internal to simulator/collective: what each algorithm file provides to the
// dispatch in collective.cc, and the step patterns several algorithms share.
// Callers outside this folder use collective.h.
//
// Every algorithm gives, for a checked shape with P >= 2 and M > 0:
//   - <name>_decompose(): its lock-step steps (collective.h);
//   - <name>_cost(): its closed form as CostPhases, groups of identical steps
//     with the bytes of the busiest port of each link level in one step.
// collective.cc turns the phases into a time:
//   T = sum over phases of repeat x (alpha + max(intra_bytes / B_intra, inter_bytes / B_inter))
// where alpha is the largest latency among the levels the step uses (those
// with bytes > 0). Each endpoint has its own full-duplex port per level (a
// GPU's NVLink and its NIC), so "busiest port" is the most bytes that one
// endpoint sends, or receives, over one level in one step.

#include <cstdint>
#include <vector>

#include "simulator/collective/collective.h"

namespace ssgd::sim::detail {

using CostPhases = std::vector<CostPhase>;

// A phase whose every port carries `port_bytes` on the levels it uses.
CostPhase uniform_phase(std::int64_t repeat, bool intra, bool inter, double port_bytes);

// Whether endpoints a and b are on different nodes.
bool crosses_nodes(const CollectiveShape& shape, std::int64_t a, std::int64_t b);

// The busiest port of each level over a step's transfers, for algorithms
// whose per-step load depends on how an irregular structure falls on nodes.
CostPhase busiest_ports(const CollectiveShape& shape, const CollectiveStep& step);

// Shared patterns (collective_ring.cc).
using Group = std::vector<std::int32_t>;  // endpoints in algorithm order
// One step of every ring in `rings` at once: ring[i] -> ring[i+1 mod n].
CollectiveStep ring_step(const std::vector<Group>& rings, double bytes, std::int64_t repeat);
// Pipelined broadcast down a chain from chain[0], the message cut into n-1
// chunks: 2n-3 steps, each active hop moving M/(n-1).
std::vector<CollectiveStep> chain_broadcast(const Group& chain, double bytes);
CostPhases chain_broadcast_cost(const CollectiveShape& shape, const Group& chain, double bytes);

// Shared patterns (collective_halving_doubling.cc): binomial trees run in
// every group at once, group[0] the root; all groups have the same size n.
// ceil(log2 n) steps, each moving M over every active edge.
std::vector<CollectiveStep> binomial_broadcast(const std::vector<Group>& groups, double bytes);
std::vector<CollectiveStep> binomial_reduce(const std::vector<Group>& groups, double bytes);
CostPhases binomial_cost(const CollectiveShape& shape, const std::vector<Group>& groups,
                         double bytes);

// ceil(log2 n) for n >= 1.
std::int64_t ceil_log2(std::int64_t n);

// The algorithms; `op` is one the algorithm implements (collective.cc checks).
std::vector<CollectiveStep> ring_decompose(CollectiveOp op, const CollectiveShape& shape,
                                           double bytes);
CostPhases ring_cost(CollectiveOp op, const CollectiveShape& shape, double bytes);

std::vector<CollectiveStep> tree_decompose(CollectiveOp op, const CollectiveShape& shape,
                                           double bytes);
CostPhases tree_cost(CollectiveOp op, const CollectiveShape& shape, double bytes);

std::vector<CollectiveStep> halving_doubling_decompose(CollectiveOp op,
                                                       const CollectiveShape& shape, double bytes);
CostPhases halving_doubling_cost(CollectiveOp op, const CollectiveShape& shape, double bytes);

std::vector<CollectiveStep> hierarchical_decompose(CollectiveOp op, const CollectiveShape& shape,
                                                   double bytes);
CostPhases hierarchical_cost(CollectiveOp op, const CollectiveShape& shape, double bytes);

std::vector<CollectiveStep> torus2d_decompose(CollectiveOp op, const CollectiveShape& shape,
                                              double bytes);
CostPhases torus2d_cost(CollectiveOp op, const CollectiveShape& shape, double bytes);

std::vector<CollectiveStep> parameter_server_decompose(CollectiveOp op,
                                                       const CollectiveShape& shape, double bytes);
CostPhases parameter_server_cost(CollectiveOp op, const CollectiveShape& shape, double bytes);

std::vector<CollectiveStep> byteps_decompose(CollectiveOp op, const CollectiveShape& shape,
                                             double bytes);
CostPhases byteps_cost(CollectiveOp op, const CollectiveShape& shape, double bytes);

}  // namespace ssgd::sim::detail
