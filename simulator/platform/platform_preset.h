#pragma once
// Named platforms: real machines described with the numbers of their parts.
// platform_preset.cc gives every number with its source; docs/platforms.md
// tabulates them and `ssgd presets` prints them.

#include <span>
#include <string>
#include <string_view>

#include "simulator/platform/link_preset.h"
#include "simulator/platform/platform_spec.h"

namespace ssgd::sim {

struct PlatformPreset {
  std::string_view name;
  PlatformSpec (*make)();
};

std::span<const PlatformPreset> platform_presets();
const PlatformPreset* find_platform_preset(std::string_view name);
std::string platform_preset_names();
// "unknown platform preset 'X' (did you mean 'Y'?); known presets: generic, ..."
std::string unknown_platform_preset(std::string_view name);

// A LinkSpec from a link preset's numbers.
LinkSpec link_spec(const LinkPreset& preset);

// The generic platform of a scenario that names only link presets
// (network.intra_node, network.inter_node): every GPU of a node on one switch
// of the intra-node link (an NVSwitch port for NVLink presets, a PCIe switch
// port otherwise), one NIC per node of the inter-node link, one fabric switch.
// The GPU generation is the NVLink preset's (nvlink2: Volta, nvlink3:
// Ampere, nvlink4: Hopper, with NVLink SHARP), Volta without NVLink.
PlatformSpec generic_platform(std::int64_t gpus_per_node, const LinkSpec& intra,
                              std::string_view intra_preset, const LinkSpec& inter,
                              std::string inter_preset);

// Applies `transport` to the spec's NIC, whose link preset
// (NodeSpec::nic_preset) sets the native transport (Ethernet presets are
// kernel TCP, InfiniBand presets RDMA):
//   rdma over Ethernet (RoCE v2): bandwidth x 0.95/0.9 (no TCP/IP stack
//     overhead left), latency 3 us;
//   tcp over InfiniBand (IPoIB): bandwidth x 0.5, latency 12 us.
// Records the choice in spec.transport. Throws std::invalid_argument when
// nic_preset names no link preset or is not a network link.
void apply_transport(PlatformSpec& spec, Transport transport);

}  // namespace ssgd::sim
