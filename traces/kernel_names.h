#pragma once
// What a kernel says about itself, for every reader of captured traces: the
// PyTorch importer (traces/import/pytorch/kineto_mapping.h,
// traces/import/pytorch/cpu_compute.h) and the walker behind the layer profile
// and an iteration's tasks (walk/trace_walk.h).

#include <cstdint>
#include <string>
#include <string_view>

#include "traces/proto/trace_events.pb.h"

namespace ssgd::trace {

// The device of a Kernel that the host's CPU ran: a CPU operator of a
// CPU-only PyTorch profile (traces/import/pytorch/cpu_compute.h). GPUs are CUDA ordinals.
inline constexpr std::int32_t kHostDevice = -1;

// NCCL's device kernels, whatever the NCCL version: names starting with
// "nccl" (ncclDevKernel_AllReduce_Sum_f32_RING_LL since 2.19,
// ncclKernel_AllReduce_RING_LL_Sum_float before, ncclAllReduceRingLLKernel_sum_f32
// before 2.8). The GPU side of a collective, never compute; where a rank also
// has Collective records (ssgd's NCCL plugin, an import) they are the same
// operations twice.
bool is_nccl_kernel(std::string_view name);

// What an NCCL kernel's name says: the operation, and the algorithm and
// protocol as NCCL spells them in the name ("RING", "LL128"; "Ring", "LL"
// in the oldest names), when present.
struct NcclKernelName {
  v1::Collective::Op op = v1::Collective::UNKNOWN;
  std::string algorithm;
  std::string protocol;
  std::string datatype;  // trace spelling ("float32"), from f32 / float / int8_t
};
// Anything after the first '(' (the kernel's parameter list) is ignored; a
// name that is not NCCL's gives an empty NcclKernelName.
NcclKernelName parse_nccl_kernel_name(std::string_view name);

// A kernel's name as a table shows it: no leading "void ", no parameter list
// (from the '(' outside every template bracket that does not open
// "(anonymous namespace)::"), template arguments folded
// to "<...>" when still longer than `max` bytes, and at most `max` bytes
// ("cudnn::bn_bw_1C11_kernel_new<...>"). The name as recorded is the trace's.
std::string short_kernel_name(std::string_view name, std::size_t max = 80);

// An optimizer step: PyTorch's foreach and fused optimizers, apex, Caffe's
// solvers (multi_tensor_apply, adam, sgd, lamb, ...), case-insensitive.
bool is_optimizer_kernel(std::string_view name);

}  // namespace ssgd::trace
