#pragma once
// The numbers of NCCL's own tuning model, as NCCL 2.30.7 has them
// (github.com/NVIDIA/nccl at tag v2.30.7): the constants of
// src/graph/tuning.cc (latencies, bandwidth caps, the NVLS efficiency, the
// tree correction), the speeds its topology search tries (src/graph/
// search.cc), its per-link NVLink and PCIe rates (src/graph/topo.h), and the
// thread and channel limits of src/include/device.h, src/include/comm.h and
// src/transport/nvls.cc. These are facts about NCCL; the code that uses them
// is this project's own (nccl_tuner.h, nccl_system.h).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "simulator/platform/platform_spec.h"

namespace ssgd::sim::nccl {

// In NCCL's order (NCCL_ALGO_*, NCCL_PROTO_*, ncclFunc_t), so the tables
// below read as NCCL's do.
enum class Algo : std::uint8_t { kTree, kRing, kCollNetDirect, kCollNetChain, kNvls, kNvlsTree, kPat };
inline constexpr int kAlgoCount = 7;
enum class Proto : std::uint8_t { kLL, kLL128, kSimple };
inline constexpr int kProtoCount = 3;
enum class Func : std::uint8_t { kBroadcast, kReduce, kAllGather, kReduceScatter, kAllReduce };
inline constexpr int kFuncCount = 5;

// NCCL's names, as NCCL_ALGO, NCCL_PROTO and their function prefixes take
// them (matched without regard to case): "Tree", "Ring", "CollnetDirect",
// "CollnetChain", "NVLS", "NVLSTree", "PAT"; "LL", "LL128", "Simple";
// "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce".
const char* to_string(Algo a);
const char* to_string(Proto p);
const char* to_string(Func f);
std::optional<Algo> parse_algo(std::string_view name);
std::optional<Proto> parse_proto(std::string_view name);
std::optional<Func> parse_func(std::string_view name);

// The hardware a latency is paid on (NCCL_HW_NVLINK, _PCI, _NET).
enum class Hw : std::uint8_t { kNvlink, kPci, kNet };

// tuning.cc's ncclTunerConstantsDefaults: latencies in microseconds,
// bandwidths in GB/s (1e9 B/s). The GPU generation picks a row
// (Volta, Ampere, Hopper, Blackwell), the node count a column (1, 2, more).
struct TunerConstants {
  double base_latency[kAlgoCount][kProtoCount];
  double hw_latency[3][kAlgoCount][kProtoCount];
  double ll_max_bw[4][3];
  double per_ch_max_ring_ll128_bw[4][3];
  double per_ch_max_tree_ll128_bw[4][3];
  double per_ch_max_tree_bw[4][3];
  double per_ch_max_nvls_tree_bw[4][3];
};
const TunerConstants& tuner_constants();

// nvlsEfficiency: the share of the NVLink bandwidth NVLS reaches.
double nvls_efficiency(GpuArch arch);
// treeCorrectionFactor[proto][log2(bytes / 64)], 64 B to 256 MiB: how far
// trees fall short of the model at middle sizes; 1 outside the table.
double tree_correction(Proto proto, std::int64_t bytes);

// The per-channel speeds (GB/s) the topology search tries, fastest first:
// speedArrayIntra / Inter and their SM90 and SM100 variants.
std::span<const double> search_speeds(GpuArch arch, bool inter_node);

// NCCL's rate of one NVLink (topo.h SM70/80/90/100_NVLINK_BW, GB/s) and of a
// PCIe 3.0 x16 link (PCI_BW), as its topology sees them.
double nvlink_per_link_bw(GpuArch arch);
inline constexpr double kPciBw = 12.0;

// device.h and comm.h.
inline constexpr int kMaxChannels = 64;          // MAXCHANNELS
inline constexpr int kWarpSize = 32;
inline constexpr int kMaxThreads = 640;          // NCCL_MAX_NTHREADS
inline constexpr int kSimpleMaxThreads = 512;    // NCCL_SIMPLE_MAX_NTHREADS
inline constexpr int kLLMaxThreads = 512;        // NCCL_LL_MAX_NTHREADS
inline constexpr int kLL128MaxThreads = 640;     // NCCL_LL128_MAX_NTHREADS
inline constexpr int kLLThreadThreshold = 8;     // NCCL_LL_THREAD_THRESHOLD (x ranks for rings)
inline constexpr int kLL128ThreadThreshold = 8;  // NCCL_LL128_THREAD_THRESHOLD
inline constexpr int kSimpleThreadThreshold = 64;  // NCCL_SIMPLE_THREAD_THRESHOLD
inline constexpr int kMaxDirectArity = 7;        // NCCL_MAX_DIRECT_ARITY
// The Simple protocol's step: its default buffer (DEFAULT_BUFFSIZE, 4 MiB)
// over NCCL_STEPS (8).
inline constexpr std::int64_t kSimpleStepBytes = (4 << 20) / 8;
// LL128's chunk: its buffer (120 elements x 640 threads x 8 steps of 8
// bytes, init.cc DEFAULT_LL128_BUFFSIZE) over the steps, 15 data lines in 16.
inline constexpr std::int64_t kLL128ChunkBytes = 120 * 640 * 8 / 16 * 15;

// nvls.cc's ncclNvlsTuning: NVLS's channels (comm->nvlsChannels: 16 on
// Hopper, 24 on one Blackwell node, 32 between Blackwell nodes unless the
// table of ncclNvlsTreeSm100Tuning says otherwise), its chunk
// (NCCL_NVLS_CHUNKSIZE, 128 KiB) and NVLS trees' largest chunk (64 KiB on 4
// or more Hopper nodes). `nic_bw`: the slowest NIC's rate, GB/s;
// `nic_within_pxb`: the NVLS graph's path from a GPU to its NIC is PIX or PXB.
struct NvlsTuning {
  int channels = 0;
  std::int64_t chunk = 0;
  std::int64_t tree_max_chunk = 0;
};
NvlsTuning nvls_tuning(GpuArch arch, std::int64_t nodes, std::int64_t local_ranks, double nic_bw,
                       bool nic_within_pxb);

// enqueue.cc's calcCollChunking for NVLS and NVLS trees: the chunk a call of
// `bytes` moves at a time per channel and head, `concurrent` = channels x
// heads of them at once; `nvls_model_bw`: NCCL's model bandwidth of NVLS
// all-reduce (GB/s), which caps the chunk between nodes below 150.
std::int64_t nvls_call_chunk(Algo a, const NvlsTuning& tuning, std::int64_t nodes, double bytes,
                             std::int64_t concurrent, double nvls_model_bw);

// log2i(n) of NCCL's utils.h: floor(log2 n), -1 for n < 1.
int log2i(std::int64_t n);

}  // namespace ssgd::sim::nccl
