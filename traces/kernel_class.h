#pragma once
// What kind of work a kernel is, from its name: for per-class speed factors
// (perturb.class_factors) and for the what-if to another GPU, which scales
// each kind by the rate that bounds it (simulator/perturb/gpu_change.h).
//
// A kernel, or a layer when only layer names are known, is put in the first
// class one of whose patterns is a case-insensitive substring of its name, in
// this order:
//
//   nccl         nccl, allreduce, all_reduce, reducescatter, reduce_scatter, allgather, all_gather
//   copy         memcpy, memset, copy, nchwtonhwc, nhwctonchw, transpose
//   norm         norm, bn, lrn, gammabeta
//   conv         conv, winograd, implicit_gemm, implicit_convolve, cudnn, wgrad, dgrad, fprop
//   gemm         gemm, gemv, matmul, cublas, cutlass, xmma, nvjet, fmha, flash, fc, dense, linear,
//                inner_product, innerproduct, .query, .key, .value
//   reduce       reduce, softmax, pool, sort, scan, topk, argmax, cross_entropy, nll_loss
//   elementwise  elementwise, eltwise, relu, gelu, silu, sigmoid, tanh, dropout, add, mul,
//                embedding, vectorized, multi_tensor, fill, index, gather, scatter, clamp,
//                threshold, where
//   other        everything else
//
// nccl comes first because its kernels' names mention reductions; copy and
// norm before conv because cuDNN's layout transforms and batch norms are
// named cudnn::...; conv before gemm because cuDNN names convolutions done as
// GEMMs "implicit_gemm". The layer-name patterns (fc, dense, .query, bn, ...)
// are those of torchvision, Caffe and HuggingFace models.
//
// What bounds each class's speed, for the GPU what-if: gemm and conv the GPU's
// arithmetic rate in the kernel's math (kernel_math()); elementwise, norm,
// reduce and copy its memory bandwidth; nccl is communication (never
// compute); other is unknown.

#include <optional>
#include <string>
#include <string_view>

namespace ssgd::trace {

enum class KernelClass { kGemm, kConv, kElementwise, kNorm, kReduce, kCopy, kNccl, kOther };
inline constexpr int kKernelClassCount = 8;

const char* to_string(KernelClass c);
std::optional<KernelClass> parse_kernel_class(std::string_view name);
// "gemm, conv, elementwise, norm, reduce, copy, nccl, other", for messages.
std::string kernel_class_names();

// The class of a kernel or layer called `name`.
KernelClass classify_kernel(std::string_view name);

// The arithmetic of a matrix or convolution kernel, as its name states it
// (cuBLAS, cuDNN and CUTLASS spell it into their kernels' names):
//   fp8   e4m3, e5m2, fp8
//   bf16  bf16, bfloat16, _bsb_, _bss_ (cuBLAS's nvjet kernels: input, compute, output types)
//   fp16  f16, fp16, half, h884, h1688, h16816, hgemm, _hsh_, _hss_
//   tf32  tf32, s1688 (CUTLASS's TF32 tensor-core tiles)
//   fp32  sgemm, f32f32_f32, float (CUDA cores)
// checked in that order (bf16 before fp16: "bf16" holds "f16"). nullopt when
// the name says none of them.
enum class KernelMath { kFp32, kTf32, kFp16, kBf16, kFp8 };
inline constexpr int kKernelMathCount = 5;
const char* to_string(KernelMath m);
std::optional<KernelMath> kernel_math(std::string_view name);

// True for the classes bound by memory bandwidth: elementwise, norm, reduce, copy.
bool is_memory_class(KernelClass c);
// True for gemm and conv.
bool is_compute_class(KernelClass c);

}  // namespace ssgd::trace
