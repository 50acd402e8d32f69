// Parameter-server all-reduce (Li et al., "Scaling Distributed Machine
// Learning with the Parameter Server", OSDI 2014; Jiang et al., "A Unified
// Architecture for Accelerating Distributed DNN Training in Heterogeneous
// GPU/CPU Clusters" (BytePS), OSDI 2020). The buffer is sharded over K
// servers, endpoints P..P+K-1:
//   push  every rank sends M/K to each server
//   pull  each server sends its M/K back to every rank
// Two steps. Each server's in-port takes P pushes and its out-port P pulls;
// each rank's port carries K shards. Servers on nodes of their own:
//   T = 2 alpha_inter + 2 max(P, K)/K M beta_inter   (2 alpha + 2 (P/K) M beta for K <= P)
//
// Colocated servers (server s on node s % N, N = P/k nodes of k ranks; as in
// BytePS's colocated mode and MXNet's default launch) are endpoints of their
// own with their own ports, and a transfer pays the level it crosses:
//   - a server receives k shards from its own node over intra and P-k from
//     other nodes over inter (only traffic that leaves a node counts against
//     the server's inter-node link);
//   - a rank on a node with c servers sends c shards over intra and K-c over
//     inter; node 0 has the most servers, ceil(K/N), and some node the
//     fewest, floor(K/N).
//   per step: alpha = the larger latency (N > 1), and the slower of
//     max(k, ceil(K/N)) M/K beta_intra and max(P-k, K-floor(K/N)) M/K beta_inter
//   T = 2 x that step; on one node all of it is intra: 2 (alpha_intra + max(P, K)/K M beta_intra).
// The pull mirrors the push, so it costs the same.

#include <algorithm>
#include <stdexcept>

#include "simulator/collective/collective_algorithms.h"

namespace ssgd::sim::detail {
namespace {

void check_parameter_server_shape(const CollectiveShape& shape) {
  if (shape.servers_colocated && shape.cpu_servers > 0) {
    throw std::invalid_argument(
        "parameter_server: its servers are all colocated or all on nodes of their own; "
        "byteps mixes the two");
  }
}

}  // namespace

std::vector<CollectiveStep> parameter_server_decompose(CollectiveOp /*op: all_reduce*/,
                                                       const CollectiveShape& shape, double bytes) {
  check_parameter_server_shape(shape);
  const std::int64_t p = shape.ranks;
  const std::int64_t servers = shape.servers;
  const double shard = bytes / static_cast<double>(servers);
  CollectiveStep push;
  CollectiveStep pull;
  for (std::int64_t r = 0; r < p; ++r) {
    for (std::int64_t s = 0; s < servers; ++s) {
      push.transfers.push_back(
          {static_cast<std::int32_t>(r), static_cast<std::int32_t>(p + s), shard});
    }
  }
  for (std::int64_t s = 0; s < servers; ++s) {
    for (std::int64_t r = 0; r < p; ++r) {
      pull.transfers.push_back(
          {static_cast<std::int32_t>(p + s), static_cast<std::int32_t>(r), shard});
    }
  }
  return {push, pull};
}

CostPhases parameter_server_cost(CollectiveOp /*op: all_reduce*/, const CollectiveShape& shape,
                                 double bytes) {
  check_parameter_server_shape(shape);
  const std::int64_t p = shape.ranks;
  const std::int64_t k = shape.ranks_per_node;
  const std::int64_t servers = shape.servers;
  const std::int64_t nodes = shape.nodes();
  const double shard = bytes / static_cast<double>(servers);
  if (!shape.servers_colocated) {
    // The busiest port takes a shard from each of P ranks, or sends one to each of K servers.
    CostPhase step = uniform_phase(2, false, true, static_cast<double>(std::max(p, servers)) * shard);
    step.inter_connections = std::max(p, servers);
    return {step};
  }
  const std::int64_t most_local = (servers + nodes - 1) / nodes;
  const std::int64_t fewest_local = servers / nodes;
  CostPhase step;
  step.repeat = 2;
  step.intra_bytes = static_cast<double>(std::max(k, most_local)) * shard;
  if (nodes > 1) {
    step.inter_connections = std::max(p - k, servers - fewest_local);
    step.inter_bytes = static_cast<double>(step.inter_connections) * shard;
  }
  return {step};
}

}  // namespace ssgd::sim::detail
