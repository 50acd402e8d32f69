// NCCL 2.30.7's tuning constants (see nccl_tables.h for the files they come
// from). Positions follow NCCL's tables exactly: [algorithm][protocol] with
// algorithms Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT and
// protocols LL, LL128, Simple; [generation][nodes] with generations Volta,
// Ampere, Hopper, Blackwell and node columns 1, 2, more than 2.
#include "simulator/nccl/nccl_tables.h"

#include <array>
#include <cctype>

namespace ssgd::sim::nccl {
namespace {

constexpr TunerConstants kConstants = {
    // baseLatencies
    {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {8.0, 8.0, 8.0}},
    // hwLatencies [NVLINK, PCI, NET]
    {{{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}},
     {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},
     {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}}},
    // llMaxBws: single node by generation; between nodes row 0 Intel, row 1 AMD
    {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {2 * 141.0, 2 * 45.0, 2 * 35.0}},
    // perChMaxRingLL128Bws
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}},
    // perChMaxTreeLL128Bws
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}},
    // perChMaxTreeBws
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}},
    // perChMaxNVLSTreeBws
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}},
};

// treeCorrectionFactor, powers of two from 64 B.
constexpr double kTreeCorrection[kProtoCount][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};

constexpr std::array kSpeedsIntra = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                     9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
constexpr std::array kSpeedsInter = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                     7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr std::array kSm90SpeedsIntra = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0,
                                         15.0, 12.0, 11.0, 6.0,  3.0};
constexpr std::array kSm90SpeedsInter = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                         15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr std::array kSm100SpeedsIntra = {90.0, 80.0, 70.0, 60.0, 50.0, 45.0,
                                          40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
constexpr std::array kSm100SpeedsInter = {96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0,
                                          30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0,
                                          6.0,  3.0,  2.4,  1.2,  0.24, 0.12};

constexpr std::array<const char*, kAlgoCount> kAlgoNames = {
    "Tree", "Ring", "CollnetDirect", "CollnetChain", "NVLS", "NVLSTree", "PAT"};
constexpr std::array<const char*, kProtoCount> kProtoNames = {"LL", "LL128", "Simple"};
constexpr std::array<const char*, kFuncCount> kFuncNames = {"Broadcast", "Reduce", "AllGather",
                                                            "ReduceScatter", "AllReduce"};

bool same_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

template <typename E, std::size_t N>
std::optional<E> parse_name(const std::array<const char*, N>& names, std::string_view name) {
  for (std::size_t i = 0; i < N; ++i) {
    if (same_ignoring_case(names[i], name)) return static_cast<E>(i);
  }
  return std::nullopt;
}

}  // namespace

const char* to_string(Algo a) { return kAlgoNames[static_cast<std::size_t>(a)]; }
const char* to_string(Proto p) { return kProtoNames[static_cast<std::size_t>(p)]; }
const char* to_string(Func f) { return kFuncNames[static_cast<std::size_t>(f)]; }
std::optional<Algo> parse_algo(std::string_view name) { return parse_name<Algo>(kAlgoNames, name); }
std::optional<Proto> parse_proto(std::string_view name) { return parse_name<Proto>(kProtoNames, name); }
std::optional<Func> parse_func(std::string_view name) { return parse_name<Func>(kFuncNames, name); }

const TunerConstants& tuner_constants() { return kConstants; }

double nvls_efficiency(GpuArch arch) {
  switch (arch) {
    case GpuArch::kVolta:
    case GpuArch::kAmpere: return 0.0;
    case GpuArch::kHopper: return 0.85;
    case GpuArch::kBlackwell: return 0.74;
  }
  return 0.0;
}

double tree_correction(Proto proto, std::int64_t bytes) {
  const int log_size = log2i(bytes >> 6);
  if (log_size < 0 || log_size >= 24) return 1.0;
  return kTreeCorrection[static_cast<std::size_t>(proto)][log_size];
}

std::span<const double> search_speeds(GpuArch arch, bool inter_node) {
  if (arch == GpuArch::kBlackwell) {
    return inter_node ? std::span<const double>(kSm100SpeedsInter) : std::span<const double>(kSm100SpeedsIntra);
  }
  if (arch == GpuArch::kHopper) {
    return inter_node ? std::span<const double>(kSm90SpeedsInter) : std::span<const double>(kSm90SpeedsIntra);
  }
  return inter_node ? std::span<const double>(kSpeedsInter) : std::span<const double>(kSpeedsIntra);
}

double nvlink_per_link_bw(GpuArch arch) {
  switch (arch) {
    case GpuArch::kVolta: return 20.0;
    case GpuArch::kAmpere: return 20.0;
    case GpuArch::kHopper: return 20.6;
    case GpuArch::kBlackwell: return 40.1;
  }
  return 20.0;
}

NvlsTuning nvls_tuning(GpuArch arch, std::int64_t nodes, std::int64_t local_ranks, double nic_bw,
                       bool nic_within_pxb) {
  NvlsTuning t;
  t.chunk = 128 * 1024;
  if (arch >= GpuArch::kBlackwell) {
    t.channels = nodes > 1 ? 32 : 24;  // NVLS_NCHANNELS_SM100, _SM100_NVL
  } else {
    t.channels = 16;  // NVLS_NCHANNELS_SM90
  }
  if (arch >= GpuArch::kBlackwell && nodes > 1) {
    const std::int64_t ppn = local_ranks;
    if (nodes == 2 && nic_bw >= 48.0) {
      t.channels = 32;
      t.tree_max_chunk = 128 * 1024;
      if (ppn <= 4) {
        t.chunk = t.tree_max_chunk = 256 * 1024;
      } else if (ppn >= 16 || (ppn <= 8 && nic_within_pxb && nic_bw < 96.0)) {
        t.tree_max_chunk = 64 * 1024;
      }
    } else if (nic_bw >= 96.0) {
      if (ppn <= 8) {
        t.channels = 24;
        t.chunk = t.tree_max_chunk = 256 * 1024;
      } else {
        t.channels = 32;
        t.tree_max_chunk = ppn < 32 ? 128 * 1024 : 64 * 1024;
      }
    } else if (nic_bw >= 48.0) {
      t.channels = 24;
      t.tree_max_chunk = nic_within_pxb ? 64 * 1024 : 128 * 1024;
    }
  }
  if (t.tree_max_chunk == 0) t.tree_max_chunk = nodes >= 4 ? 64 * 1024 : t.chunk;
  return t;
}

std::int64_t nvls_call_chunk(Algo a, const NvlsTuning& tuning, std::int64_t nodes, double bytes,
                             std::int64_t concurrent, double nvls_model_bw) {
  const auto below = [&](double times, std::int64_t chunk) {
    return bytes < times * static_cast<double>(concurrent) * static_cast<double>(chunk);
  };
  std::int64_t chunk = 0;
  if (a == Algo::kNvls) {
    chunk = std::min<std::int64_t>(tuning.chunk, kSimpleStepBytes);
    if (nodes > 1 && nvls_model_bw < 150) chunk = std::min<std::int64_t>(chunk, 32768);
    if (below(64, chunk) && chunk > 65536) chunk = 65536;
    if (below(8, chunk) && chunk > 32768) chunk = 32768;
    if (below(2, chunk) && chunk > 16384) chunk = 16384;
  } else if (a == Algo::kNvlsTree) {
    chunk = std::min(tuning.chunk, tuning.tree_max_chunk);
    if (below(32, chunk) && chunk > 262144) chunk = 262144;
    if (below(16, chunk) && chunk > 131072) chunk = 131072;
    if (below(4, chunk) && chunk > 65536) chunk = 65536;
    if (below(1, chunk) && chunk > 32768) chunk = 32768;
  }
  return chunk;
}

int log2i(std::int64_t n) {
  if (n < 1) return -1;
  int l = 0;
  while (n > 1) {
    n >>= 1;
    ++l;
  }
  return l;
}

}  // namespace ssgd::sim::nccl
