#pragma once
// What a platform is made of, as a scenario or a preset describes it: the
// inside of one node (a PCIe tree, NVLink, NICs), the transport over the
// NICs, and the fabric between nodes. Every node is alike. Platform
// (platform.h) turns a spec into a graph of directed links.
//
// Bandwidths are payload rates in one direction; a physical full-duplex link
// becomes two directed links of that capacity. Latencies are per-message
// start-up costs as a collective library sees them (simulator/network/
// link_preset.cc); a route pays the largest start-up cost of the link kinds
// it crosses, not their sum, plus every fabric switch hop.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/time.h"
#include "simulator/collective/collective.h"

namespace ssgd::sim {

struct LinkSpec {
  double bandwidth_bytes_per_s = 0;  // > 0
  Duration latency;                  // >= 0
};

// The kinds of link a platform is built of (Platform::links()).
enum class LinkKind : std::uint8_t { kPcie, kSocket, kNvlink, kNic, kFabric };
const char* to_string(LinkKind kind);
inline constexpr int kLinkKindCount = 5;

enum class NvlinkTopology { kNone, kMesh, kSwitch };
const char* to_string(NvlinkTopology t);

// The GPU generation, as NCCL's tuning tables tell them apart (compute
// capability 7.x, 8.x, 9.x, 10.x): it picks the rows of those tables and
// whether a generation's features (NVLink SHARP, LL128 by default) exist.
enum class GpuArch : std::uint8_t { kVolta, kAmpere, kHopper, kBlackwell };
const char* to_string(GpuArch a);

// The host CPU's vendor: NCCL's tuning reads it for the LL protocol's
// bandwidth between nodes and the cost of posting a network operation.
enum class CpuVendor : std::uint8_t { kIntel, kAmd, kArm };
const char* to_string(CpuVendor v);

// Two GPUs of a node joined by `links` NVLinks (mesh topology).
struct NvlinkPair {
  std::int64_t a = 0;
  std::int64_t b = 0;
  std::int64_t links = 1;
  friend bool operator==(const NvlinkPair&, const NvlinkPair&) = default;
};

struct NodeSpec {
  std::int64_t gpus = 1;
  GpuArch gpu_arch = GpuArch::kVolta;
  // One GPU's memory in bytes, as its datasheet states it (GiB); 0: unknown.
  std::int64_t gpu_memory = 0;
  // The GPU's preset (simulator/platform/gpu_preset.h), e.g. "h100-sxm";
  // empty: unknown (the generic platform).
  std::string gpu_model;
  CpuVendor cpu_vendor = CpuVendor::kIntel;
  // PCIe tree: `sockets` CPUs (root complexes) joined by `socket_link`;
  // `pcie_switches` switches spread evenly over the sockets, and the GPUs and
  // NICs spread evenly over the switches in index order (0: GPUs and NICs sit
  // on the CPUs' root ports). Every PCIe link (device-switch, switch-CPU) is
  // `pcie`.
  std::int64_t sockets = 1;
  std::int64_t pcie_switches = 0;
  LinkSpec pcie;
  // The generic platform's PCIe (network.intra_node and inter_node presets
  // only): a hop between GPU and NIC that stands for no link, as fast as the
  // faster of the two and without latency. Described as not modelled, and
  // left out of the link utilisation: its figures would mean nothing.
  bool pcie_free = false;
  // Where each GPU hangs in the PCIe tree: a switch index (or a socket index
  // when there are no switches), -1 for a GPU on no PCIe path to the others
  // (reachable over NVLink only). Empty: spread evenly, in index order.
  std::vector<std::int64_t> gpu_attach;
  LinkSpec socket_link;
  // NVLink: none; a mesh of `nvlink_pairs`, each `links` x `nvlink`; or every
  // GPU joined to an NVSwitch by one port of `nvlink` (all its links together).
  NvlinkTopology nvlink = NvlinkTopology::kNone;
  LinkSpec nvlink_link;
  // The NVSwitch reduces and multicasts (NVLink SHARP, third-generation
  // NVSwitch with Hopper and later): NCCL's NVLS algorithms. Switch only.
  bool nvls = false;
  std::vector<NvlinkPair> nvlink_pairs;
  // The order in which a ring visits the node's GPUs (NCCL builds its rings
  // along NVLinks); empty means 0, 1, ..., gpus-1.
  std::vector<std::int64_t> ring_order;
  // NICs: `nics` per node, spread over the PCIe switches like the GPUs; GPU g
  // sends through NIC g x nics / gpus. nics == gpus is one NIC per GPU
  // (rail-optimised). `nic` is the NIC's line as its native transport sees it.
  std::int64_t nics = 1;
  // Where each NIC hangs in the PCIe tree, as gpu_attach (a node cut to its
  // first GPUs keeps its NICs where they were: partial_node.h). Empty: spread
  // evenly, in index order.
  std::vector<std::int64_t> nic_attach;
  LinkSpec nic;
  std::string nic_preset;  // the link preset `nic` came from: its class sets the native transport
};

// How messages cross the NICs. `native` keeps the NIC preset's numbers
// (kernel TCP for Ethernet presets, RDMA verbs for InfiniBand ones); tcp and
// rdma change the NIC's bandwidth and per-message latency, so that "the same
// 100GbE with RoCE" is a one-key change. The change is applied to
// NodeSpec::nic when the spec is made (apply_transport in
// platform_preset.h); here it only records what was chosen.
enum class Transport { kNative, kTcp, kRdma };
const char* to_string(Transport t);

enum class FabricKind { kSwitch, kFatTree };
const char* to_string(FabricKind k);

struct FabricSpec {
  FabricKind kind = FabricKind::kSwitch;
  // Fat tree: leaves of `nodes_per_leaf` nodes; each leaf's uplink to the
  // spine layer carries (sum of its NIC lines) / oversubscription per
  // direction (ECMP over the spines taken as ideal: one aggregate link).
  std::int64_t nodes_per_leaf = 1;
  double oversubscription = 1.0;  // >= 1
  // Rail-optimised fat tree: NIC i of every node in a leaf group goes to leaf
  // (group, i); traffic between rails crosses the spine.
  bool rail_optimized = false;
  Duration switch_latency;  // per switch a message crosses
  // The switches reduce in the network (InfiniBand SHARP) and NCCL is set up
  // to use it (the SHARP plugin, NCCL_COLLNET_ENABLE=1): NCCL's CollNet
  // algorithms.
  bool sharp = false;
};

struct PlatformSpec {
  std::string name;         // preset name, or "custom"
  std::string description;  // one line
  std::string source;       // where the numbers come from
  NodeSpec node;
  Transport transport = Transport::kNative;
  // TCP streams between nodes (platform.nic.tcp_streams, tcp_stream_rate):
  // bound each transfer when the NIC runs TCP (Platform::inter_node_streams).
  StreamCap tcp_streams;
  FabricSpec fabric;
  // What-if factors per link kind, indexed by LinkKind (perturb.bandwidth_factors
  // and perturb.latency_factors): Platform multiplies the bandwidth and the
  // latency of every link of a kind by them when it builds its links, so both
  // network models see them. A fabric leaf's uplink is made from the NICs'
  // unscaled lines, then scaled by the fabric factor; the fabric latency
  // factor also scales FabricSpec::switch_latency.
  std::array<double, kLinkKindCount> bandwidth_factor{1, 1, 1, 1, 1};
  std::array<double, kLinkKindCount> latency_factor{1, 1, 1, 1, 1};
};

}  // namespace ssgd::sim
