#include "traces/kernel_class.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <initializer_list>

#include "common/enum_names.h"

namespace ssgd::trace {
namespace {

struct ClassPatterns {
  KernelClass kind;
  std::initializer_list<std::string_view> patterns;
};

// In matching order; see kernel_class.h.
const std::array<ClassPatterns, 7> kPatterns = {{
    {KernelClass::kNccl,
     {"nccl", "allreduce", "all_reduce", "reducescatter", "reduce_scatter", "allgather", "all_gather"}},
    {KernelClass::kCopy, {"memcpy", "memset", "copy", "nchwtonhwc", "nhwctonchw", "transpose"}},
    {KernelClass::kNorm, {"norm", "bn", "lrn", "gammabeta"}},
    {KernelClass::kConv,
     {"conv", "winograd", "implicit_gemm", "implicit_convolve", "cudnn", "wgrad", "dgrad", "fprop"}},
    {KernelClass::kGemm,
     {"gemm", "gemv", "matmul", "cublas", "cutlass", "xmma", "nvjet", "fmha", "flash", "fc", "dense",
      "linear", "inner_product", "innerproduct", ".query", ".key", ".value"}},
    {KernelClass::kReduce,
     {"reduce", "softmax", "pool", "sort", "scan", "topk", "argmax", "cross_entropy", "nll_loss"}},
    {KernelClass::kElementwise,
     {"elementwise", "eltwise", "relu", "gelu", "silu", "sigmoid", "tanh", "dropout", "add", "mul",
      "embedding", "vectorized", "multi_tensor", "fill", "index", "gather", "scatter", "clamp",
      "threshold", "where"}},
}};

struct MathPatterns {
  KernelMath math;
  std::initializer_list<std::string_view> patterns;
};

// In matching order; see kernel_class.h.
const std::array<MathPatterns, 5> kMath = {{
    {KernelMath::kFp8, {"e4m3", "e5m2", "fp8"}},
    {KernelMath::kBf16, {"bf16", "bfloat16", "_bsb_", "_bss_"}},
    {KernelMath::kFp16, {"f16", "fp16", "half", "h884", "h1688", "h16816", "hgemm", "_hsh_", "_hss_"}},
    {KernelMath::kTf32, {"tf32", "s1688"}},
    {KernelMath::kFp32, {"sgemm", "f32f32_f32", "float"}},
}};

std::string lowered(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

bool holds_any(const std::string& text, std::initializer_list<std::string_view> patterns) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](std::string_view p) { return text.find(p) != std::string::npos; });
}

constexpr EnumNames<KernelClass, kKernelClassCount> kKernelClassNames{{{
    {KernelClass::kGemm, "gemm"},
    {KernelClass::kConv, "conv"},
    {KernelClass::kElementwise, "elementwise"},
    {KernelClass::kNorm, "norm"},
    {KernelClass::kReduce, "reduce"},
    {KernelClass::kCopy, "copy"},
    {KernelClass::kNccl, "nccl"},
    {KernelClass::kOther, "other"},
}}};

}  // namespace

const char* to_string(KernelClass c) { return kKernelClassNames.name(c); }

std::optional<KernelClass> parse_kernel_class(std::string_view name) {
  return kKernelClassNames.parse(name);
}

std::string kernel_class_names() { return kKernelClassNames.list(); }

KernelClass classify_kernel(std::string_view name) {
  const std::string lower = lowered(name);
  for (const auto& entry : kPatterns) {
    if (holds_any(lower, entry.patterns)) return entry.kind;
  }
  return KernelClass::kOther;
}

const char* to_string(KernelMath m) {
  switch (m) {
    case KernelMath::kFp32: return "fp32";
    case KernelMath::kTf32: return "tf32";
    case KernelMath::kFp16: return "fp16";
    case KernelMath::kBf16: return "bf16";
    case KernelMath::kFp8: return "fp8";
  }
  return "?";
}

std::optional<KernelMath> kernel_math(std::string_view name) {
  const std::string lower = lowered(name);
  for (const auto& entry : kMath) {
    if (holds_any(lower, entry.patterns)) return entry.math;
  }
  return std::nullopt;
}

bool is_memory_class(KernelClass c) {
  return c == KernelClass::kElementwise || c == KernelClass::kNorm || c == KernelClass::kReduce ||
         c == KernelClass::kCopy;
}

bool is_compute_class(KernelClass c) { return c == KernelClass::kGemm || c == KernelClass::kConv; }

}  // namespace ssgd::trace
