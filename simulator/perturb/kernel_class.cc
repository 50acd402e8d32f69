#include "simulator/perturb/kernel_class.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>

namespace ssgd::sim {
namespace {

struct ClassPatterns {
  KernelClass kind;
  std::initializer_list<std::string_view> patterns;
};

// In matching order; see kernel_class.h.
const std::array<ClassPatterns, 5> kPatterns = {{
    {KernelClass::kNccl,
     {"nccl", "allreduce", "all_reduce", "reducescatter", "reduce_scatter", "allgather", "all_gather"}},
    {KernelClass::kConv,
     {"conv", "winograd", "implicit_gemm", "implicit_convolve", "cudnn", "wgrad", "dgrad"}},
    {KernelClass::kNorm, {"norm", "bn", "lrn"}},
    {KernelClass::kGemm,
     {"gemm", "matmul", "cublas", "cutlass", "fc", "dense", "linear", "inner_product",
      "innerproduct", "query", "key", "value"}},
    {KernelClass::kElementwise,
     {"elementwise", "eltwise", "relu", "gelu", "sigmoid", "tanh", "dropout", "pool", "softmax",
      "add", "mul", "copy", "embedding", "vectorized"}},
}};

}  // namespace

const char* to_string(KernelClass c) {
  switch (c) {
    case KernelClass::kGemm: return "gemm";
    case KernelClass::kConv: return "conv";
    case KernelClass::kElementwise: return "elementwise";
    case KernelClass::kNorm: return "norm";
    case KernelClass::kNccl: return "nccl";
    case KernelClass::kOther: return "other";
  }
  return "?";
}

std::optional<KernelClass> parse_kernel_class(std::string_view name) {
  for (int k = 0; k < kKernelClassCount; ++k) {
    const auto c = static_cast<KernelClass>(k);
    if (name == to_string(c)) return c;
  }
  return std::nullopt;
}

std::string kernel_class_names() {
  std::string out;
  for (int k = 0; k < kKernelClassCount; ++k) {
    if (k > 0) out += ", ";
    out += to_string(static_cast<KernelClass>(k));
  }
  return out;
}

KernelClass classify_kernel(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const auto& entry : kPatterns) {
    for (std::string_view p : entry.patterns) {
      if (lower.find(p) != std::string::npos) return entry.kind;
    }
  }
  return KernelClass::kOther;
}

}  // namespace ssgd::sim
