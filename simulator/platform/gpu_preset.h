#pragma once
// Data-centre GPUs as their datasheets state them: peak arithmetic rates per
// math (dense, without sparsity), memory bandwidth and size, SMs and boost
// clock. The what-if to another GPU (simulator/perturb/gpu_change.h) scales
// each part of a captured kernel time by the ratio of the rate that bounds it
// on the two GPUs. `ssgd presets` lists them; the scenario key
// platform.gpu.model names one, the platform presets carry theirs.
//
// Sources (each row's `source`): NVIDIA's V100, A100, H100, H200 and HGX B200
// datasheets and product pages. H100, H200 and B200 datasheets print tensor
// rates with sparsity (marked *): the table holds half of them, the dense
// rate. Boost clocks are the maximum SM clocks (V100 and A100 datasheets and
// deviceQuery; H100 and H200: 1,980 MHz as nvidia-smi reports it); B200's is
// not published (0 here).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "traces/rate_split.h"

namespace ssgd::sim {

struct GpuSpec {
  std::string_view name;          // "h100-sxm": the key platform.gpu.model takes
  std::string_view description;   // "NVIDIA H100 SXM5 80 GB (HBM3)"
  std::int64_t memory_bytes = 0;  // as the datasheet states it, in GiB
  std::int32_t sm_count = 0;
  std::int32_t boost_mhz = 0;     // 0: not published
  // Peak dense rates in TFLOP/s; 0: the GPU has no such unit (V100 has no
  // TF32 or BF16 tensor cores, A100 no FP8).
  double fp32_tflops = 0;
  double tf32_tflops = 0;
  double fp16_tflops = 0;
  double bf16_tflops = 0;
  double fp8_tflops = 0;
  double memory_gb_per_s = 0;     // memory bandwidth, 10^9 bytes/s
  std::string_view source;
};

std::span<const GpuSpec> gpu_presets();
// The preset called `name` (a GpuSpec::name); nullptr when there is none.
const GpuSpec* find_gpu_preset(std::string_view name);
// "v100-sxm2-16gb, ..., b200", for messages.
std::string gpu_preset_names();

// The preset of a GPU as its driver names it (a trace's device record:
// "NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-16GB", "NVIDIA A100-SXM4-80GB",
// "NVIDIA H200"); nullptr for a GPU the table lacks (H100 NVL, consumer
// parts, other vendors).
const GpuSpec* gpu_preset_for_device(std::string_view device_name);

// The rate a piece of work bounded by `rate` runs at on `gpu`, in that
// rate's own unit (TFLOP/s, GB/s, MHz), and the rate it falls back to where
// the GPU lacks the unit (tf32 and bf16 on a V100 run as fp32, fp8 without
// FP8 tensor cores as fp16). nullopt for host and other, which no GPU
// changes, and for latency on a GPU whose clock is not published.
struct EffectiveRate {
  double value = 0;
  trace::WorkRate as = trace::WorkRate::kFp32;  // the rate it really ran at
};
std::optional<EffectiveRate> gpu_rate(const GpuSpec& gpu, trace::WorkRate rate);

}  // namespace ssgd::sim
