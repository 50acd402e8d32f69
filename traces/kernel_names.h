#pragma once
// What a GPU kernel's name says about it, for every reader of captured
// traces: the Kineto importer (traces/kineto_mapping.h), the layer profile
// and the tasks of an iteration (dag/trace_profile.h, dag/iteration_tasks.h).

#include <string>
#include <string_view>

#include "traces/proto/trace_events.pb.h"

namespace ssgd::trace {

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

// An optimizer step: PyTorch's foreach and fused optimizers, apex, Caffe's
// solvers (multi_tensor_apply, adam, sgd, lamb, ...), case-insensitive.
bool is_optimizer_kernel(std::string_view name);

}  // namespace ssgd::trace
