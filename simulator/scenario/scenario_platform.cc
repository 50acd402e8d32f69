#include "simulator/scenario/scenario_platform.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "common/error.h"
#include "simulator/calibration/network_calibration.h"
#include "simulator/platform/link_preset.h"
#include "simulator/platform/gpu_preset.h"
#include "simulator/platform/partial_node.h"
#include "simulator/platform/platform_preset.h"
#include "simulator/platform/tcp_stream_preset.h"

namespace ssgd::sim {
namespace {

LinkSpec with_overrides(LinkSpec base, const std::optional<std::string>& preset,
                        const std::optional<double>& bandwidth, const std::optional<Duration>& latency) {
  if (preset) base = link_spec(*find_link_preset(*preset));
  if (bandwidth) base.bandwidth_bytes_per_s = *bandwidth;
  if (latency) base.latency = *latency;
  return base;
}

// The network.intra_node* (or inter_node*) key the scenario gave, for a
// message located at it: the first of the three that was given.
std::string given_network_key(const Scenario& s, std::string_view level) {
  for (const char* leaf : {"", "_bandwidth", "_latency"}) {
    const std::string key = fmt::format("network.{}{}", level, leaf);
    if (s.origins.contains(key)) return key;
  }
  return fmt::format("network.{}", level);
}

}  // namespace

// Every bad value is a ParameterError naming the key that sets it, so that
// the caller (with_located_errors) can say where it was given.
std::string scenario_gpu_model(const Scenario& s) {
  if (s.platform.gpu_model) return *s.platform.gpu_model == "capture" ? "" : *s.platform.gpu_model;
  const PlatformPreset* preset = find_platform_preset(s.platform.preset);
  return preset ? preset->make().node.gpu_model : "";
}

PlatformSpec scenario_platform_spec(const Scenario& s) {
  PlatformSpec spec;
  const PlatformChoice& c = s.platform;
  if (c.preset == "generic") {
    LinkParams intra = resolve_link(s.intra_node);
    LinkParams inter = resolve_link(s.inter_node);
    // A calibration measured the network at a level the scenario does not
    // name (its link is only the default): that link carries at least the
    // fastest band's rate, so that neither holds the measured bands back nor
    // reports more than it carries.
    if (const auto cal = scenario_calibration(s)) {
      double fastest = 0;
      for (const auto& coll : cal->collectives) {
        for (const auto& band : coll.bands) fastest = std::max(fastest, band.bandwidth_bytes_per_s);
      }
      LinkParams& level = cal->level == "intra_node" ? intra : inter;
      const bool given = cal->level == "intra_node" ? s.intra_node_given : s.inter_node_given;
      if (!given) level.bandwidth_bytes_per_s = std::max(level.bandwidth_bytes_per_s, fastest);
    }
    spec = generic_platform(s.gpus_per_node, LinkSpec{intra.bandwidth_bytes_per_s, intra.latency},
                            s.intra_node.preset, LinkSpec{inter.bandwidth_bytes_per_s, inter.latency},
                            s.inter_node.preset);
  } else {
    const PlatformPreset* p = find_platform_preset(c.preset);
    if (p == nullptr) {
      throw ParameterError("platform.preset", unknown_platform_preset(c.preset));
    }
    if (s.intra_node_given || s.inter_node_given) {
      const std::string key = given_network_key(s, s.intra_node_given ? "intra_node" : "inter_node");
      throw ParameterError(key, fmt::format(
          "{} describes the generic platform only; platform.preset is '{}': change its "
          "links with the platform.pcie.*, platform.nvlink.* and platform.nic.* keys",
          key, c.preset));
    }
    spec = p->make();
    // Fewer GPUs than a node has: the job uses the first of them (cut below,
    // once every key has changed the whole node).
    if (s.gpus_per_node_given && s.gpus_per_node > spec.node.gpus) {
      throw ParameterError("cluster.gpus_per_node", fmt::format(
          "cluster.gpus_per_node is {} but a {} node has {} GPUs; use at most {}, or "
          "platform.preset: generic for another node",
          s.gpus_per_node, c.preset, spec.node.gpus, spec.node.gpus));
    }
  }
  NodeSpec& n = spec.node;
  std::string partial;  // said in the name when the job uses part of each node
  n.pcie = with_overrides(n.pcie, c.pcie_link, c.pcie_bandwidth, c.pcie_latency);
  if (c.pcie_switches) n.pcie_switches = *c.pcie_switches;
  if (c.sockets) {
    n.sockets = *c.sockets;
    if (n.sockets > 1 && !(n.socket_link.bandwidth_bytes_per_s > 0)) {
      n.socket_link = link_spec(*find_link_preset("pcie3_x16"));
    }
  }
  if (c.gpu_attach) n.gpu_attach = *c.gpu_attach;
  if (c.gpu_arch) n.gpu_arch = *c.gpu_arch;
  if (c.gpu_model) {
    n.gpu_model = scenario_gpu_model(s);
    // The named GPU's memory, unless platform.gpu.memory says otherwise.
    if (const GpuSpec* gpu = find_gpu_preset(n.gpu_model)) n.gpu_memory = gpu->memory_bytes;
  }
  if (c.gpu_memory) n.gpu_memory = *c.gpu_memory;
  if (c.cpu_vendor) n.cpu_vendor = *c.cpu_vendor;
  if (c.nvlink) {
    n.nvlink = *c.nvlink;
    // NVLink SHARP lives in an NVSwitch: another topology has none.
    if (n.nvlink != NvlinkTopology::kSwitch) n.nvls = false;
  }
  if (c.nvls) n.nvls = *c.nvls;
  if (n.nvlink != NvlinkTopology::kNone && !(n.nvlink_link.bandwidth_bytes_per_s > 0) &&
      !c.nvlink_bandwidth) {
    throw ParameterError(
        "platform.nvlink.topology",
        "platform.nvlink.topology needs platform.nvlink.bandwidth on a platform without NVLink");
  }
  if (c.nvlink_bandwidth) {
    // NVLink switched on here starts from the nvlink presets' 2 us latency.
    if (!(n.nvlink_link.bandwidth_bytes_per_s > 0)) n.nvlink_link.latency = Duration(2'000);
    n.nvlink_link.bandwidth_bytes_per_s = *c.nvlink_bandwidth;
  }
  if (c.nvlink_latency) n.nvlink_link.latency = *c.nvlink_latency;
  if (c.nvlink_pairs) {
    // Pairs given for another topology would be ignored without a word.
    if (n.nvlink != NvlinkTopology::kMesh) {
      throw ParameterError(
          "platform.nvlink.pairs",
          fmt::format("NVLink pairs join the GPUs of a mesh, but the NVLink topology is {} "
                      "(platform.nvlink.topology): set platform.nvlink.topology: mesh or leave "
                      "platform.nvlink.pairs out",
                      to_string(n.nvlink)));
    }
    n.nvlink_pairs = *c.nvlink_pairs;
  }
  if (c.ring_order) n.ring_order = *c.ring_order;
  if (c.nic_link) n.nic_preset = *c.nic_link;
  n.nic = with_overrides(n.nic, c.nic_link, std::nullopt, std::nullopt);
  // The transport changes the NIC preset's numbers; explicit values win over it.
  if (c.transport != Transport::kNative) apply_transport(spec, c.transport);
  n.nic = with_overrides(n.nic, std::nullopt, c.nic_bandwidth, c.nic_latency);
  if (c.nic_count) n.nics = *c.nic_count;
  if (c.preset != "generic" && s.gpus_per_node_given && s.gpus_per_node < n.gpus) {
    const std::int64_t whole = n.gpus;
    n = partial_node(n, s.gpus_per_node, s.nodes);
    partial = fmt::format(" ({} of a node's {} GPUs)", n.gpus, whole);
  }
  if (c.tcp_preset) {
    const TcpStreamPreset* p = find_tcp_stream_preset(*c.tcp_preset);
    if (p == nullptr) {
      throw ParameterError("platform.nic.tcp_preset",
                           fmt::format("unknown TCP stream preset '{}'", *c.tcp_preset));
    }
    spec.tcp_streams.streams = p->streams;
    spec.tcp_streams.stream_rate_bytes_per_s = p->stream_rate_bytes_per_s;
  }
  if (c.tcp_streams && !c.tcp_stream_rate && !c.tcp_preset) {
    throw ParameterError(
        "platform.nic.tcp_streams",
        "platform.nic.tcp_streams needs platform.nic.tcp_stream_rate, the rate of one stream "
        "(or platform.nic.tcp_preset)");
  }
  if (c.tcp_stream_rate) spec.tcp_streams.stream_rate_bytes_per_s = *c.tcp_stream_rate;
  if (c.tcp_streams) spec.tcp_streams.streams = *c.tcp_streams;
  if (c.fabric) spec.fabric.kind = *c.fabric;
  if (c.nodes_per_leaf) spec.fabric.nodes_per_leaf = *c.nodes_per_leaf;
  if (c.oversubscription) spec.fabric.oversubscription = *c.oversubscription;
  if (c.rail_optimized) spec.fabric.rail_optimized = *c.rail_optimized;
  if (c.switch_latency) spec.fabric.switch_latency = *c.switch_latency;
  if (c.sharp) spec.fabric.sharp = *c.sharp;
  // perturb.bandwidth_factors / latency_factors, and the nccl class factor t
  // as latency x t and bandwidth / t on every link: that multiplies every
  // alpha-beta collective time by t under both network models.
  const double nccl = s.perturb.class_factors[static_cast<std::size_t>(KernelClass::kNccl)];
  for (std::size_t k = 0; k < static_cast<std::size_t>(kLinkKindCount); ++k) {
    spec.bandwidth_factor[k] = s.perturb.bandwidth_factors[k] / nccl;
    spec.latency_factor[k] = s.perturb.latency_factors[k] * nccl;
  }
  // Any platform.* key beyond the preset's name changes the machine.
  PlatformChoice preset_only;
  preset_only.preset = c.preset;
  const bool customised = !(c == preset_only);
  if (customised) spec.name += " (customised)";
  spec.name += partial;
  return spec;
}

std::int64_t scenario_gpus_per_node(const Scenario& s) {
  if (s.platform.preset == "generic" || s.gpus_per_node_given) return s.gpus_per_node;
  const PlatformPreset* p = find_platform_preset(s.platform.preset);
  return p == nullptr ? s.gpus_per_node : p->make().node.gpus;
}

}  // namespace ssgd::sim
