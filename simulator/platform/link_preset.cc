#include "simulator/platform/link_preset.h"

#include <array>
#include <stdexcept>
#include <vector>

#include "common/error.h"
#include "common/suggest.h"

namespace ssgd::sim {
namespace {

constexpr double kGB = 1e9;  // decimal gigabyte; link rates are quoted in decimal units

// Bandwidths are the payload rate one direction sustains, not the signalling
// rate: the raw rate times the line-code efficiency, times a protocol
// efficiency where one is stated. Latencies are the start-up cost of one
// message between two GPUs, software included, as a collective library sees
// it; they are typical values, to be replaced by measured ones through the
// network.*_latency and network.*_bandwidth scenario keys. Where a latency
// below cites no source it is an assumption scaled from the cited ones.
constexpr std::array kPresets = {
    // PCIe: 8/16/32 GT/s per lane x 16 lanes with 128b/130b coding gives
    // 15.75/31.5/63.0 GB/s per direction (PCI-SIG base specifications 3.0,
    // 4.0, 5.0). Transaction-layer packet headers cost about 20% with 256-byte
    // payloads, so 0.8 of the coded rate is used: 12.6/25.2/50.4 GB/s, in line
    // with the ~12-13 GB/s that CUDA's bandwidthTest reports on PCIe 3 x16.
    LinkPreset{"pcie3_x16", LinkClass::kPcie, Duration(5'000), 0.8 * 15.754 * kGB,
               "PCIe 3.0 x16, GPU to GPU through the host bridge",
               "PCI-SIG PCIe 3.0: 8 GT/s/lane, 128b/130b; 0.8 TLP efficiency; ~5 us NCCL step latency"},
    LinkPreset{"pcie4_x16", LinkClass::kPcie, Duration(4'000), 0.8 * 31.508 * kGB,
               "PCIe 4.0 x16", "PCI-SIG PCIe 4.0: 16 GT/s/lane, 128b/130b; 0.8 TLP efficiency"},
    LinkPreset{"pcie5_x16", LinkClass::kPcie, Duration(3'000), 0.8 * 63.015 * kGB,
               "PCIe 5.0 x16", "PCI-SIG PCIe 5.0: 32 GT/s/lane, 128b/130b; 0.8 TLP efficiency"},
    // NVLink: per-GPU aggregate one-direction bandwidth of all links:
    // V100 6 x 25 GB/s, A100 12 x 25 GB/s, H100 18 x 25 GB/s (NVIDIA V100,
    // A100 and H100 architecture whitepapers). Ring all-reduce inside an
    // NVSwitch node or a fully linked group reaches about 0.8 of that (NCCL
    // busbw figures NVIDIA publishes for DGX systems), which is used here.
    LinkPreset{"nvlink2", LinkClass::kNvlink, Duration(2'000), 0.8 * 150 * kGB,
               "NVLink 2 (V100, 6 links)",
               "NVIDIA Tesla V100 whitepaper: 6 links x 25 GB/s/direction; 0.8 achieved"},
    LinkPreset{"nvlink3", LinkClass::kNvlink, Duration(2'000), 0.8 * 300 * kGB,
               "NVLink 3 (A100, 12 links)",
               "NVIDIA A100 Tensor Core GPU architecture whitepaper: 12 x 25 GB/s; 0.8 achieved"},
    LinkPreset{"nvlink4", LinkClass::kNvlink, Duration(2'000), 0.8 * 450 * kGB,
               "NVLink 4 (H100, 18 links)",
               "NVIDIA H100 Tensor Core GPU architecture whitepaper: 18 x 25 GB/s; 0.8 achieved"},
    // Ethernet, TCP/IP through MPI or NCCL sockets: line rate (IEEE 802.3)
    // times 0.9 for Ethernet/IP/TCP framing at a 1500-byte MTU (~0.95) and
    // what a single TCP stream sustains (~0.95), rounded down. Latency is the
    // MPI small-message latency over kernel TCP: about 16 us per ring step on
    // 10GbE in the OSU all-reduce curves of ../shared/data/bcaffe (32 us for
    // the 2 steps of a 2-rank ring); 12 and 8 us for 25 and 100 GbE are
    // assumptions (faster NICs, same kernel stack).
    LinkPreset{"10gbe", LinkClass::kEthernet, Duration(16'000), 0.9 * 1.25 * kGB,
               "10 Gb Ethernet, TCP",
               "IEEE 802.3ae 10 Gb/s; 0.9 TCP/IP efficiency; 16 us from OSU all-reduce on 10GbE"},
    LinkPreset{"25gbe", LinkClass::kEthernet, Duration(12'000), 0.9 * 3.125 * kGB,
               "25 Gb Ethernet, TCP", "IEEE 802.3by 25 Gb/s; 0.9 TCP/IP efficiency"},
    LinkPreset{"100gbe", LinkClass::kEthernet, Duration(8'000), 0.9 * 12.5 * kGB,
               "100 Gb Ethernet, TCP", "IEEE 802.3ba/bj 100 Gb/s; 0.9 TCP/IP efficiency"},
    // InfiniBand 4x links with RDMA: data rates after 64b/66b coding,
    // 54.5 (FDR), 100 (EDR), 200 (HDR), 400 (NDR) Gb/s (InfiniBand Trade
    // Association roadmap), with 0.95 for headers at a 4 KiB MTU; latency about
    // 1-2 us through one switch (vendor adapter data sheets, ib_send_lat).
    LinkPreset{"ib_fdr56", LinkClass::kInfiniband, Duration(2'000), 0.95 * 54.545e9 / 8,
               "InfiniBand FDR 4x (56 Gb/s signalling), RDMA",
               "IBTA: FDR 14.0625 Gb/s/lane, 64b/66b; 0.95 header efficiency; ~2 us MPI latency"},
    LinkPreset{"ib_edr100", LinkClass::kInfiniband, Duration(1'500), 0.95 * 100e9 / 8,
               "InfiniBand EDR 4x (100 Gb/s), RDMA", "IBTA: EDR 25 Gb/s/lane data; 0.95 efficiency"},
    LinkPreset{"ib_hdr200", LinkClass::kInfiniband, Duration(1'500), 0.95 * 200e9 / 8,
               "InfiniBand HDR 4x (200 Gb/s), RDMA", "IBTA: HDR 50 Gb/s/lane data; 0.95 efficiency"},
    LinkPreset{"ib_ndr400", LinkClass::kInfiniband, Duration(1'500), 0.95 * 400e9 / 8,
               "InfiniBand NDR 4x (400 Gb/s), RDMA", "IBTA: NDR 100 Gb/s/lane data; 0.95 efficiency"},
};

}  // namespace

std::span<const LinkPreset> link_presets() { return kPresets; }

const LinkPreset* find_link_preset(std::string_view name) {
  for (const auto& p : kPresets) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string link_preset_names() {
  std::string s;
  for (const auto& p : kPresets) {
    if (!s.empty()) s += ", ";
    s += p.name;
  }
  return s;
}

std::string unknown_link_preset(std::string_view name) {
  std::vector<std::string_view> names;
  for (const auto& p : link_presets()) names.push_back(p.name);
  return "unknown link preset '" + bounded(name) + "'" + did_you_mean(name, names) +
         "; known presets: " + link_preset_names();
}

double payload_share(std::string_view name) {
  const LinkPreset* p = find_link_preset(name);
  return p == nullptr ? 1.0 : payload_share(p->link_class);
}

double payload_share(LinkClass c) {
  switch (c) {
    case LinkClass::kInfiniband: return 0.95;
    case LinkClass::kEthernet: return 0.9;
    case LinkClass::kPcie:
    case LinkClass::kNvlink: return 1.0;
  }
  return 1.0;
}

const char* to_string(LinkClass c) {
  switch (c) {
    case LinkClass::kPcie: return "pcie";
    case LinkClass::kNvlink: return "nvlink";
    case LinkClass::kEthernet: return "ethernet";
    case LinkClass::kInfiniband: return "infiniband";
  }
  return "?";
}

LinkParams resolve_link(const LinkChoice& choice) {
  const LinkPreset* preset = find_link_preset(choice.preset);
  if (preset == nullptr) {
    throw std::invalid_argument(unknown_link_preset(choice.preset));
  }
  LinkParams p{std::string(preset->name), preset->latency, preset->bandwidth_bytes_per_s};
  if (choice.bandwidth_bytes_per_s || choice.latency) p.name += " (overridden)";
  if (choice.bandwidth_bytes_per_s) p.bandwidth_bytes_per_s = *choice.bandwidth_bytes_per_s;
  if (choice.latency) p.latency = *choice.latency;
  if (!(p.bandwidth_bytes_per_s > 0)) {
    throw std::invalid_argument("link '" + p.name + "' needs a positive bandwidth");
  }
  if (p.latency < Duration::zero()) {
    throw std::invalid_argument("link '" + p.name + "' has a negative latency");
  }
  return p;
}

}  // namespace ssgd::sim
