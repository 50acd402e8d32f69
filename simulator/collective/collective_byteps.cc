// BytePS all-reduce (Jiang et al., "A Unified Architecture for Accelerating
// Distributed DNN Training in Heterogeneous GPU/CPU Clusters", OSDI 2020).
// N GPU machines of k GPUs (P = Nk ranks) each run a summation server on
// their CPU; C CPU machines run one more each. Servers are endpoints
// P..P+N-1 (server s on GPU machine s) and P+N..P+N+C-1 (on nodes of their
// own): the shape has servers = N + C, cpu_servers = C, servers_colocated.
//
//   1. reduce-scatter inside every machine (ring, k-1 steps of M/k): each
//      GPU holds the machine's sum of one k-th of the model. BytePS reduces
//      each partition to a root GPU and rotates the roots over partitions,
//      which loads the machine's links the same way.
//   2. push and pull: each GPU sends its k-th to the servers, a share x of
//      it spread over the C CPU servers and 1-x over the N GPU-machine
//      servers (its own machine's over PCIe), and pulls the sums back.
//      BytePS cuts tensors into partitions (4 MB by default) and pipelines
//      them, so pushes and pulls run at once on both directions of every NIC:
//      one step, counted as two latencies (a push, then a pull) and the
//      bytes of both directions at once (repeat 2, each carrying half).
//   3. all-gather inside every machine (ring, k-1 steps of M/k).
// x is the paper's optimum (byteps_cpu_share, section 3.2). One machine
// (N = 1) sends nothing over the network: steps 1 and 3 are an intra-node
// all-reduce.
//
// Closed form. The GPU machine's GPUs and its server share the machine's NIC
// (one NIC per machine, the paper's setting). Over steps 2's two halves, per
// direction:
//   GPU machine NIC  x M + 2 (1-x) M (N-1)/N   (its pushes, the pulls it serves)
//   CPU machine NIC  N x M / C
//   server's PCIe    (1-x) M / N               (its own GPUs' shares)
//   T = 2(k-1) (alpha_intra + M/k beta_intra)
//       + 2 alpha + max(max(NICs) beta_inter, (1-x) M/N beta_intra)
// With C = 0 the network term is all-reduce's optimum 2(N-1)/N M beta; with
// C = N it is M beta, half of it. The stages are not pipelined with each
// other (steps 1 and 3 do not overlap step 2), and summation on the servers'
// CPUs is taken as free (memory bandwidth well above the NIC's).

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "simulator/collective/collective_algorithms.h"

namespace ssgd::sim {

double byteps_cpu_share(std::int64_t gpu_machines, std::int64_t cpu_machines) {
  if (gpu_machines < 1 || cpu_machines < 0) {
    throw std::invalid_argument(
        fmt::format("byteps: needs at least 1 GPU machine and 0 CPU machines, got {} and {}",
                    gpu_machines, cpu_machines));
  }
  if (gpu_machines == 1 || cpu_machines == 0) return 0.0;
  const auto n = static_cast<double>(gpu_machines);
  const auto k = static_cast<double>(cpu_machines);
  return std::min(1.0, 2 * k * (n - 1) / (n * n + k * n - 2 * k));
}

namespace detail {
namespace {

// At most this many flows between a rank and one server (decompose).
constexpr std::int64_t kMaxPiecesPerServer = 8;

void check_byteps_shape(const CollectiveShape& shape) {
  if (!shape.servers_colocated || shape.servers != shape.nodes() + shape.cpu_servers) {
    throw std::invalid_argument(fmt::format(
        "byteps: a server on each of the {} GPU machines and {} on CPU machines ({} servers, "
        "colocated); the shape has {} servers{}",
        shape.nodes(), shape.cpu_servers, shape.nodes() + shape.cpu_servers, shape.servers,
        shape.servers_colocated ? "" : " on nodes of their own"));
  }
}

// One ring step inside every machine, repeated k-1 times.
CollectiveStep intra_node_rings(const CollectiveShape& shape, double bytes) {
  const std::int64_t k = shape.ranks_per_node;
  std::vector<Group> rings;
  for (std::int64_t n = 0; n < shape.nodes(); ++n) {
    Group& g = rings.emplace_back();
    for (std::int64_t j = 0; j < k; ++j) g.push_back(static_cast<std::int32_t>(n * k + j));
  }
  return ring_step(rings, bytes / static_cast<double>(k), k - 1);
}

}  // namespace

std::vector<CollectiveStep> byteps_decompose(CollectiveOp /*op: all_reduce*/,
                                             const CollectiveShape& shape, double bytes) {
  check_byteps_shape(shape);
  const std::int64_t p = shape.ranks;
  const std::int64_t k = shape.ranks_per_node;
  const std::int64_t nodes = shape.nodes();
  const std::int64_t cpus = shape.cpu_servers;
  std::vector<CollectiveStep> steps;
  if (k > 1) steps.push_back(intra_node_rings(shape, bytes));
  if (nodes > 1) {
    const double x = byteps_cpu_share(nodes, cpus);
    const double slice = bytes / static_cast<double>(k);
    // Each half of the two-step push-and-pull carries half of every transfer.
    const double to_gpu_server = slice * (1 - x) / static_cast<double>(nodes) / 2;
    const double to_cpu_server = cpus > 0 ? slice * x / static_cast<double>(cpus) / 2 : 0.0;
    // BytePS sends equal partitions, more of them to the servers with the
    // larger share; a link shared by max-min gives each flow the same rate,
    // so a server's bytes travel as that many flows of about one size.
    std::int64_t gpu_pieces = 1;
    std::int64_t cpu_pieces = 1;
    if (to_gpu_server > 0 && to_cpu_server > 0) {
      const double ratio = to_cpu_server / to_gpu_server;
      const auto pieces = [](double r) {
        return std::clamp<std::int64_t>(std::llround(r), 1, kMaxPiecesPerServer);
      };
      (ratio >= 1 ? cpu_pieces : gpu_pieces) = pieces(ratio >= 1 ? ratio : 1 / ratio);
    }
    CollectiveStep both;
    both.repeat = 2;
    for (std::int64_t r = 0; r < p; ++r) {
      for (std::int64_t s = 0; s < nodes + cpus; ++s) {
        const bool on_gpu_machine = s < nodes;
        const double b = on_gpu_machine ? to_gpu_server : to_cpu_server;
        if (b <= 0) continue;
        const std::int64_t pieces = on_gpu_machine ? gpu_pieces : cpu_pieces;
        const auto rank = static_cast<std::int32_t>(r);
        const auto server = static_cast<std::int32_t>(p + s);
        for (std::int64_t i = 0; i < pieces; ++i) {
          both.transfers.push_back({rank, server, b / static_cast<double>(pieces)});
          both.transfers.push_back({server, rank, b / static_cast<double>(pieces)});
        }
      }
    }
    steps.push_back(std::move(both));
  }
  if (k > 1) steps.push_back(intra_node_rings(shape, bytes));
  return steps;
}

CostPhases byteps_cost(CollectiveOp /*op: all_reduce*/, const CollectiveShape& shape,
                       double bytes) {
  check_byteps_shape(shape);
  const std::int64_t k = shape.ranks_per_node;
  const std::int64_t nodes = shape.nodes();
  const auto n = static_cast<double>(nodes);
  CostPhases phases;
  if (k > 1) phases.push_back(uniform_phase(k - 1, true, false, bytes / static_cast<double>(k)));
  if (nodes > 1) {
    const double x = byteps_cpu_share(nodes, shape.cpu_servers);
    const std::int64_t remote_gpu_servers = x < 1 ? nodes - 1 : 0;
    const std::int64_t cpu_servers = x > 0 ? shape.cpu_servers : 0;
    double nic = x * bytes + 2 * (1 - x) * bytes * (n - 1) / n;
    // Connections through the NIC one way: the GPUs' pushes (or the pulls
    // coming back) and the pulls its server answers.
    std::int64_t connections = k * (remote_gpu_servers + cpu_servers) + k * remote_gpu_servers;
    if (shape.cpu_servers > 0) {
      const double cpu_nic = n * x * bytes / static_cast<double>(shape.cpu_servers);
      if (cpu_nic > nic) {
        nic = cpu_nic;
        connections = nodes * k;
      }
    }
    CostPhase both;
    both.repeat = 2;
    both.inter_bytes = nic / 2;
    both.inter_connections = std::max<std::int64_t>(connections, 1);
    both.intra_bytes = (1 - x) * bytes / n / 2;
    phases.push_back(both);
  }
  if (k > 1) phases.push_back(uniform_phase(k - 1, true, false, bytes / static_cast<double>(k)));
  return phases;
}

}  // namespace detail
}  // namespace ssgd::sim
