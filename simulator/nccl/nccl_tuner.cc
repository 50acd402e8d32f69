// NCCL's tuning model, step by step as ncclTopoTuneModel (tuning.cc) takes
// it; the comments name NCCL's variables.
#include "simulator/nccl/nccl_tuner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/units.h"

namespace ssgd::sim::nccl {
namespace {

// A ring's steps for `f` over `n` ranks (tuning.cc's nsteps).
double ring_steps(Func f, double n) {
  if (f == Func::kAllReduce) return 2 * (n - 1);
  return f == Func::kReduceScatter || f == Func::kAllGather ? n - 1 : n;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// parseList: entries "prefix:elems" separated by ';', the first may lack
// its prefix; elems comma-separated, '^' in front to enable all but them.
template <std::size_t N, typename Parse>
void apply_list(std::array<std::array<bool, N>, kFuncCount>& table, std::string_view list,
                const char* what, Parse parse) {
  bool first = true;
  for (std::string_view entry : split_list(list, ';')) {
    entry = trim(entry);
    if (entry.empty()) throw std::invalid_argument(fmt::format("an empty entry in the {} list '{}'", what, list));
    std::string_view elems = entry;
    std::optional<Func> only;
    if (const auto colon = entry.find(':'); colon != std::string_view::npos) {
      const std::string_view prefix = trim(entry.substr(0, colon));
      only = parse_func(prefix);
      if (!only) {
        throw std::invalid_argument(fmt::format(
            "unknown function '{}' in the {} list '{}'; expected Broadcast, Reduce, AllGather, "
            "ReduceScatter or AllReduce", prefix, what, list));
      }
      elems = trim(entry.substr(colon + 1));
    } else if (!first) {
      throw std::invalid_argument(fmt::format(
          "every entry of the {} list but the first needs a function prefix ('AllReduce:...'): '{}'",
          what, list));
    }
    first = false;
    bool set = true;
    if (!elems.empty() && elems.front() == '^') {
      set = false;
      elems.remove_prefix(1);
    }
    std::array<bool, N> chosen{};
    for (std::string_view name : split_list(elems)) {
      name = trim(name);
      const auto e = parse(name);
      if (!e) throw std::invalid_argument(fmt::format("unknown {} '{}' in '{}'", what, name, list));
      chosen[static_cast<std::size_t>(*e)] = true;
    }
    for (int f = 0; f < kFuncCount; ++f) {
      if (only && static_cast<int>(*only) != f) continue;
      for (std::size_t e = 0; e < N; ++e) table[static_cast<std::size_t>(f)][e] = chosen[e] ? set : !set;
    }
  }
}

int arch_index(GpuArch a) { return static_cast<int>(a); }

}  // namespace

Enabled::Enabled() {
  for (auto& f : algo) f.fill(true);
  for (auto& f : proto) f.fill(true);
}

void restrict_algorithms(Enabled& enabled, std::string_view list) {
  apply_list(enabled.algo, list, "algorithm", [](std::string_view n) { return parse_algo(n); });
}

void restrict_protocols(Enabled& enabled, std::string_view list) {
  apply_list(enabled.proto, list, "protocol", [](std::string_view n) { return parse_proto(n); });
}

Tuner::Tuner(const System& system, const Graphs& graphs, const Enabled& enabled)
    : system_(system), graphs_(graphs), enabled_(enabled) {
  tune();
}

bool Tuner::available(Func f, Algo a, Proto p) const { return available_[idx(f, a, p)]; }

double Tuner::bus_to_alg(Func f, Algo a) const {
  if (a != Algo::kRing && (f == Func::kAllGather || f == Func::kReduceScatter)) return 1.0;
  if (a == Algo::kRing || a == Algo::kNvls || a == Algo::kNvlsTree) {
    const auto n = static_cast<double>(system_.ranks);
    return n / ring_steps(f, n);
  }
  return 0.5;
}

double Tuner::call_latency_us(Func f, Algo a, Proto p, double bytes) const {
  double lat = latency_us(f, a, p);
  if (a == Algo::kRing && p == Proto::kSimple && system_.nodes > 1 && f == Func::kAllReduce &&
      bytes / (static_cast<double>(graphs_.coll_channels) * static_cast<double>(system_.ranks)) >= 64) {
    lat *= system_.arch < GpuArch::kAmpere ? 1.9 : 1.4;
  }
  return lat;
}

double Tuner::size_correction(Func f, Algo a, Proto p, double bytes) const {
  // NCCL corrects trees (and Blackwell's NVLS trees) at middle sizes with
  // this table. Rings need none; NVLS and its trees pay their pipeline's
  // fill instead (Communicator, pipeline_fill). CollNet and PAT, which the
  // published curves do not pin down, take the trees' table (docs/
  // validation.md, section 11).
  if (a == Algo::kRing || a == Algo::kNvls || a == Algo::kNvlsTree) return 1.0;
  if (a == Algo::kTree && p == Proto::kLL128 && f == Func::kAllReduce) return 1.0;
  return tree_correction(p, static_cast<std::int64_t>(bytes));
}

int Tuner::channels(Func f, Algo a, Proto p, double bytes) const {
  (void)f;
  if (a == Algo::kNvls || a == Algo::kNvlsTree) {
    return a == Algo::kNvls && system_.nodes > 1 ? std::min(graphs_.nvls_channels, graphs_.coll_channels)
                                                 : graphs_.nvls_channels;
  }
  // maxThreads (ncclTopoTuneModel) and threadThresholds; Ring's LL
  // threshold grows with the ranks.
  int nt = kMaxThreads;
  std::int64_t threshold = kSimpleThreadThreshold;
  if (p == Proto::kSimple) {
    const bool slow = graphs_.ring.bw_intra * graphs_.coll_channels <= kPciBw;
    nt = a == Algo::kRing ? (slow ? 256 : kSimpleMaxThreads) : kSimpleMaxThreads;
  } else if (p == Proto::kLL) {
    nt = kLLMaxThreads;
    threshold = kLLThreadThreshold * (a == Algo::kRing ? system_.ranks : 1);
  } else {
    nt = kLL128MaxThreads;
    threshold = kLL128ThreadThreshold;
  }
  if (a == Algo::kCollNetDirect || a == Algo::kCollNetChain) threshold = 512;
  int nc = graphs_.coll_channels;
  while (bytes < static_cast<double>(nc) * nt * static_cast<double>(threshold) && nc >= 2) --nc;
  return nc;
}

void Tuner::tune() {
  const System& s = system_;
  if (s.ranks <= 1) return;
  const TunerConstants& k = tuner_constants();
  const int cc = arch_index(s.arch);
  const int index2 = s.nodes <= 2 ? static_cast<int>(s.nodes) - 1 : 2;
  const int index1 = s.nodes == 1 ? cc : (s.cpu == CpuVendor::kAmd ? 1 : 0);
  // NCCL's caps, scaled by a what-if's factor on the links that carry
  // the traffic (the network's between nodes, NVLink's or PCIe's on one).
  const double cap_scale = s.nodes > 1 ? s.net_bw_scale : s.intra_bw_scale;
  const double ll_max_bw = k.ll_max_bw[index1][index2] * cap_scale;
  const double per_ch_tree = k.per_ch_max_tree_bw[cc][index2] * cap_scale;
  const double per_ch_ring_ll128 = k.per_ch_max_ring_ll128_bw[cc][index2] * cap_scale;
  const double per_ch_tree_ll128 = k.per_ch_max_tree_ll128_bw[cc][index2] * cap_scale;
  const double per_ch_nvls_tree = k.per_ch_max_nvls_tree_bw[cc][index2] * cap_scale;
  const double ppn = static_cast<double>(s.ranks) / static_cast<double>(s.nodes);
  const auto ranks = static_cast<double>(s.ranks);
  // typeIntra: NVLink when the node's GPUs talk over it (one GPU a node
  // counts as local, which NCCL also ranks below NVLink).
  const bool intra_nvl = s.intra_nvlink || s.local_ranks == 1;
  const Hw intra_hw = s.intra_nvlink && s.local_ranks > 1 ? Hw::kNvlink : Hw::kPci;
  const Hw hw = s.nodes == 1 ? intra_hw : Hw::kNet;
  // The ring and tree graphs; NVLS and CollNet have their own.
  const auto graph_of = [this](Algo a) -> const Graph& {
    if (a == Algo::kNvls || a == Algo::kNvlsTree) return graphs_.nvls;
    if (a == Algo::kCollNetDirect || a == Algo::kCollNetChain) return graphs_.collnet;
    if (a == Algo::kTree) return graphs_.tree;
    return graphs_.ring;
  };
  const double net_overhead =
      s.nodes > 1 ? (s.cpu == CpuVendor::kAmd ? 2.0 : 1.0) : 0.0;  // getNetOverhead
  // LL128 (tuning.cc): on by default only over NVLink inside nodes and, to
  // the NIC, up to PXB (PXN from Hopper on).
  const bool ll128_ok = intra_nvl && (s.nodes == 1 || s.nic_path <= PciePath::kPxb);
  const bool pat_ok = s.nodes == s.ranks;  // one GPU a node, host networking
  for (int fi = 0; fi < kFuncCount; ++fi) {
    const auto f = static_cast<Func>(fi);
    const double nsteps = ring_steps(f, ranks);
    for (int ai = 0; ai < kAlgoCount; ++ai) {
      const auto a = static_cast<Algo>(ai);
      if ((f == Func::kBroadcast || f == Func::kReduce) && a != Algo::kRing) continue;
      if ((f == Func::kReduceScatter || f == Func::kAllGather) && a != Algo::kPat &&
          a != Algo::kRing && a != Algo::kNvls && a != Algo::kCollNetDirect) {
        continue;
      }
      if (f == Func::kAllReduce && a == Algo::kPat) continue;
      const Graph& g = graph_of(a);
      for (int pi = 0; pi < kProtoCount; ++pi) {
        const auto p = static_cast<Proto>(pi);
        const std::size_t i = idx(f, a, p);
        if ((a == Algo::kNvls || a == Algo::kNvlsTree) && p != Proto::kSimple) continue;
        if (a == Algo::kPat && (p != Proto::kSimple || !pat_ok)) continue;
        const bool collnet = a == Algo::kCollNetDirect || a == Algo::kCollNetChain;
        double bw = s.nodes <= 2 || collnet ? g.bw_intra : g.bw_inter;
        double eff = 1.0;
        // The cap a call's time keeps to; NCCL's model bandwidth unless said.
        double cap = -1;
        if (a == Algo::kNvls || a == Algo::kNvlsTree) {
          if (g.channels < 2) continue;
          double intra_bw = g.bw_intra * nvls_efficiency(s.arch) * (g.channels - 1) / g.channels;
          intra_bw *= f == Func::kAllReduce ? 2.0 : (ppn - 1) / ppn;
          const double inter_bw = g.bw_inter * (s.nodes <= 2 && a == Algo::kNvlsTree ? 2 : 1);
          bw = std::min({intra_bw, inter_bw,
                         a == Algo::kNvlsTree ? per_ch_nvls_tree : std::numeric_limits<double>::max()});
          // On one node the NVLS graph's inter speed crosses no network: the
          // search raises it to the top of its speed list and no further
          // (90 on Blackwell, below what NVLink 5 carries), so it bounds
          // NCCL's pick but not the time (B200 NVLS, 844 GB/s published;
          // docs/validation.md, section 11).
          if (s.nodes == 1) cap = g.channels * intra_bw;
        }
        double bus = g.channels * bw;
        if (a == Algo::kRing && p == Proto::kLL) {
          eff = 0.5;
          bus = std::min(ll_max_bw, bus * eff);
        }
        if (a == Algo::kRing && p == Proto::kLL128) {
          // NCCL's model takes 0.92 for LL128's 120 payload bytes in 128;
          // the time takes the lines' own share.
          eff = 120.0 / 128.0;
          bus = std::min(bus * 0.92, g.channels * per_ch_ring_ll128);
        }
        if (a == Algo::kTree && f == Func::kAllReduce) {
          eff = 0.92;
          bus = std::min(bus * eff, g.channels * per_ch_tree);
        }
        if (a == Algo::kTree && p == Proto::kLL) {
          eff /= 3.8;
          bus = std::min(bus / 3.8, ll_max_bw);
        }
        if (a == Algo::kTree && p == Proto::kLL128) {
          const double f128 = s.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
          eff *= f128;
          bus = std::min(bus * f128, g.channels * per_ch_tree_ll128);
        }
        if (a == Algo::kPat) {
          eff = 0.75;
          bus *= eff;
        }
        if (collnet && p != Proto::kSimple) continue;  // not used
        if (a == Algo::kCollNetDirect) {
          if (f == Func::kAllGather || f == Func::kReduceScatter) {
            bus = ppn * std::min(g.bw_intra, g.bw_inter * 0.9);
          } else {
            double factor = ppn / std::max(1, g.channels);  // GPU/NIC ratio
            factor -= (factor - 1) / 2;
            eff = 1.0 / factor;
            if (s.arch >= GpuArch::kHopper) eff *= 0.85;
            bus *= eff;
          }
        }
        // NVLS and CollNet direct gather and scatter between nodes need the
        // CollNet plugin's support, not modelled: off.
        if ((a == Algo::kNvls || a == Algo::kCollNetDirect) &&
            (f == Func::kAllGather || f == Func::kReduceScatter) && s.nodes > 1) {
          continue;
        }
        // Latency.
        const Hw a_intra = (a == Algo::kNvls || a == Algo::kNvlsTree) ? Hw::kNvlink : intra_hw;
        const Hw a_hw = (a == Algo::kNvls || a == Algo::kNvlsTree) && s.nodes == 1 ? Hw::kNvlink : hw;
        // A what-if's latency factors: the NIC's on network steps, NVLink's
        // (or PCIe's) on the rest.
        double lat = k.base_latency[ai][pi] * s.intra_latency_scale;
        double intra_lat = k.hw_latency[static_cast<int>(a_intra)][ai][pi] * s.intra_latency_scale;
        double inter_lat = ((ppn == 1 ? k.hw_latency[2][static_cast<int>(Algo::kTree)][pi]
                                      : k.hw_latency[2][ai][pi]) +
                            s.net_extra_latency_us) *
                           s.net_latency_scale;
        if (a == Algo::kRing) {
          const double step_lat = k.hw_latency[static_cast<int>(a_hw)][ai][pi];
          if (f == Func::kReduce || f == Func::kBroadcast) {
            if (s.nodes == 1) {  // sameChannels
              lat += step_lat * s.intra_latency_scale;
            } else {
              const double l = p == Proto::kSimple
                                   ? k.hw_latency[static_cast<int>(a_hw)][static_cast<int>(Algo::kTree)][pi]
                                   : step_lat;
              lat += nsteps * l * s.net_latency_scale +
                     static_cast<double>(s.nodes - 1) * s.net_extra_latency_us * s.net_latency_scale;
            }
          } else {
            const double overhead = net_overhead * (p == Proto::kSimple ? 3 : 1) * s.net_latency_scale;
            intra_lat = std::max(intra_lat, overhead);
            const double inter_steps = s.nodes == 1 ? 0
                                       : f == Func::kAllReduce ? 2.0 * static_cast<double>(s.nodes - 1)
                                                               : static_cast<double>(s.nodes - 1);
            lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
          }
        } else if (a == Algo::kTree) {
          if (f == Func::kAllReduce) {
            lat += 2 * ((ppn - 1) * intra_lat + log2i(s.nodes) * inter_lat);
          }
        } else if (a == Algo::kCollNetDirect) {
          lat += 2 * (std::min(1.0, ppn - 1) * intra_lat + (ppn - 1) * 0.4) + inter_lat;
        } else if (a == Algo::kCollNetChain) {
          lat += 2 * (ppn - 1) * intra_lat + inter_lat;
        } else if (a == Algo::kNvls) {
          lat = intra_lat;
          if (s.nodes > 1) lat += inter_lat;
        } else if (a == Algo::kNvlsTree) {
          lat += intra_lat + 2 * log2i(s.nodes) * inter_lat;
        } else if (a == Algo::kPat) {
          lat += log2i(s.nodes) * (inter_lat / 3.5) + ranks * 2.8;
        }
        // Enabled: NCCL's rules, then the lists.
        bool on = enabled_.algo[fi][ai] && enabled_.proto[fi][pi];
        if (p == Proto::kLL128 && !ll128_ok) on = false;
        if (a == Algo::kNvlsTree && (s.nodes == 1 || !s.nvls)) on = false;
        if (a == Algo::kNvls && (!s.nvls || (s.nodes > 1 && !s.collnet))) on = false;
        if (collnet && !s.collnet) on = false;
        if (a == Algo::kCollNetDirect && (!s.nvswitch || s.local_ranks > kMaxDirectArity + 1)) on = false;
        if (a == Algo::kCollNetChain && s.local_ranks > kMaxDirectArity + 1) on = false;
        available_[i] = on && bus > 0;
        latency_[i] = lat;
        efficiency_[i] = eff;
        bus_cap_[i] = cap > 0 ? cap : bus;
        model_bw_[i] = bus * bus_to_alg(f, a);
      }
    }
  }
}

}  // namespace ssgd::sim::nccl
