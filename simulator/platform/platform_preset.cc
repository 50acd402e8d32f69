#include "simulator/platform/platform_preset.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "common/suggest.h"

namespace ssgd::sim {
namespace {

constexpr double kGB = 1e9;
constexpr std::int64_t kGiB = std::int64_t{1} << 30;

LinkSpec preset_link(std::string_view name) {
  const LinkPreset* p = find_link_preset(name);
  if (p == nullptr) throw std::logic_error(fmt::format("platform preset names link '{}'", name));
  return link_spec(*p);
}

// One NVLink 2/3/4 lane group ("link"): 25 GB/s per direction in all three
// generations (V100, A100 and H100 architecture whitepapers), times the 0.8
// that NCCL reaches over NVLink (see link_preset.cc, nvlink2..4).
LinkSpec nvlink_links(std::int64_t links) {
  return LinkSpec{0.8 * 25 * kGB * static_cast<double>(links), Duration(2'000)};
}

// Between the two sockets of a dual-socket server: Intel UPI at 10.4 GT/s,
// 2 links of about 20.8 GB/s each per direction (Intel Xeon Scalable
// datasheets); GPU peer traffic across it reaches roughly PCIe 3 speed, so
// the 12.6 GB/s and 5 us of pcie3_x16 are used (QPI on DGX-1 likewise).
LinkSpec socket_link() { return preset_link("pcie3_x16"); }

void set_nic(NodeSpec& n, std::int64_t count, std::string_view preset) {
  n.nics = count;
  n.nic = preset_link(preset);
  n.nic_preset = std::string(preset);
}

// A 4 x V100-PCIe server of the kind in Shi, Wang, Chu and Li's and similar
// papers (e.g. Supermicro SYS-4029GP, Dell C4140 in its PCIe-switch
// configurations): two sockets joined by UPI, one PCIe 3.0 switch per
// socket with two GPUs each, the NIC on the first switch. No NVLink.
PlatformSpec v100_pcie(std::string_view name, std::string_view nic) {
  PlatformSpec s;
  s.name = std::string(name);
  s.description = fmt::format("4 x V100-PCIe, 2 PCIe 3.0 switches on 2 sockets, 1 x {}", nic);
  s.source = "NVIDIA Tesla V100 PCIe datasheet (PCIe 3.0 x16, no NVLink); Supermicro "
             "SYS-4029GP-TRT block diagram (GPUs behind PCIe switches, one per socket)";
  s.node.gpus = 4;
  s.node.sockets = 2;
  s.node.pcie_switches = 2;
  s.node.pcie = preset_link("pcie3_x16");
  s.node.socket_link = socket_link();
  set_nic(s.node, 1, nic);
  s.node.gpu_memory = 16 * kGiB;  // the datasheet's 16 GB model (a 32 GB one exists)
  s.node.gpu_model = "v100-pcie";
  return s;
}

PlatformSpec v100_pcie_10gbe() { return v100_pcie("v100_pcie_4x_10gbe", "10gbe"); }
PlatformSpec v100_pcie_100gbe() { return v100_pcie("v100_pcie_4x_100gbe", "100gbe"); }
PlatformSpec v100_pcie_ib100() { return v100_pcie("v100_pcie_4x_ib100", "ib_edr100"); }

// DGX-1 with V100 (NVIDIA DGX-1 with Tesla V100 system architecture white
// paper, 2017): 8 x V100-SXM2 in a hybrid cube-mesh of NVLink 2 with six
// links per GPU — each GPU joined to three GPUs of its own quad and to its
// twin in the other quad, two of those four neighbours by two links;
// 4 PCIe 3.0 switches (PLX) with two GPUs and one EDR InfiniBand NIC each, two
// per Xeon socket. The link counts below are those `nvidia-smi topo -m`
// prints on a DGX-1V (NV1/NV2). The ring follows the doubled links,
// 0-3-2-1-5-6-7-4, one of the rings NCCL builds on this machine.
PlatformSpec dgx1() {
  PlatformSpec s;
  s.name = "dgx1";
  s.description = "DGX-1 (8 x V100-SXM2, hybrid cube-mesh NVLink 2, 4 x EDR InfiniBand)";
  s.source = "NVIDIA DGX-1 with Tesla V100 System Architecture white paper (WP-08437-002); "
             "nvidia-smi topo -m on DGX-1V; IBTA EDR";
  NodeSpec& n = s.node;
  n.gpus = 8;
  n.sockets = 2;
  n.pcie_switches = 4;
  n.pcie = preset_link("pcie3_x16");
  n.socket_link = socket_link();
  n.nvlink = NvlinkTopology::kMesh;
  n.nvlink_link = nvlink_links(1);
  n.nvlink_pairs = {{0, 1, 1}, {0, 2, 1}, {0, 3, 2}, {0, 4, 2}, {1, 2, 2}, {1, 3, 1},
                    {1, 5, 2}, {2, 3, 2}, {2, 6, 1}, {3, 7, 1}, {4, 5, 1}, {4, 6, 1},
                    {4, 7, 2}, {5, 6, 2}, {5, 7, 1}, {6, 7, 2}};
  n.ring_order = {0, 3, 2, 1, 5, 6, 7, 4};
  set_nic(n, 4, "ib_edr100");
  n.gpu_memory = 16 * kGiB;  // V100-SXM2 16 GB (the white paper's DGX-1: 128 GB in all)
  n.gpu_model = "v100-sxm2-16gb";
  return s;
}

// One NVLink lane group of NVLink 5 (Blackwell): 50 GB/s per direction per
// link (NVIDIA Blackwell architecture technical brief: 18 links, 1.8 TB/s
// per GPU both ways), times the same 0.8 NCCL reaches.
LinkSpec nvlink5_links(std::int64_t links) {
  return LinkSpec{0.8 * 50 * kGB * static_cast<double>(links), Duration(2'000)};
}

// An NVSwitch server of NVIDIA's DGX/HGX design: 8 GPUs, each with one
// NVSwitch port (all its NVLinks together), two sockets, `switches` PCIe
// switches holding the GPUs and the eight compute NICs in index order, one
// NIC per GPU on a rail-optimised fat tree of `nodes_per_leaf`-node scalable
// units (DGX SuperPOD reference architectures), 130 ns per InfiniBand switch.
PlatformSpec nvswitch_server(LinkSpec nvlink, std::string_view pcie, std::int64_t switches,
                             std::string_view nic, std::int64_t nodes_per_leaf) {
  PlatformSpec s;
  NodeSpec& n = s.node;
  n.gpus = 8;
  n.sockets = 2;
  n.pcie_switches = switches;
  n.pcie = preset_link(pcie);
  n.socket_link = socket_link();
  n.nvlink = NvlinkTopology::kSwitch;
  n.nvlink_link = nvlink;
  set_nic(n, 8, nic);
  s.fabric.kind = FabricKind::kFatTree;
  s.fabric.nodes_per_leaf = nodes_per_leaf;
  s.fabric.rail_optimized = true;
  s.fabric.switch_latency = Duration(130);
  return s;
}

// DGX A100 (NVIDIA DGX A100 system architecture white paper, 2020): 8 x
// A100-SXM4, each with 12 NVLink 3 links into six NVSwitches (one port of
// 12 x 25 GB/s per direction here); two AMD Rome sockets; four PCIe 4.0
// switches, each with two GPUs and two of the eight ConnectX-6 HDR 200 Gb/s
// compute NICs, one NIC per GPU (rail-optimised); SuperPOD scalable units of
// 20 nodes. No NVLink SHARP (second-generation NVSwitch).
PlatformSpec dgx_a100() {
  PlatformSpec s = nvswitch_server(nvlink_links(12), "pcie4_x16", 4, "ib_hdr200", 20);
  s.name = "dgx_a100";
  s.description = "DGX A100 (8 x A100-SXM4, NVSwitch, NVLink 3, 8 x HDR200 InfiniBand)";
  s.source = "NVIDIA DGX A100 System Architecture white paper (WP-10083-001); NVIDIA A100 "
             "Tensor Core GPU architecture white paper; IBTA HDR";
  s.node.gpu_arch = GpuArch::kAmpere;
  s.node.gpu_memory = 40 * kGiB;  // A100-SXM4-40GB (the white paper's DGX A100: 320 GB in all)
  s.node.gpu_model = "a100-sxm4-40gb";
  s.node.cpu_vendor = CpuVendor::kAmd;
  return s;
}

// HGX/DGX H100 and H200 (NVIDIA DGX H100/H200 user guide; DGX BasePOD
// reference architecture, "Core Components"; H100 architecture white
// paper): 8 Hopper GPUs, 18 NVLink 4 links each into four third-generation
// NVSwitch chips (one port of 18 x 25 GB/s per direction here) with NVLink
// SHARP; two Xeon Platinum 8480C sockets; eight single-port ConnectX-7 NDR
// 400 Gb/s compute NICs, each on a PCIe 5.0 switch with its own GPU (each
// GPU PIX to one NIC, NODE to the other NICs of its socket, as `nvidia-smi
// topo -m` prints on such nodes: deepseek-ai/DeepEP issue 60), on a
// rail-optimised fat tree (DGX SuperPOD reference architecture: 32-node
// scalable units). H100 and H200 differ in memory, not in these links.
PlatformSpec hopper_server(std::string_view name, std::string_view gpu, std::string_view gpu_model,
                           std::int64_t memory_gib) {
  PlatformSpec s = nvswitch_server(nvlink_links(18), "pcie5_x16", 8, "ib_ndr400", 32);
  s.name = std::string(name);
  s.description = fmt::format("HGX/DGX {0} (8 x {0}-SXM, NVSwitch with NVLink SHARP, NVLink 4, "
                              "8 x NDR400 InfiniBand)", gpu);
  s.source = "NVIDIA H100 Tensor Core GPU architecture white paper; NVIDIA DGX H100/H200 user "
             "guide; DGX BasePOD and SuperPOD reference architectures (H100, H200); IBTA NDR";
  s.node.gpu_arch = GpuArch::kHopper;
  s.node.gpu_memory = memory_gib * kGiB;
  s.node.gpu_model = std::string(gpu_model);
  s.node.cpu_vendor = CpuVendor::kIntel;
  s.node.nvls = true;
  return s;
}
// H100-SXM5 80 GB HBM3, H200-SXM 141 GB HBM3e (NVIDIA H100 and H200 datasheets).
PlatformSpec hgx_h100() { return hopper_server("hgx_h100", "H100", "h100-sxm", 80); }
PlatformSpec hgx_h200() { return hopper_server("hgx_h200", "H200", "h200", 141); }

// DGX B200 (NVIDIA DGX B200 user guide, "Introduction to NVIDIA DGX B200
// Systems"; Blackwell architecture technical brief): 8 B200, 18 NVLink 5
// links each into two fifth-generation NVSwitches with NVLink SHARP (one
// port of 18 x 50 GB/s per direction here); two Xeon 8570 sockets; eight
// single-port ConnectX-7 400 Gb/s compute NICs, paired with the GPUs as on
// the Hopper servers; SuperPOD scalable units of 32 nodes.
PlatformSpec dgx_b200() {
  PlatformSpec s = nvswitch_server(nvlink5_links(18), "pcie5_x16", 8, "ib_ndr400", 32);
  s.name = "dgx_b200";
  s.description = "DGX B200 (8 x B200, NVSwitch with NVLink SHARP, NVLink 5, 8 x NDR400 InfiniBand)";
  s.source = "NVIDIA DGX B200 user guide; NVIDIA Blackwell architecture technical brief; DGX "
             "BasePOD reference architecture (B200); IBTA NDR";
  s.node.gpu_arch = GpuArch::kBlackwell;
  s.node.gpu_memory = 180 * kGiB;  // B200 (DGX B200 user guide: 1,440 GB of GPU memory in all)
  s.node.gpu_model = "b200";
  s.node.cpu_vendor = CpuVendor::kIntel;
  s.node.nvls = true;
  return s;
}

// A 4-GPU node with 56 Gb/s FDR InfiniBand, as in the clusters of Shi, Wang
// and Chu (DAG model, ICPADS 2018; MG-WFBP, INFOCOM 2019: nodes of 4 GPUs
// with Mellanox FDR 56 Gb/s): one socket, GPUs on PCIe 3.0 root ports, one
// ConnectX-3 FDR NIC.
PlatformSpec ib56_4gpu() {
  PlatformSpec s;
  s.name = "ib56_4gpu";
  s.description = "4 GPUs on PCIe 3.0, 1 x FDR 56 Gb/s InfiniBand";
  s.source = "Shi, Wang, Chu, Li, ICPADS 2018 and Shi, Chu, Li, INFOCOM 2019 (cluster "
             "description); IBTA FDR";
  s.node.gpus = 4;
  s.node.pcie = preset_link("pcie3_x16");
  set_nic(s.node, 1, "ib_fdr56");
  return s;
}

constexpr std::array kPresets = {
    PlatformPreset{"v100_pcie_4x_10gbe", v100_pcie_10gbe},
    PlatformPreset{"v100_pcie_4x_100gbe", v100_pcie_100gbe},
    PlatformPreset{"v100_pcie_4x_ib100", v100_pcie_ib100},
    PlatformPreset{"dgx1", dgx1},
    PlatformPreset{"dgx_a100", dgx_a100},
    PlatformPreset{"hgx_h100", hgx_h100},
    PlatformPreset{"hgx_h200", hgx_h200},
    PlatformPreset{"dgx_b200", dgx_b200},
    PlatformPreset{"ib56_4gpu", ib56_4gpu},
};

}  // namespace

std::span<const PlatformPreset> platform_presets() { return kPresets; }

const PlatformPreset* find_platform_preset(std::string_view name) {
  for (const auto& p : kPresets) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string platform_preset_names() {
  std::string s;
  for (const auto& p : kPresets) {
    if (!s.empty()) s += ", ";
    s += p.name;
  }
  return s;
}

std::string unknown_platform_preset(std::string_view name) {
  std::vector<std::string_view> names{"generic"};
  for (const auto& p : platform_presets()) names.push_back(p.name);
  return fmt::format("unknown platform preset '{}'{}; known presets: generic, {}", bounded(name),
                     did_you_mean(name, names), platform_preset_names());
}

LinkSpec link_spec(const LinkPreset& preset) {
  return LinkSpec{preset.bandwidth_bytes_per_s, preset.latency};
}

PlatformSpec generic_platform(std::int64_t gpus_per_node, const LinkSpec& intra,
                              std::string_view intra_preset, const LinkSpec& inter,
                              std::string inter_preset) {
  const LinkPreset* intra_link = find_link_preset(intra_preset);
  if (intra_link == nullptr) {
    throw std::invalid_argument(unknown_link_preset(intra_preset));
  }
  PlatformSpec s;
  s.name = "generic";
  s.description = "every GPU of a node on one switch of the intra-node link, one NIC per node";
  s.source = "network.intra_node and network.inter_node link presets";
  NodeSpec& n = s.node;
  n.gpus = gpus_per_node;
  n.pcie_switches = 1;
  // The PCIe hop between a GPU and the NIC is never the bottleneck here, as
  // in the two-link model this platform stands for: it takes the faster of
  // the two rates and no latency of its own, unless the GPUs also talk over it.
  const LinkSpec free_hop{std::max(intra.bandwidth_bytes_per_s, inter.bandwidth_bytes_per_s),
                          Duration::zero()};
  if (intra_link->link_class == LinkClass::kNvlink) {
    n.nvlink = NvlinkTopology::kSwitch;
    n.nvlink_link = intra;
    n.pcie = free_hop;
    n.pcie_free = true;
    if (intra_preset == "nvlink3") n.gpu_arch = GpuArch::kAmpere;
    if (intra_preset == "nvlink4") {
      n.gpu_arch = GpuArch::kHopper;
      n.nvls = true;
    }
  } else {
    n.pcie = gpus_per_node == 1 ? free_hop : intra;
    n.pcie_free = gpus_per_node == 1;
  }
  n.nics = 1;
  n.nic = inter;
  n.nic_preset = std::move(inter_preset);
  return s;
}

void apply_transport(PlatformSpec& spec, Transport transport) {
  const LinkPreset* p = find_link_preset(spec.node.nic_preset);
  if (p == nullptr || (p->link_class != LinkClass::kEthernet &&
                       p->link_class != LinkClass::kInfiniband)) {
    throw ParameterError("platform.nic.transport", fmt::format(
        "the transport applies to a NIC preset of Ethernet or InfiniBand class, and '{}' is not one",
        spec.node.nic_preset));
  }
  spec.transport = transport;
  const bool ethernet = p->link_class == LinkClass::kEthernet;
  if (transport == Transport::kRdma && ethernet) {
    // RoCE v2 leaves only Ethernet/IP/UDP framing (~0.95 at 4 KiB MTU) of the
    // TCP preset's 0.9, and a verbs latency of a few microseconds.
    spec.node.nic.bandwidth_bytes_per_s *= 0.95 / 0.9;
    spec.node.nic.latency = Duration(3'000);
  } else if (transport == Transport::kTcp && !ethernet) {
    // IP over InfiniBand through the kernel: about half the RDMA bandwidth on
    // one stream and a kernel-stack latency like TCP over Ethernet.
    spec.node.nic.bandwidth_bytes_per_s *= 0.5;
    spec.node.nic.latency = Duration(12'000);
  }
}

}  // namespace ssgd::sim
