#include "simulator/nccl/nccl_communicator.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "simulator/platform/link_load.h"

namespace ssgd::sim::nccl {

std::optional<Func> func_of(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return Func::kAllReduce;
    case CollectiveOp::kReduceScatter: return Func::kReduceScatter;
    case CollectiveOp::kAllGather: return Func::kAllGather;
    case CollectiveOp::kBroadcast: return Func::kBroadcast;
    case CollectiveOp::kReduce: return Func::kReduce;
    case CollectiveOp::kAllToAll: return std::nullopt;
  }
  return std::nullopt;
}

CollectiveAlgorithm to_collective(Algo a) {
  switch (a) {
    case Algo::kTree: return CollectiveAlgorithm::kDoubleBinaryTree;
    case Algo::kRing: return CollectiveAlgorithm::kRing;
    case Algo::kCollNetDirect: return CollectiveAlgorithm::kCollNetDirect;
    case Algo::kCollNetChain: return CollectiveAlgorithm::kCollNetChain;
    case Algo::kNvls: return CollectiveAlgorithm::kNvls;
    case Algo::kNvlsTree: return CollectiveAlgorithm::kNvlsTree;
    case Algo::kPat: return CollectiveAlgorithm::kPat;
  }
  return CollectiveAlgorithm::kRing;
}

std::optional<Algo> algo_of(CollectiveAlgorithm a) {
  for (int i = 0; i < kAlgoCount; ++i) {
    if (to_collective(static_cast<Algo>(i)) == a) return static_cast<Algo>(i);
  }
  return std::nullopt;
}

Communicator::Communicator(const Platform& platform, std::vector<VertexId> ranks,
                           std::int64_t local_ranks, const Settings& settings)
    : platform_(platform), routes_(platform) {
  const auto n = static_cast<std::int64_t>(ranks.size());
  if (local_ranks < 1 || n % local_ranks != 0) {
    throw std::logic_error("an NCCL communicator on ranks that are not whole nodes");
  }
  system_ = make_system(platform, n / local_ranks, local_ranks);
  graphs_ = make_graphs(system_, settings.channels);
  Enabled enabled;
  if (!settings.algorithms.empty()) restrict_algorithms(enabled, settings.algorithms);
  if (!settings.protocols.empty()) restrict_protocols(enabled, settings.protocols);
  tuner_ = std::make_unique<Tuner>(system_, graphs_, enabled);
  structure_ = std::make_unique<Structure>(platform, std::move(ranks), system_, graphs_);
}

int Communicator::structural_channels(Algo a, int channels) const {
  // Rings and trees run on channels; NVLS, its trees and CollNet spread the
  // data over the heads whatever the channels.
  return a == Algo::kRing || a == Algo::kTree ? std::max(1, channels) : 1;
}

const Communicator::UnitLoad& Communicator::unit_load(Func f, Algo a, int channels) const {
  const int nc = structural_channels(a, channels);
  const auto key = std::make_tuple(static_cast<int>(f), static_cast<int>(a), nc);
  std::lock_guard lock(mutex_);
  if (const auto it = unit_loads_.find(key); it != unit_loads_.end()) return it->second;
  // Per byte of a large call (1 GiB, so that bytes on links stay well above
  // rounding), NVLS's share at its efficiency.
  constexpr double kScale = 1 << 30;
  const double nvls = nvls_efficiency(system_.arch);
  LinkLoad plain(platform_);
  LinkLoad through_nvls(platform_);
  LinkLoad both(platform_);
  UnitLoad u;
  for (const RoutedTransfer& t : structure_->traffic(f, a, nc).transfers) {
    const Route& r = routes_.get(t.src, t.dst, t.via);
    (t.nvls ? through_nvls : plain).add(r, t.bytes * kScale);
    both.add(r, (t.nvls && nvls > 0 ? t.bytes / nvls : t.bytes) * kScale);
    if (r.crosses_nodes) u.crossing.emplace_back(t.bytes, t.connections);
  }
  std::sort(u.crossing.begin(), u.crossing.end());
  u.crossing.erase(std::unique(u.crossing.begin(), u.crossing.end()), u.crossing.end());
  const auto sparse = [](const LinkLoad& load) {
    std::vector<std::pair<LinkId, double>> out;
    for (std::size_t l = 0; l < load.bytes().size(); ++l) {
      if (load.bytes()[l] > 0) out.emplace_back(static_cast<LinkId>(l), load.bytes()[l] / kScale);
    }
    return out;
  };
  u.plain = sparse(plain);
  u.nvls = sparse(through_nvls);
  u.seconds_per_byte = both.busiest_seconds() / kScale;
  return unit_loads_.emplace(key, std::move(u)).first->second;
}

void Communicator::add_link_bytes(Func f, const Choice& choice, double bytes, std::vector<double>& into,
                                  double times) const {
  const UnitLoad& u = unit_load(f, choice.algo, choice.channels);
  const double plain = bytes * times / choice.efficiency;
  for (const auto& [l, b] : u.plain) into[l] += b * plain;
  const double nvls = plain / choice.nvls_efficiency;
  for (const auto& [l, b] : u.nvls) into[l] += b * nvls;
}

std::optional<Choice> Communicator::evaluate(Func f, Algo a, Proto p, double bytes) const {
  const Tuner& t = *tuner_;
  if (!t.available(f, a, p)) return std::nullopt;
  Choice c;
  c.algo = a;
  c.proto = p;
  c.channels = t.channels(f, a, p, bytes);
  c.efficiency = t.efficiency(f, a, p) * t.size_correction(f, a, p, bytes);
  const double nvls = nvls_efficiency(system_.arch);
  c.nvls_efficiency = (a == Algo::kNvls || a == Algo::kNvlsTree) && nvls > 0 ? nvls : 1.0;
  const double latency_us = t.call_latency_us(f, a, p, bytes);
  c.latency = duration_from_seconds(latency_us * 1e-6);
  // The caps, at the share of NCCL's channels this call runs on.
  const bool on_channels = a == Algo::kRing || a == Algo::kTree;
  const double share = on_channels && graphs_.default_coll_channels > 0
                           ? static_cast<double>(c.channels) / graphs_.default_coll_channels
                           : 1.0;
  const double cap_alg = t.bus_cap(f, a, p) * 1e9 * t.bus_to_alg(f, a) * share;
  const UnitLoad& u = unit_load(f, a, c.channels);
  double data_s = bytes * u.seconds_per_byte / c.efficiency;
  // TCP between nodes: a connection moves at most its streams' rate.
  const StreamCap streams = platform_.inter_node_streams();
  if (streams.on()) {
    for (const auto& [unit, connections] : u.crossing) {
      const double b = unit * bytes / c.efficiency;
      data_s = std::max(data_s, b / streams.rate(b / connections, connections));
    }
  }
  const double cap_s = cap_alg > 0 ? bytes / cap_alg : 0.0;
  const double move_s = std::max(data_s, cap_s);
  const double fill_s = pipeline_fill(f, a, p, c.channels, bytes) * move_s;
  c.fill = duration_from_seconds(fill_s);
  c.time = duration_from_seconds(latency_us * 1e-6 + move_s + fill_s);
  return c;
}

double Communicator::pipeline_fill(Func f, Algo a, Proto p, int channels, double bytes) const {
  if (a == Algo::kTree && p == Proto::kLL128 && f == Func::kAllReduce) {
    // NCCL sizes an LL128 tree's chunks by its estimate of the pipeline's
    // depth, 1 + log2(nodes) + 0.1 ppn steps (enqueue.cc,
    // calcCollChunking): up the tree and down again, less the round the
    // data's own time holds.
    const auto ppn = static_cast<double>(system_.local_ranks);
    const double nsteps = 1 + log2i(system_.nodes) + 0.1 * ppn;
    const auto per_round = [&](std::int64_t chunk) {
      return static_cast<std::int64_t>(bytes) / (static_cast<std::int64_t>(channels) * chunk);
    };
    std::int64_t chunk = kLL128ChunkBytes;
    while (static_cast<double>(per_round(chunk)) < nsteps * 64 / ppn && chunk > 131072) chunk /= 2;
    while (static_cast<double>(per_round(chunk)) < nsteps * 16 / ppn && chunk > 32768) chunk /= 2;
    const double round = static_cast<double>(channels) * static_cast<double>(chunk);
    return (2 * nsteps - 1) * std::min(1.0, round / bytes);
  }
  // NVLS moves a call in rounds of one chunk per channel and head, each
  // through the kernel's stages in turn (all_reduce.h: scatter into the
  // NVLS buffer, reduce and multicast, gather out; reduce-scatter and
  // all-gather skip one). Until the first round is through, the later
  // stages wait: (stages - 1) rounds' time beyond the data's own, or the
  // whole call that many times over when it is smaller than a round. Three
  // stages fit the published single-node NVLS and two-node NVLS-tree curves
  // best, and hold out on 4 and 8 nodes (docs/validation.md, section 11).
  if (a != Algo::kNvls && a != Algo::kNvlsTree) return 0.0;
  const Graphs& g = graphs_;
  const std::int64_t concurrent = static_cast<std::int64_t>(channels) * std::max(1, g.nvls.channels);
  const std::int64_t chunk = nvls_call_chunk(a, g.nvls_tuning, system_.nodes, bytes, concurrent,
                                             tuner_->model_bandwidth(Func::kAllReduce, Algo::kNvls, Proto::kSimple));
  const double round = static_cast<double>(concurrent) * static_cast<double>(chunk);
  const int stages = f == Func::kAllReduce ? kNvlsStages : kNvlsStages - 1;
  return round > 0 ? (stages - 1) * std::min(1.0, round / bytes) : 0.0;
}

Choice Communicator::choose(Func f, double bytes) const {
  // NCCL's own pick: its latency and its graphs' bandwidth (with the tree
  // correction only where NCCL applies it), ties to the first.
  std::optional<std::pair<Algo, Proto>> pick;
  double pick_us = 0;
  const Tuner& t = *tuner_;
  for (int ai = 0; ai < kAlgoCount; ++ai) {
    for (int pi = 0; pi < kProtoCount; ++pi) {
      const auto a = static_cast<Algo>(ai);
      const auto p = static_cast<Proto>(pi);
      if (!t.available(f, a, p) || !(t.model_bandwidth(f, a, p) > 0)) continue;
      double bw = t.model_bandwidth(f, a, p);
      if (a == Algo::kTree && f == Func::kAllReduce) bw *= tree_correction(p, static_cast<std::int64_t>(bytes));
      if (a == Algo::kNvlsTree && f == Func::kAllReduce && system_.arch >= GpuArch::kBlackwell &&
          system_.cpu != CpuVendor::kArm) {
        bw *= tree_correction(p, static_cast<std::int64_t>(bytes));
      }
      const double us = t.call_latency_us(f, a, p, bytes) + bytes / (1000 * bw);
      if (!pick || us < pick_us) {
        pick = {a, p};
        pick_us = us;
      }
    }
  }
  if (!pick) {
    throw std::invalid_argument(fmt::format(
        "NCCL has no algorithm and protocol left for {} on this platform (the algorithm and "
        "protocol lists, and what the platform supports, rule out every one)",
        to_string(f)));
  }
  // The chosen one, on the channels NCCL runs a call of this size on.
  return *evaluate(f, pick->first, pick->second, bytes);
}

}  // namespace ssgd::sim::nccl
