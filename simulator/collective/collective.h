#pragma once
// Collective operations and the algorithms that implement them, independent
// of any platform. An algorithm is described two ways:
//   - decompose(): its steps, each a set of point-to-point transfers between
//     logical endpoints (ranks 0..P-1, parameter servers P..P+K-1). The
//     flow-level network model routes each transfer over the platform's links
//     and shares them by max-min fairness (simulator/network/flow_network.h).
//   - closed_form_time(): its alpha-beta (Hockney) cost over two link levels,
//     inside a node and between nodes, the analytical fast path.
// Both agree wherever transfers do not contend for a link beyond what the
// algorithm itself implies: tests/simulator/collective_test.cc checks it.
//
// Rank r sits on node r / ranks_per_node (consecutive ranks share a node), as
// NCCL and MPI place them by default.
//
// The formulas and their sources are in the comment above each algorithm's
// implementation file (collective_ring.cc, ...); docs/collectives.md
// tabulates them.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/collective_op.h"
#include "common/time.h"

namespace ssgd::sim {

// The operations (common/collective_op.h, shared with the readers of
// measurements below the simulator).
using ssgd::CollectiveOp;
using ssgd::collective_op_names;
using ssgd::parse_collective_op;
using ssgd::to_string;

enum class CollectiveAlgorithm {
  kAuto,              // chosen per call by choose_algorithm()
  kRing,
  kDoubleBinaryTree,
  kHalvingDoubling,   // recursive halving-doubling (Rabenseifner; Thakur et al.)
  kHierarchical,      // intra-node reduce, inter-node ring among leaders, intra-node broadcast
  kTorus2d,           // ranks_per_node x nodes grid
  kParameterServer,   // push to K servers, pull back
  kBytePS,            // BytePS: intra-node reduce-scatter, push/pull per machine, all-gather
  // NCCL's own (simulator/nccl): NVLink SHARP inside a node; NVLS inside and
  // trees between nodes; SHARP in the fabric, direct or chained; parallel
  // aggregated trees (one GPU a node). Only the NCCL library runs them.
  kNvls,
  kNvlsTree,
  kCollNetDirect,
  kCollNetChain,
  kPat,
};

// Which library runs the collectives: NCCL (its communicator's channels,
// algorithms and protocols, simulator/nccl) or the textbook algorithms of
// this file, one of each at a time, as MPI, gloo, Horovod's own or BytePS run
// them.
enum class CollectiveLibrary { kNccl, kGeneric };
const char* to_string(CollectiveLibrary library);
// Whether `library` runs `algorithm` (auto: both).
bool library_runs(CollectiveLibrary library, CollectiveAlgorithm algorithm);
// Throws std::invalid_argument unless `algorithm` (not auto; a textbook one
// the generic library runs) implements `op`, naming the textbook algorithms
// that do.
void check_algorithm(CollectiveOp op, CollectiveAlgorithm algorithm);

// Names as written in scenarios and on the command line (the operations'
// are in common/collective_op.h): "auto", "ring", "double_binary_tree", "halving_doubling", "hierarchical",
// "torus2d", "parameter_server", "byteps", "nvls", "nvls_tree",
// "collnet_direct", "collnet_chain", "pat" ("tree" is read as
// "double_binary_tree").
const char* to_string(CollectiveAlgorithm algorithm);
std::optional<CollectiveAlgorithm> parse_collective_algorithm(std::string_view name);
std::string collective_algorithm_names();  // "auto, ring, ..." for messages
// The textbook algorithms (the generic library's, auto aside): "ring,
// double_binary_tree, ..." for messages.
std::string textbook_algorithm_names();

struct CollectiveShape {
  std::int64_t ranks = 1;           // P >= 1
  std::int64_t ranks_per_node = 1;  // k >= 1, divides P
  std::int64_t servers = 1;         // parameter server: K >= 1
  bool servers_colocated = true;    // parameter server: server s runs on node s % nodes' host,
                                    // else on a node of its own
  std::int64_t cpu_servers = 0;     // 0 <= C <= K: the last C servers run on nodes of their own
                                    // (CPU machines) even when servers_colocated (byteps)
  std::int64_t root = 0;            // broadcast and reduce root, 0 <= root < P

  [[nodiscard]] std::int64_t nodes() const { return ranks / ranks_per_node; }
};

// The node an endpoint runs on: rank r on r / ranks_per_node; server P+s,
// when servers_colocated and s < K - C, on node s % nodes, else on node
// nodes + s - (K - C) (one of its own; K - C counts as 0 when not colocated). Two endpoints on one node talk over `intra`, others over `inter`.
// Throws std::out_of_range for an endpoint outside 0..P+K-1.
std::int64_t endpoint_node(const CollectiveShape& shape, std::int64_t endpoint);

// One point-to-point transfer. Endpoints 0..P-1 are ranks, P..P+K-1 servers.
struct Transfer {
  std::int32_t src = 0;
  std::int32_t dst = 0;
  double bytes = 0;  // fluid model: fractional bytes are fine
};

// Transfers that run at once; the next step starts when all have ended (lock
// step). `repeat` identical steps in a row are stored once: the ring's 2(P-1)
// steps are one CollectiveStep with repeat = 2(P-1). The flow-level model runs
// a repeated step as one of repeat x bytes after repeat x its latency, which
// is the pipelined steady state NCCL reaches.
struct CollectiveStep {
  std::vector<Transfer> transfers;
  std::int64_t repeat = 1;
};

// The algorithm's steps for `bytes` (the collective's buffer size M, per rank:
// the all-reduce's whole buffer, the all-gather's output, the all-to-all's
// send buffer). Empty for P = 1 or M = 0. Throws std::invalid_argument for
// kAuto, an algorithm that does not implement `op` (naming those that do),
// or a shape it cannot run (e.g. ranks_per_node not dividing P).
std::vector<CollectiveStep> decompose(CollectiveOp op, CollectiveAlgorithm algorithm,
                                      const CollectiveShape& shape, double bytes);

// Sum of repeats: the algorithm's step count.
std::int64_t step_count(const std::vector<CollectiveStep>& steps);

// One link level of the alpha-beta model.
struct LevelCost {
  Duration latency;                  // alpha: one message's start-up cost
  double bandwidth_bytes_per_s = 0;  // 1/beta, > 0
};

// Costs of the two levels. For P ranks on one node only `intra` is used;
// with one rank per node only `inter`. Parameter servers on nodes of their
// own are reached over `inter`.
// TCP sockets between nodes: a transfer is striped over `streams` TCP
// connections in chunks of at least `chunk_bytes` (NCCL's socket transport:
// MIN_CHUNKSIZE 64 KiB, src/transport/net_socket.cc), and one connection
// moves at most `stream_rate` (host CPU and kernel bound, below a fast
// NIC's line rate). Off when stream_rate is 0: the link's bandwidth alone.
struct StreamCap {
  std::int64_t streams = 1;
  double stream_rate_bytes_per_s = 0;  // 0: no bound
  double chunk_bytes = 65536;

  [[nodiscard]] bool on() const { return stream_rate_bytes_per_s > 0; }
  // The rate `connections` transfers of `transfer_bytes` each can reach
  // together: connections x min(streams, ceil(bytes / chunk), at least 1) x
  // stream_rate; infinity when off.
  [[nodiscard]] double rate(double transfer_bytes, std::int64_t connections = 1) const;
};

struct CollectiveCosts {
  CollectiveCosts() = default;
  CollectiveCosts(LevelCost intra_level, LevelCost inter_level, StreamCap streams = {})
      : intra(intra_level), inter(inter_level), inter_streams(streams) {}

  LevelCost intra;
  LevelCost inter;
  StreamCap inter_streams;  // bounds `inter` by the streams each step's transfers use
};

namespace detail {
// A group of identical steps of a closed form, with the bytes of the busiest
// port of each link level in one step (collective_algorithms.h).
struct CostPhase {
  std::int64_t repeat = 1;
  double intra_bytes = 0;  // busiest intra-node port in one step; 0: level unused
  double inter_bytes = 0;  // busiest inter-node port in one step; 0: level unused
  // Transfers that share the busiest inter-node port's bytes in one step,
  // each its own TCP connection (StreamCap).
  std::int64_t inter_connections = 1;
};
}  // namespace detail

// One algorithm's closed form on one shape. Every closed form is linear in
// the message size M, so its phases are worked out once, for M = 1, and each
// size then costs one pass over a handful of phases: large trees take
// O(P log P) to work out, which callers with many sizes should pay once.
class ClosedForm {
 public:
  // Same errors as decompose().
  ClosedForm(CollectiveOp op, CollectiveAlgorithm algorithm, const CollectiveShape& shape);
  // Rounded once to whole nanoseconds; zero for P = 1 or M = 0. Throws
  // std::invalid_argument on a negative or non-finite M or unusable costs.
  [[nodiscard]] Duration time(double bytes, const CollectiveCosts& costs) const;

 private:
  std::vector<detail::CostPhase> unit_phases_;
};

// The closed-form time, rounded once to whole nanoseconds; zero for P = 1 or
// M = 0. Same errors as decompose().
Duration closed_form_time(CollectiveOp op, CollectiveAlgorithm algorithm,
                          const CollectiveShape& shape, double bytes,
                          const CollectiveCosts& costs);

// The algorithms `auto` chooses among for `op`, in order of preference on a tie.
std::vector<CollectiveAlgorithm> auto_candidates(CollectiveOp op);

// The closed form on a flat network (one rank per node, one link level) as
// T = alpha_count x alpha + beta_factor x M x beta, for fitting alpha and beta
// to measurements (simulator/calibration). Same errors as decompose().
struct AlphaBetaTerms {
  double alpha_count = 0;  // latency terms paid one after another
  double beta_factor = 0;  // bytes over the busiest link, divided by M
};
AlphaBetaTerms alpha_beta_terms(CollectiveOp op, CollectiveAlgorithm algorithm,
                                std::int64_t ranks);
// The same for any shape (the one above is CollectiveShape{.ranks = ranks}):
// it reproduces closed_form_time whenever intra == inter.
AlphaBetaTerms alpha_beta_terms(CollectiveOp op, CollectiveAlgorithm algorithm,
                                const CollectiveShape& shape);

// kAuto, resolved the way NCCL's tuner does it: the algorithm with the
// smallest closed-form time among those NCCL would consider for this op
// (ring and double binary tree for all-reduce; ring otherwise), ties to the
// first. Never returns kAuto.
CollectiveAlgorithm choose_algorithm(CollectiveOp op, const CollectiveShape& shape, double bytes,
                                     const CollectiveCosts& costs);

// NCCL's two binary trees over n labels (ncclGetBtree, and ncclGetDtree's
// second: the first mirrored for even n, shifted by one for odd n): the
// parent of each label, -1 at the root.
std::vector<std::int64_t> nccl_tree_parents(std::int64_t n, bool second);

// nccl-tests' bus bandwidth factor: busbw = algbw x factor, with algbw =
// M / time. all_reduce 2(P-1)/P; reduce_scatter and all_gather (P-1)/P;
// broadcast and reduce 1; all_to_all (P-1)/P (NVIDIA/nccl-tests
// doc/PERFORMANCE.md).
double bus_bandwidth_factor(CollectiveOp op, std::int64_t ranks);

// BytePS's split of the gradient between its summation servers (Jiang et
// al., OSDI 2020, section 3.2): with n GPU machines, each running a server,
// and k CPU machines running one each, all NICs of bandwidth B, the share of
// the model summed on the CPU machines that makes every NIC equally busy:
//   x = 2k(n-1) / (n^2 + kn - 2k), at most 1 (k >= n: all of it),
// giving the time 2n(n-1)M / ((n^2 + kn - 2k) B): all-reduce's optimum
// 2(n-1)M/(nB) for k = 0, M/B for k = n. 0 for n = 1 (nothing crosses a
// NIC) or k = 0. Throws std::invalid_argument for n < 1 or k < 0.
double byteps_cpu_share(std::int64_t gpu_machines, std::int64_t cpu_machines);

}  // namespace ssgd::sim
