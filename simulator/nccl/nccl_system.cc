#include "simulator/nccl/nccl_system.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "simulator/platform/link_preset.h"

namespace ssgd::sim::nccl {
namespace {

constexpr double kGB = 1e9;
// Our NVLink presets are 0.8 of 25 GB/s a link (50 for NVLink 5); NCCL
// counts each link at its own rate (nvlink_per_link_bw).
double nvlink_view(double bytes_per_s, GpuArch arch) {
  const double raw = arch == GpuArch::kBlackwell ? 50.0 : 25.0;
  return bytes_per_s / kGB * nvlink_per_link_bw(arch) / (0.8 * raw);
}
// PCIe: our pcie3_x16 is 12.6 GB/s, NCCL's PCI_BW 12.
double pcie_view(double bytes_per_s) { return bytes_per_s / kGB * kPciBw / 12.6032; }

// Bandwidths from the platform's presets come out a hair off NCCL's round
// numbers (50.412 GB/s a PCIe 5.0 link against NCCL's 48 x 1.05): compare
// them with this much slack.
constexpr double kSlack = 1.001;

// Channels a speed carries (the search's outcome for that speed).
int channels_at(const System& s, double speed) {
  constexpr int kSearchMax = kMaxChannels / 2;
  if (s.nodes > 1) {
    const auto per_rail = static_cast<std::int64_t>(std::floor(s.nic_bw * kSlack / speed));
    std::int64_t n = s.rails * per_rail;
    if (s.local_ranks > 1) {
      // A channel crosses local_ranks - 1 GPU-to-GPU hops of its node.
      const double hop_share = static_cast<double>(s.local_ranks - 1) / static_cast<double>(s.local_ranks);
      n = std::min<std::int64_t>(n, static_cast<std::int64_t>(std::floor(s.gpu_intra_bw * kSlack / (speed * hop_share))));
    }
    return static_cast<int>(std::clamp<std::int64_t>(n, 0, kSearchMax));
  }
  const auto n = static_cast<std::int64_t>(std::floor(s.gpu_intra_bw * kSlack / speed));
  return static_cast<int>(std::clamp<std::int64_t>(n, 0, kSearchMax));
}

// The fastest speed of NCCL's list no faster than `limit`.
double speed_at_most(std::span<const double> speeds, double limit) {
  for (const double s : speeds) {
    if (s <= limit * kSlack) return s;
  }
  return speeds.back();
}

}  // namespace

System make_system(const Platform& platform, std::int64_t nodes, std::int64_t local_ranks) {
  const PlatformSpec& spec = platform.spec();
  const NodeSpec& n = spec.node;
  System s;
  s.nodes = nodes;
  s.local_ranks = local_ranks;
  s.ranks = nodes * local_ranks;
  s.arch = n.gpu_arch;
  s.cpu = n.cpu_vendor;
  s.nvswitch = n.nvlink == NvlinkTopology::kSwitch;
  s.intra_nvlink = n.nvlink != NvlinkTopology::kNone;
  s.nvls = n.nvls && s.nvswitch && local_ranks > 1 && n.gpu_arch >= GpuArch::kHopper;
  s.collnet = spec.fabric.sharp && nodes > 1;
  const auto factor = [&spec](LinkKind k) { return spec.bandwidth_factor[static_cast<std::size_t>(k)]; };
  const auto latency = [&spec](LinkKind k) { return spec.latency_factor[static_cast<std::size_t>(k)]; };
  const LinkKind intra_kind = s.intra_nvlink ? LinkKind::kNvlink : LinkKind::kPcie;
  s.intra_bw_scale = factor(intra_kind);
  s.net_bw_scale = factor(LinkKind::kNic);
  s.intra_latency_scale = latency(intra_kind);
  s.net_latency_scale = latency(LinkKind::kNic);
  // The hardware's rates below: NCCL's detection sees no what-if.
  // A GPU's bandwidth to the others of its node, and the best pair.
  if (n.nvlink == NvlinkTopology::kSwitch) {
    s.gpu_intra_bw = nvlink_view(n.nvlink_link.bandwidth_bytes_per_s, s.arch);
    s.gpu_pair_bw = s.gpu_intra_bw;
  } else if (n.nvlink == NvlinkTopology::kMesh) {
    std::vector<double> total(static_cast<std::size_t>(n.gpus), 0.0);
    for (const NvlinkPair& p : n.nvlink_pairs) {
      const double bw = nvlink_view(n.nvlink_link.bandwidth_bytes_per_s * static_cast<double>(p.links), s.arch);
      total[static_cast<std::size_t>(p.a)] += bw;
      total[static_cast<std::size_t>(p.b)] += bw;
      s.gpu_pair_bw = std::max(s.gpu_pair_bw, bw);
    }
    s.gpu_intra_bw = *std::max_element(total.begin(), total.end());
  } else {
    s.gpu_intra_bw = pcie_view(n.pcie.bandwidth_bytes_per_s);
    s.gpu_pair_bw = s.gpu_intra_bw;
  }
  if (nodes > 1 && n.nics > 0) {
    std::set<std::int64_t> rails;
    for (std::int64_t g = 0; g < local_ranks; ++g) {
      const std::int64_t nic = platform.nic_of_gpu(g);
      rails.insert(nic);
      s.nic_path = std::max(s.nic_path, platform.nic_path(g, nic));
      // NCCL's maxBw: the best GPU's path to a NIC (a channel enters a node
      // at the NIC's own GPU).
      s.gpu_nic_bw = std::max(s.gpu_nic_bw, pcie_view(platform.nic_path_bandwidth(g, nic)));
    }
    s.rails = static_cast<std::int64_t>(rails.size());
    // NCCL's topology sees the NIC's line rate, not its payload.
    s.nic_bw = n.nic.bandwidth_bytes_per_s / payload_share(n.nic_preset) / kGB;
    const double nic_latency_us = static_cast<double>(n.nic.latency.ns()) * 1e-3;
    s.net_extra_latency_us = std::max(0.0, nic_latency_us - 1.5);
  }
  return s;
}

Graphs make_graphs(const System& s, std::optional<int> channels) {
  Graphs g;
  if (s.ranks <= 1) return g;
  const bool inter = s.nodes > 1;
  const std::span<const double> speeds = search_speeds(s.arch, inter);
  const double limit = inter ? std::min(s.nic_bw, s.gpu_nic_bw) : s.gpu_pair_bw;
  // The speed that carries most, ties to the faster; once one carries any
  // channel, the search goes on down only to about half of it (search.cc:
  // "decrease bw until we find a solution", while the next speed is above
  // 0.49 of the one found).
  double best_speed = 0;
  int best_channels = 0;
  double first_found = 0;
  for (const double speed : speeds) {
    if (speed > limit * kSlack) continue;
    if (first_found > 0 && speed / first_found <= 0.49) break;
    const int n = channels_at(s, speed);
    if (n > 0 && first_found == 0) first_found = speed;
    if (n > 0 && static_cast<double>(n) * speed > static_cast<double>(best_channels) * best_speed + 1e-9) {
      best_speed = speed;
      best_channels = n;
    }
  }
  if (best_channels == 0) {  // slower than every speed: one channel at the slowest
    best_speed = speeds.back();
    best_channels = 1;
  }
  // ncclTopoDupChannels.
  if (best_speed >= 25.0 && !(s.arch >= GpuArch::kHopper && best_speed < 50.0 && best_channels > 4)) {
    const int dup = std::min(best_channels * 2, kMaxChannels / 2);
    best_speed /= static_cast<double>((dup + best_channels - 1) / best_channels);
    best_channels = dup;
  }
  g.ring = {best_channels, best_speed, best_speed};
  g.tree = g.ring;
  if (inter && s.nodes <= 2) {
    double intra = best_speed;
    for (const double speed : speeds) {
      if (speed <= 2 * best_speed * kSlack &&
          speed * best_channels <= s.gpu_intra_bw * kSlack) {
        intra = std::max(intra, speed);
        break;
      }
    }
    g.tree.bw_intra = intra;
  }
  int coll = std::min(kMaxChannels, 2 * best_channels);
  if (s.arch >= GpuArch::kHopper && inter && best_speed > 45.0 && coll < 16) coll = std::min(kMaxChannels, 2 * coll);
  g.default_coll_channels = coll;
  g.coll_channels = channels ? std::clamp(*channels, 1, kMaxChannels) : coll;
  if (s.nvls) {
    // One NVLS channel per head: every GPU on one node, a GPU per NIC rail
    // between nodes. The search counts each channel's speed once on every
    // GPU's NVSwitch port and twice on its head's (search.cc,
    // ncclTopoSearchTryNvls), so a head's port carries heads + 1 speeds.
    const int heads = static_cast<int>(inter ? std::min(s.rails, s.local_ranks) : s.local_ranks);
    if (heads >= 2) {
      g.nvls.channels = heads;
      g.nvls.bw_intra = speed_at_most(speeds, s.gpu_intra_bw / static_cast<double>(heads + 1));
      if (inter) {
        g.nvls.bw_inter = speed_at_most(speeds, std::min(s.nic_bw, s.gpu_nic_bw));
        g.nvls.bw_intra = std::min(g.nvls.bw_intra, 2 * g.nvls.bw_inter);
      } else {
        // No network to bound it: the search raises it to twice the intra
        // speed, within its list (search.cc, pass 2 for NVLS).
        g.nvls.bw_inter = speed_at_most(speeds, 2 * g.nvls.bw_intra);
      }
      g.nvls_tuning = nvls_tuning(s.arch, s.nodes, s.local_ranks, s.nic_bw, s.nic_path <= PciePath::kPxb);
      g.nvls_channels = g.nvls_tuning.channels;
    }
  }
  if (s.collnet) {
    g.collnet.channels = static_cast<int>(std::min(s.rails, s.local_ranks));
    g.collnet.bw_inter = speed_at_most(speeds, std::min(s.nic_bw, s.gpu_nic_bw));
    g.collnet.bw_intra = speed_at_most(speeds, s.gpu_intra_bw / std::max(1, g.collnet.channels));
  }
  // A what-if's factors on the links: the same channels, scaled speeds.
  for (Graph* graph : {&g.ring, &g.tree, &g.nvls, &g.collnet}) {
    graph->bw_intra *= s.nodes > 1 ? s.net_bw_scale : s.intra_bw_scale;
    graph->bw_inter *= s.nodes > 1 ? s.net_bw_scale : s.intra_bw_scale;
  }
  return g;
}

}  // namespace ssgd::sim::nccl
