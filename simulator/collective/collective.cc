// Collective operations: names, checks, and the dispatch to the algorithms
// (one file each: collective_ring.cc, collective_tree.cc,
// collective_halving_doubling.cc, collective_hierarchical.cc,
// collective_torus2d.cc, collective_parameter_server.cc, collective_byteps.cc).
//
// Closed forms are alpha-beta (Hockney) sums over lock-step steps, gamma = 0:
//   T = sum over steps of (alpha_step + busiest port's bytes / its bandwidth)
// A step inside one node pays `intra`; a step with any transfer between nodes
// pays the slower of the levels it uses: the largest latency, and for each
// level its own busiest port (collective_algorithms.h). On one level this is
// the familiar T = a alpha + b M beta (alpha_beta_terms()).
//
// choose_algorithm() mirrors NCCL's tuner (src/graph/tuning.cc): it predicts
// each candidate's time and takes the fastest; NCCL considers ring and tree
// for all-reduce and ring for the other collectives.

#include "simulator/collective/collective.h"
#include "common/enum_names.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "simulator/collective/collective_algorithms.h"

namespace ssgd::sim {
namespace {

constexpr EnumNames<CollectiveAlgorithm, 13, 1> kAlgorithmNames{
    {{
        {CollectiveAlgorithm::kAuto, "auto"},
        {CollectiveAlgorithm::kRing, "ring"},
        {CollectiveAlgorithm::kDoubleBinaryTree, "double_binary_tree"},
        {CollectiveAlgorithm::kHalvingDoubling, "halving_doubling"},
        {CollectiveAlgorithm::kHierarchical, "hierarchical"},
        {CollectiveAlgorithm::kTorus2d, "torus2d"},
        {CollectiveAlgorithm::kParameterServer, "parameter_server"},
        {CollectiveAlgorithm::kBytePS, "byteps"},
        {CollectiveAlgorithm::kNvls, "nvls"},
        {CollectiveAlgorithm::kNvlsTree, "nvls_tree"},
        {CollectiveAlgorithm::kCollNetDirect, "collnet_direct"},
        {CollectiveAlgorithm::kCollNetChain, "collnet_chain"},
        {CollectiveAlgorithm::kPat, "pat"},
    }},
    {{{CollectiveAlgorithm::kDoubleBinaryTree, "tree"}}}};

bool implements(CollectiveAlgorithm algorithm, CollectiveOp op) {
  using Op = CollectiveOp;
  switch (algorithm) {
    case CollectiveAlgorithm::kAuto: return false;
    case CollectiveAlgorithm::kRing: return true;
    case CollectiveAlgorithm::kDoubleBinaryTree:
    case CollectiveAlgorithm::kHierarchical: return op == Op::kAllReduce || op == Op::kBroadcast;
    case CollectiveAlgorithm::kHalvingDoubling: return op != Op::kAllToAll && op != Op::kReduce;
    case CollectiveAlgorithm::kTorus2d:
    case CollectiveAlgorithm::kParameterServer:
    case CollectiveAlgorithm::kBytePS: return op == Op::kAllReduce;
    // As NCCL runs them (tuning.cc): NVLS for all-reduce, reduce-scatter and
    // all-gather; PAT for the last two; the rest all-reduce only.
    case CollectiveAlgorithm::kNvls:
      return op == Op::kAllReduce || op == Op::kReduceScatter || op == Op::kAllGather;
    case CollectiveAlgorithm::kPat: return op == Op::kReduceScatter || op == Op::kAllGather;
    case CollectiveAlgorithm::kNvlsTree:
    case CollectiveAlgorithm::kCollNetDirect:
    case CollectiveAlgorithm::kCollNetChain: return op == Op::kAllReduce;
  }
  return false;
}

void check_bytes(double bytes) {
  if (!std::isfinite(bytes) || bytes < 0) {
    throw std::invalid_argument(
        fmt::format("collective: bytes must be finite and at least 0, got {}", bytes));
  }
}

void check_shape(const CollectiveShape& shape, double bytes) {
  if (shape.ranks < 1) {
    throw std::invalid_argument(
        fmt::format("collective: ranks must be at least 1, got {}", shape.ranks));
  }
  if (shape.ranks_per_node < 1 || shape.ranks % shape.ranks_per_node != 0) {
    throw std::invalid_argument(
        fmt::format("collective: ranks_per_node must be at least 1 and divide ranks {}, got {}",
                    shape.ranks, shape.ranks_per_node));
  }
  if (shape.servers < 1) {
    throw std::invalid_argument(
        fmt::format("collective: servers must be at least 1, got {}", shape.servers));
  }
  if (shape.cpu_servers < 0 || shape.cpu_servers > shape.servers) {
    throw std::invalid_argument(
        fmt::format("collective: cpu_servers must be between 0 and servers {}, got {}",
                    shape.servers, shape.cpu_servers));
  }
  if (shape.ranks + shape.servers > std::numeric_limits<std::int32_t>::max()) {
    throw std::invalid_argument(
        fmt::format("collective: ranks + servers = {} does not fit the int32 endpoint ids",
                    shape.ranks + shape.servers));
  }
  if (shape.root < 0 || shape.root >= shape.ranks) {
    throw std::invalid_argument(
        fmt::format("collective: root {} is outside ranks 0..{}", shape.root, shape.ranks - 1));
  }
  check_bytes(bytes);
}

void check_level(const char* name, const LevelCost& level) {
  if (!(level.bandwidth_bytes_per_s > 0) || !std::isfinite(level.bandwidth_bytes_per_s)) {
    throw std::invalid_argument(
        fmt::format("collective: {} bandwidth must be finite and above 0 B/s, got {}", name,
                    level.bandwidth_bytes_per_s));
  }
  if (level.latency < Duration::zero()) {
    throw std::invalid_argument(fmt::format("collective: {} latency must be at least 0 ns, got {}",
                                            name, level.latency.ns()));
  }
}

detail::CostPhases phases(CollectiveOp op, CollectiveAlgorithm algorithm,
                          const CollectiveShape& shape, double bytes) {
  switch (algorithm) {
    case CollectiveAlgorithm::kRing: return detail::ring_cost(op, shape, bytes);
    case CollectiveAlgorithm::kDoubleBinaryTree: return detail::tree_cost(op, shape, bytes);
    case CollectiveAlgorithm::kHalvingDoubling:
      return detail::halving_doubling_cost(op, shape, bytes);
    case CollectiveAlgorithm::kHierarchical: return detail::hierarchical_cost(op, shape, bytes);
    case CollectiveAlgorithm::kTorus2d: return detail::torus2d_cost(op, shape, bytes);
    case CollectiveAlgorithm::kParameterServer:
      return detail::parameter_server_cost(op, shape, bytes);
    case CollectiveAlgorithm::kBytePS: return detail::byteps_cost(op, shape, bytes);
    case CollectiveAlgorithm::kAuto:
    case CollectiveAlgorithm::kNvls:
    case CollectiveAlgorithm::kNvlsTree:
    case CollectiveAlgorithm::kCollNetDirect:
    case CollectiveAlgorithm::kCollNetChain:
    case CollectiveAlgorithm::kPat: break;
  }
  throw std::logic_error("collective: no closed form for auto or NCCL's own algorithms");
}

double seconds(Duration d) { return static_cast<double>(d.ns()) * 1e-9; }

}  // namespace

void check_algorithm(CollectiveOp op, CollectiveAlgorithm algorithm) {
  if (algorithm == CollectiveAlgorithm::kAuto) {
    throw std::invalid_argument(
        fmt::format("collective: {} with algorithm auto has no steps of its own; resolve it with "
                    "choose_algorithm() first",
                    to_string(op)));
  }
  if (implements(algorithm, op)) {
    if (!library_runs(CollectiveLibrary::kGeneric, algorithm)) {
      throw std::invalid_argument(fmt::format(
          "collective: {} is NCCL's algorithm: the NCCL library (simulator/nccl) runs it, not "
          "the textbook decompositions here",
          to_string(algorithm)));
    }
    return;
  }
  std::string those;
  // The textbook ones: NCCL's (nvls, pat) have no decomposition here.
  for (const auto& [a, name] : kAlgorithmNames.entries()) {
    if (!implements(a, op) || !library_runs(CollectiveLibrary::kGeneric, a)) continue;
    if (!those.empty()) those += ", ";
    those += name;
  }
  throw std::invalid_argument(
      fmt::format("collective: algorithm {} does not implement {}; algorithms that do: {}",
                  to_string(algorithm), to_string(op), those));
}

const char* to_string(CollectiveAlgorithm algorithm) {
  return kAlgorithmNames.name(algorithm, "unknown");
}

const char* to_string(CollectiveLibrary library) {
  return library == CollectiveLibrary::kNccl ? "nccl" : "generic";
}

bool library_runs(CollectiveLibrary library, CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case CollectiveAlgorithm::kAuto:
    case CollectiveAlgorithm::kRing:
    case CollectiveAlgorithm::kDoubleBinaryTree: return true;
    case CollectiveAlgorithm::kHalvingDoubling:
    case CollectiveAlgorithm::kHierarchical:
    case CollectiveAlgorithm::kTorus2d:
    case CollectiveAlgorithm::kParameterServer:
    case CollectiveAlgorithm::kBytePS: return library == CollectiveLibrary::kGeneric;
    case CollectiveAlgorithm::kNvls:
    case CollectiveAlgorithm::kNvlsTree:
    case CollectiveAlgorithm::kCollNetDirect:
    case CollectiveAlgorithm::kCollNetChain:
    case CollectiveAlgorithm::kPat: return library == CollectiveLibrary::kNccl;
  }
  return false;
}

std::optional<CollectiveAlgorithm> parse_collective_algorithm(std::string_view name) {
  return kAlgorithmNames.parse(name);
}

std::string collective_algorithm_names() { return kAlgorithmNames.list(); }

std::string textbook_algorithm_names() {
  std::string names;
  for (const auto& [a, name] : kAlgorithmNames.entries()) {
    if (a == CollectiveAlgorithm::kAuto || !library_runs(CollectiveLibrary::kGeneric, a)) continue;
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  return names;
}

std::int64_t endpoint_node(const CollectiveShape& shape, std::int64_t endpoint) {
  if (endpoint < 0 || endpoint >= shape.ranks + shape.servers) {
    throw std::out_of_range(fmt::format("collective: endpoint {} outside 0..{}", endpoint,
                                        shape.ranks + shape.servers - 1));
  }
  if (endpoint < shape.ranks) return endpoint / shape.ranks_per_node;
  const std::int64_t server = endpoint - shape.ranks;
  const std::int64_t colocated = shape.servers_colocated ? shape.servers - shape.cpu_servers : 0;
  return server < colocated ? server % shape.nodes() : shape.nodes() + server - colocated;
}

std::vector<CollectiveStep> decompose(CollectiveOp op, CollectiveAlgorithm algorithm,
                                      const CollectiveShape& shape, double bytes) {
  check_algorithm(op, algorithm);
  check_shape(shape, bytes);
  if (shape.ranks == 1 || bytes == 0) return {};
  switch (algorithm) {
    case CollectiveAlgorithm::kRing: return detail::ring_decompose(op, shape, bytes);
    case CollectiveAlgorithm::kDoubleBinaryTree: return detail::tree_decompose(op, shape, bytes);
    case CollectiveAlgorithm::kHalvingDoubling:
      return detail::halving_doubling_decompose(op, shape, bytes);
    case CollectiveAlgorithm::kHierarchical:
      return detail::hierarchical_decompose(op, shape, bytes);
    case CollectiveAlgorithm::kTorus2d: return detail::torus2d_decompose(op, shape, bytes);
    case CollectiveAlgorithm::kParameterServer:
      return detail::parameter_server_decompose(op, shape, bytes);
    case CollectiveAlgorithm::kBytePS: return detail::byteps_decompose(op, shape, bytes);
    case CollectiveAlgorithm::kAuto:
    case CollectiveAlgorithm::kNvls:
    case CollectiveAlgorithm::kNvlsTree:
    case CollectiveAlgorithm::kCollNetDirect:
    case CollectiveAlgorithm::kCollNetChain:
    case CollectiveAlgorithm::kPat: break;
  }
  throw std::logic_error("collective: no steps for auto or NCCL's own algorithms");
}

std::int64_t step_count(const std::vector<CollectiveStep>& steps) {
  std::int64_t count = 0;
  for (const CollectiveStep& s : steps) count += s.repeat;
  return count;
}

ClosedForm::ClosedForm(CollectiveOp op, CollectiveAlgorithm algorithm,
                       const CollectiveShape& shape) {
  check_algorithm(op, algorithm);
  check_shape(shape, 1.0);
  if (shape.ranks > 1) unit_phases_ = phases(op, algorithm, shape, 1.0);
}

Duration ClosedForm::time(double bytes, const CollectiveCosts& costs) const {
  check_bytes(bytes);
  check_level("intra", costs.intra);
  check_level("inter", costs.inter);
  const StreamCap& cap = costs.inter_streams;
  if (cap.streams < 1 || !std::isfinite(cap.stream_rate_bytes_per_s) ||
      cap.stream_rate_bytes_per_s < 0 || !(cap.chunk_bytes > 0)) {
    throw std::invalid_argument(fmt::format(
        "collective: TCP streams must be at least 1, the stream rate finite and at least 0 B/s, "
        "and the chunk above 0 B; got {}, {} and {}",
        cap.streams, cap.stream_rate_bytes_per_s, cap.chunk_bytes));
  }
  if (unit_phases_.empty() || bytes == 0) return Duration::zero();
  double total_s = 0;
  for (const detail::CostPhase& p : unit_phases_) {
    double alpha_s = 0;
    double beta_s = 0;
    if (p.intra_bytes > 0) {
      alpha_s = seconds(costs.intra.latency);
      beta_s = p.intra_bytes * bytes / costs.intra.bandwidth_bytes_per_s;
    }
    if (p.inter_bytes > 0) {
      alpha_s = std::max(alpha_s, seconds(costs.inter.latency));
      double bandwidth = costs.inter.bandwidth_bytes_per_s;
      if (costs.inter_streams.on()) {
        const double connection_bytes =
            p.inter_bytes * bytes / static_cast<double>(p.inter_connections);
        bandwidth =
            std::min(bandwidth, costs.inter_streams.rate(connection_bytes, p.inter_connections));
      }
      beta_s = std::max(beta_s, p.inter_bytes * bytes / bandwidth);
    }
    total_s += static_cast<double>(p.repeat) * (alpha_s + beta_s);
  }
  return duration_from_seconds(total_s);
}

double StreamCap::rate(double transfer_bytes, std::int64_t connections) const {
  if (!on()) return std::numeric_limits<double>::infinity();
  const double chunks = std::max(1.0, std::ceil(transfer_bytes / chunk_bytes));
  const double used = std::min(static_cast<double>(std::max<std::int64_t>(streams, 1)), chunks);
  return static_cast<double>(std::max<std::int64_t>(connections, 1)) * used *
         stream_rate_bytes_per_s;
}

Duration closed_form_time(CollectiveOp op, CollectiveAlgorithm algorithm,
                          const CollectiveShape& shape, double bytes,
                          const CollectiveCosts& costs) {
  check_shape(shape, bytes);
  return ClosedForm(op, algorithm, shape).time(bytes, costs);
}

std::vector<CollectiveAlgorithm> auto_candidates(CollectiveOp op) {
  if (op == CollectiveOp::kAllReduce) {
    return {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kDoubleBinaryTree};
  }
  return {CollectiveAlgorithm::kRing};
}

AlphaBetaTerms alpha_beta_terms(CollectiveOp op, CollectiveAlgorithm algorithm,
                                std::int64_t ranks) {
  return alpha_beta_terms(op, algorithm, CollectiveShape{.ranks = ranks});
}

AlphaBetaTerms alpha_beta_terms(CollectiveOp op, CollectiveAlgorithm algorithm,
                                const CollectiveShape& shape) {
  check_algorithm(op, algorithm);
  check_shape(shape, 1.0);
  AlphaBetaTerms terms;
  if (shape.ranks == 1) return terms;
  // The closed form is linear in M: evaluate it for M = 1.
  for (const detail::CostPhase& p : phases(op, algorithm, shape, 1.0)) {
    const auto repeat = static_cast<double>(p.repeat);
    terms.alpha_count += repeat;
    terms.beta_factor += repeat * std::max(p.intra_bytes, p.inter_bytes);
  }
  return terms;
}

CollectiveAlgorithm choose_algorithm(CollectiveOp op, const CollectiveShape& shape, double bytes,
                                     const CollectiveCosts& costs) {
  check_shape(shape, bytes);
  const std::vector<CollectiveAlgorithm> candidates = auto_candidates(op);
  CollectiveAlgorithm best = candidates.front();
  Duration best_time = closed_form_time(op, best, shape, bytes, costs);
  for (std::size_t i = 1; i < candidates.size(); ++i) {
    const Duration t = closed_form_time(op, candidates[i], shape, bytes, costs);
    if (t < best_time) {
      best = candidates[i];
      best_time = t;
    }
  }
  return best;
}

double bus_bandwidth_factor(CollectiveOp op, std::int64_t ranks) {
  if (ranks < 1) {
    throw std::invalid_argument(fmt::format("collective: ranks must be at least 1, got {}", ranks));
  }
  const auto p = static_cast<double>(ranks);
  switch (op) {
    case CollectiveOp::kAllReduce: return 2.0 * (p - 1) / p;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
    case CollectiveOp::kAllToAll: return (p - 1) / p;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce: return 1.0;
  }
  return 1.0;
}

namespace detail {

CostPhase uniform_phase(std::int64_t repeat, bool intra, bool inter, double port_bytes) {
  return {repeat, intra ? port_bytes : 0.0, inter ? port_bytes : 0.0};
}

bool crosses_nodes(const CollectiveShape& shape, std::int64_t a, std::int64_t b) {
  return endpoint_node(shape, a) != endpoint_node(shape, b);
}

CostPhase busiest_ports(const CollectiveShape& shape, const CollectiveStep& step) {
  // (endpoint, 0 out / 1 in, 0 intra / 1 inter) -> bytes
  std::map<std::tuple<std::int32_t, int, int>, double> load;
  for (const Transfer& t : step.transfers) {
    const int level = crosses_nodes(shape, t.src, t.dst) ? 1 : 0;
    load[{t.src, 0, level}] += t.bytes;
    load[{t.dst, 1, level}] += t.bytes;
  }
  CostPhase phase{step.repeat, 0, 0};
  for (const auto& [port, bytes] : load) {
    double& busiest = std::get<2>(port) == 0 ? phase.intra_bytes : phase.inter_bytes;
    busiest = std::max(busiest, bytes);
  }
  return phase;
}

std::int64_t ceil_log2(std::int64_t n) {
  std::int64_t steps = 0;
  while ((std::int64_t{1} << steps) < n) ++steps;
  return steps;
}

}  // namespace detail
}  // namespace ssgd::sim
