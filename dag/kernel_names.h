#pragma once
// What a GPU kernel's name says about it, for the readers of captured
// traces (dag/trace_profile.h, dag/iteration_tasks.h).

#include <string>

namespace ssgd::dag {

// An optimizer step: PyTorch's foreach and fused optimizers, apex, Caffe's
// solvers (multi_tensor_apply, adam, sgd, lamb, ...), case-insensitive.
bool is_optimizer_kernel(std::string name);

// NCCL's device kernels (ncclDevKernel_AllReduce_Sum_f32_RING_LL,
// ncclKernel_...): the GPU side of a collective, never compute. Where a
// rank also has Collective records (ssgd's NCCL plugin, an import) they are
// the same operations twice.
bool is_nccl_kernel(const std::string& name);

}  // namespace ssgd::dag
