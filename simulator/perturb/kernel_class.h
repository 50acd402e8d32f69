#pragma once
// Kernel classes for per-class speed factors (perturb.class_factors): a
// kernel, or a layer when only layer names are known, is put in the first
// class whose patterns one of its name's case-insensitive substrings matches,
// in this order:
//
//   nccl         nccl, allreduce, all_reduce, reducescatter, reduce_scatter, allgather, all_gather
//   conv         conv, winograd, implicit_gemm, implicit_convolve, cudnn, wgrad, dgrad
//   norm         norm, bn, lrn
//   gemm         gemm, matmul, cublas, cutlass, fc, dense, linear, inner_product, innerproduct,
//                query, key, value
//   elementwise  elementwise, eltwise, relu, gelu, sigmoid, tanh, dropout, pool, softmax, add,
//                mul, copy, embedding, vectorized
//   other        everything else
//
// conv comes before gemm because cuDNN names convolutions implemented as GEMM
// "implicit_gemm"; nccl before everything because its kernels' names mention
// reductions. The layer-name patterns (fc, dense, query, bn, ...) are those
// of torchvision, Caffe and HuggingFace models.

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace ssgd::sim {

enum class KernelClass { kGemm, kConv, kElementwise, kNorm, kNccl, kOther };
inline constexpr int kKernelClassCount = 6;

const char* to_string(KernelClass c);
std::optional<KernelClass> parse_kernel_class(std::string_view name);
// "gemm, conv, elementwise, norm, nccl, other", for messages.
std::string kernel_class_names();

// The class of a kernel or layer called `name`.
KernelClass classify_kernel(std::string_view name);

}  // namespace ssgd::sim
