#include "simulator/platform/gpu_preset.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace ssgd::sim {
namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

constexpr std::string_view kV100 =
    "NVIDIA Tesla V100 datasheet (volta-v100-datasheet-update-us-1165301-r5): V100 for NVLink "
    "15.7 FP32, 125 tensor (FP16); V100 for PCIe 14 and 112; 900 GB/s; 80 SMs";
constexpr std::string_view kA100 =
    "NVIDIA A100 datasheets (nvidia-a100-datasheet-us-nvidia-1758950-r4 for 40 GB, "
    "nvidia-a100-datasheet-nvidia-us-2188504 for 80 GB): 19.5 FP32, 156 TF32, 312 BF16 and FP16 "
    "(dense; 312*, 624* with sparsity); 1,555, 2,039 (SXM) and 1,935 (PCIe) GB/s; 108 SMs at "
    "1,410 MHz";
constexpr std::string_view kH100 =
    "NVIDIA H100 Tensor Core GPU datasheet: SXM5 67 FP32, 989* TF32, 1,979* BF16 and FP16, "
    "3,958* FP8 (* with sparsity; dense is half), 3.35 TB/s, 132 SMs; PCIe 51, 756*, 1,513*, "
    "3,026*, 2.0 TB/s, 114 SMs";
constexpr std::string_view kH200 =
    "NVIDIA H200 datasheet: 67 FP32, 989* TF32, 1,979* BF16 and FP16, 3,958* FP8 (* with "
    "sparsity; dense is half), 141 GB HBM3e at 4.8 TB/s; the GH100 die of the H100 SXM (132 SMs)";
constexpr std::string_view kB200 =
    "NVIDIA HGX B200 specifications (per GPU, 1,000 W): 75 FP32, 2.2 PF* TF32, 4.5 PF* BF16 and "
    "FP16, 9 PF* FP8 (* with sparsity; dense is half), 180 GB HBM3e at 7.7 TB/s; SM count and "
    "clock not published (148 SMs as CUDA reports them)";

const std::array<GpuSpec, 10> kGpus = {{
    {"v100-sxm2-16gb", "NVIDIA V100 SXM2 16 GB (HBM2)", 16 * kGiB, 80, 1530, 15.7, 0, 125, 0, 0,
     900, kV100},
    {"v100-sxm2-32gb", "NVIDIA V100 SXM2 32 GB (HBM2)", 32 * kGiB, 80, 1530, 15.7, 0, 125, 0, 0,
     900, kV100},
    {"v100-pcie", "NVIDIA V100 PCIe 16 or 32 GB (HBM2)", 16 * kGiB, 80, 1380, 14, 0, 112, 0, 0, 900,
     kV100},
    {"a100-sxm4-40gb", "NVIDIA A100 SXM4 40 GB (HBM2)", 40 * kGiB, 108, 1410, 19.5, 156, 312, 312,
     0, 1555, kA100},
    {"a100-sxm4-80gb", "NVIDIA A100 SXM4 80 GB (HBM2e)", 80 * kGiB, 108, 1410, 19.5, 156, 312, 312,
     0, 2039, kA100},
    {"a100-pcie-80gb", "NVIDIA A100 PCIe 80 GB (HBM2e)", 80 * kGiB, 108, 1410, 19.5, 156, 312, 312,
     0, 1935, kA100},
    {"h100-sxm", "NVIDIA H100 SXM5 80 GB (HBM3)", 80 * kGiB, 132, 1980, 67, 494.5, 989, 989, 1979,
     3350, kH100},
    {"h100-pcie", "NVIDIA H100 PCIe 80 GB (HBM2e)", 80 * kGiB, 114, 1755, 51, 378, 756, 756, 1513,
     2000, kH100},
    {"h200", "NVIDIA H200 SXM 141 GB (HBM3e)", 141 * kGiB, 132, 1980, 67, 494.5, 989, 989, 1979,
     4800, kH200},
    {"b200", "NVIDIA B200 (HGX) 180 GB (HBM3e)", 180 * kGiB, 148, 0, 75, 1100, 2250, 2250, 4500,
     7700, kB200},
}};

bool has(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

}  // namespace

std::span<const GpuSpec> gpu_presets() { return kGpus; }

const GpuSpec* find_gpu_preset(std::string_view name) {
  for (const GpuSpec& g : kGpus) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

std::string gpu_preset_names() {
  std::string out;
  for (const GpuSpec& g : kGpus) {
    if (!out.empty()) out += ", ";
    out += g.name;
  }
  return out;
}

const GpuSpec* gpu_preset_for_device(std::string_view device_name) {
  // Lower case, without spaces: "NVIDIA A100 80GB PCIe" and "A100-PCIE-80GB" alike.
  std::string n;
  for (const char c : device_name) {
    if (c != ' ') n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  const bool pcie = has(n, "pcie");
  if (has(n, "nvl")) return nullptr;  // H100 NVL, H200 NVL: other clocks and memory
  if (has(n, "h200")) return find_gpu_preset("h200");
  if (has(n, "h100")) return find_gpu_preset(pcie ? "h100-pcie" : "h100-sxm");
  if (has(n, "b200")) return find_gpu_preset("b200");
  if (has(n, "a100")) {
    if (!has(n, "80gb")) return pcie ? nullptr : find_gpu_preset("a100-sxm4-40gb");
    return find_gpu_preset(pcie ? "a100-pcie-80gb" : "a100-sxm4-80gb");
  }
  if (has(n, "v100")) {
    if (pcie) return find_gpu_preset("v100-pcie");
    if (has(n, "sxm2")) return find_gpu_preset(has(n, "32gb") ? "v100-sxm2-32gb" : "v100-sxm2-16gb");
  }
  return nullptr;
}

std::optional<EffectiveRate> gpu_rate(const GpuSpec& gpu, trace::WorkRate rate) {
  using trace::WorkRate;
  switch (rate) {
    case WorkRate::kFp32: return EffectiveRate{gpu.fp32_tflops, WorkRate::kFp32};
    case WorkRate::kTf32:
      if (gpu.tf32_tflops > 0) return EffectiveRate{gpu.tf32_tflops, WorkRate::kTf32};
      return EffectiveRate{gpu.fp32_tflops, WorkRate::kFp32};
    case WorkRate::kBf16:
      if (gpu.bf16_tflops > 0) return EffectiveRate{gpu.bf16_tflops, WorkRate::kBf16};
      return EffectiveRate{gpu.fp32_tflops, WorkRate::kFp32};
    case WorkRate::kFp16:
      if (gpu.fp16_tflops > 0) return EffectiveRate{gpu.fp16_tflops, WorkRate::kFp16};
      return EffectiveRate{gpu.fp32_tflops, WorkRate::kFp32};
    case WorkRate::kFp8:
      if (gpu.fp8_tflops > 0) return EffectiveRate{gpu.fp8_tflops, WorkRate::kFp8};
      return gpu_rate(gpu, WorkRate::kFp16);
    case WorkRate::kMemory: return EffectiveRate{gpu.memory_gb_per_s, WorkRate::kMemory};
    case WorkRate::kLatency:
      if (gpu.boost_mhz > 0) return EffectiveRate{static_cast<double>(gpu.boost_mhz), WorkRate::kLatency};
      return std::nullopt;
    case WorkRate::kHost:
    case WorkRate::kOther: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace ssgd::sim
