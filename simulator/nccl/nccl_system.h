#pragma once
// What NCCL sees of a job's nodes (its topology detection, src/graph/topo.cc
// and paths.cc) and the channels its topology search would build on them
// (src/graph/search.cc, connect.cc). Both are read off the platform: the
// GPU generation, NVLink and NVSwitch, each GPU's NIC and the PCIe path to
// it, the NICs' rate.
//
// NCCL's search tries per-channel speeds from a fixed list (fastest first)
// and keeps the set of channels that carries the most; channels then run
// twice over ("execution channels are typically 2x the search channels",
// NCCL developers, NVIDIA/nccl issue 1041). This file does not rerun that
// search: for the nodes this simulator builds (an NVSwitch or an NVLink
// mesh or PCIe inside, NICs on the GPUs' PCIe switches) it takes
//   - between nodes: each search channel runs through one NIC (a rail) at a
//     speed s from NCCL's list no faster than the NIC and the GPU's path to
//     it; floor(NIC / s) channels per NIC, fewer where the NVLink of a GPU
//     cannot carry them; the s that carries most, ties to the faster;
//   - inside a node: floor(a GPU's NVLink or PCIe bandwidth / s) channels;
//   - NCCL's duplication (s >= 25 GB/s, but not on Hopper and later below 50
//     GB/s with more than 4 channels; search.cc ncclTopoDupChannels), then
//     twice as many execution channels (connect.cc), twice again on Hopper
//     and later between nodes below 16 channels at s > 45, at most 64.
// Bandwidths are NCCL's units, GB/s (1e9 B/s), in NCCL's view: a NIC at its
// line rate (the link preset's payload rate over its efficiency), NVLink at
// NCCL's per-link rate, PCIe at 12 GB/s a generation-3 x16 link.

#include <cstdint>
#include <optional>
#include <vector>

#include "simulator/nccl/nccl_tables.h"
#include "simulator/platform/platform.h"

namespace ssgd::sim::nccl {

struct System {
  std::int64_t ranks = 1;
  std::int64_t nodes = 1;
  std::int64_t local_ranks = 1;  // ranks per node
  GpuArch arch = GpuArch::kVolta;
  CpuVendor cpu = CpuVendor::kIntel;
  bool intra_nvlink = false;  // a node's GPUs reach each other over NVLink (typeIntra NVL)
  bool nvswitch = false;
  bool nvls = false;      // NVLink SHARP, and more than one GPU a node
  bool collnet = false;   // the fabric's SHARP, and NCCL set up to use it
  PciePath nic_path = PciePath::kPix;  // the farthest GPU's path to its own NIC
  std::int64_t rails = 0;     // distinct NICs a node's GPUs send through
  double nic_bw = 0;          // one NIC, line rate
  double gpu_nic_bw = 0;      // the best GPU-to-its-NIC path (NCCL's maxBw to the network)
  double gpu_intra_bw = 0;    // one GPU's bandwidth to the rest of its node
  double gpu_pair_bw = 0;     // the fastest path between two GPUs of a node
  // What a message between nodes pays beyond InfiniBand's start-up cost
  // (NCCL's latency tables are InfiniBand's): the NIC link's latency above
  // the ib_* presets' 1.5 us, added to every network step.
  double net_extra_latency_us = 0;
  // A what-if's factors on the platform's links (perturb.bandwidth_factors,
  // perturb.latency_factors, the nccl class factor): the bandwidths and
  // latencies above are the hardware's, as NCCL's detection sees it (so the
  // channels do not change); NCCL's rates and latencies are scaled by these.
  double intra_bw_scale = 1;   // NVLink's, or PCIe's where the GPUs talk over it
  double net_bw_scale = 1;     // the NICs'
  double intra_latency_scale = 1;
  double net_latency_scale = 1;
};

// `nodes` nodes of `local_ranks` GPUs each (a job on whole nodes).
System make_system(const Platform& platform, std::int64_t nodes, std::int64_t local_ranks);

struct Graph {
  int channels = 0;     // search channels, after duplication
  double bw_intra = 0;  // per channel, GB/s
  double bw_inter = 0;
};

struct Graphs {
  Graph ring;
  // The same channels; on two nodes a tree's GPUs may draw up to twice the
  // network's speed from NVLink (search.cc: "increase bwIntra for trees"),
  // within NCCL's list of speeds.
  Graph tree;
  Graph nvls;     // channels: the NVLS heads
  Graph collnet;
  int coll_channels = 0;  // execution channels of rings and trees (comm->nChannels)
  int nvls_channels = 0;  // comm->nvlsChannels
  NvlsTuning nvls_tuning;  // and NVLS's chunks
  // The execution channels NCCL would make by itself; `channels` of
  // make_graphs may set coll_channels apart from it.
  int default_coll_channels = 0;
};

// The graphs of `system`, their speeds scaled by its what-if factors;
// `channels` sets the execution channels of rings and trees
// (NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS), 1 to 64.
Graphs make_graphs(const System& system, std::optional<int> channels = std::nullopt);

}  // namespace ssgd::sim::nccl
