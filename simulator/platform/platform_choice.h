#pragma once
// The platform as a user chooses it: a preset (or "generic", built from the
// intra- and inter-node links), then any of these parts on top. Scenario keys
// platform.* set them; simulator/scenario/scenario_platform.h turns a
// scenario's choice into a PlatformSpec.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/time.h"
#include "simulator/platform/platform_spec.h"

namespace ssgd::sim {

struct PlatformChoice {
  std::string preset = "generic";                       // key: platform.preset
  std::optional<GpuArch> gpu_arch;                      // platform.gpu.arch
  std::optional<std::int64_t> gpu_memory;               // platform.gpu.memory (bytes)
  std::optional<std::string> gpu_model;  // platform.gpu.model: a GPU preset, or "capture"
  // Set by the key (a user's choice: a profile that cannot move to it is
  // refused), not carried over from another run's platform (a note only).
  bool gpu_model_from_key = false;
  std::optional<CpuVendor> cpu_vendor;                  // platform.cpu.vendor
  std::optional<std::string> pcie_link;                 // platform.pcie.link (link preset)
  std::optional<double> pcie_bandwidth;                 // platform.pcie.bandwidth
  std::optional<Duration> pcie_latency;                 // platform.pcie.latency
  std::optional<std::int64_t> pcie_switches;            // platform.pcie.switches
  std::optional<std::int64_t> sockets;                  // platform.pcie.sockets
  std::optional<std::vector<std::int64_t>> gpu_attach;  // platform.pcie.gpu_attach
  std::optional<NvlinkTopology> nvlink;                 // platform.nvlink.topology
  std::optional<double> nvlink_bandwidth;  // platform.nvlink.bandwidth (one link or one port)
  std::optional<Duration> nvlink_latency;  // platform.nvlink.latency
  std::optional<std::vector<NvlinkPair>> nvlink_pairs;  // platform.nvlink.pairs
  std::optional<std::vector<std::int64_t>> ring_order;  // platform.nvlink.ring_order
  std::optional<bool> nvls;                             // platform.nvlink.nvls
  std::optional<std::string> nic_link;                  // platform.nic.link (link preset)
  std::optional<std::int64_t> nic_count;                // platform.nic.count
  std::optional<double> nic_bandwidth;                  // platform.nic.bandwidth
  std::optional<Duration> nic_latency;                  // platform.nic.latency
  Transport transport = Transport::kNative;             // platform.nic.transport
  std::optional<std::string> tcp_preset;                // platform.nic.tcp_preset
  std::optional<std::int64_t> tcp_streams;              // platform.nic.tcp_streams
  std::optional<double> tcp_stream_rate;                // platform.nic.tcp_stream_rate
  std::optional<FabricKind> fabric;                     // platform.fabric.kind
  std::optional<std::int64_t> nodes_per_leaf;           // platform.fabric.nodes_per_leaf
  std::optional<double> oversubscription;               // platform.fabric.oversubscription
  std::optional<bool> rail_optimized;                   // platform.fabric.rail_optimized
  std::optional<Duration> switch_latency;               // platform.fabric.switch_latency
  std::optional<bool> sharp;                            // platform.fabric.sharp

  friend bool operator==(const PlatformChoice&, const PlatformChoice&) = default;
};

}  // namespace ssgd::sim
