#pragma once
// A sharding strategy made concrete for one profile and job: the dtypes the
// step stores and communicates in, the units parameters are gathered in, and
// the plan of collectives dag/sharded_dag_builder.h builds the DAG from.
//
//   none    every gradient group of the overlap policy's plan all-reduced
//           (replicated data parallelism, with accumulation)
//   zero1,  every group reduce-scattered over the P ranks in backward; the
//   zero2   optimizer steps on 1/P of the parameters; the updated
//           parameters all-gathered after the step, group by group, before
//           the next forward (DeepSpeed stage 1 and 2; they differ in memory)
//   zero3   per unit: its parameters all-gathered over the P ranks before its
//           forward and (reshard_after_forward) again before its backward,
//           its gradients reduce-scattered after its backward (FSDP
//           FULL_SHARD; with reshard_after_forward false, SHARD_GRAD_OP)
//   hsdp    zero3 within shard groups of G ranks, each unit's gradient shard
//           then all-reduced across the P / G groups (FSDP HYBRID_SHARD)
//
// Collective sizes are whole buffers (nccl-tests' convention): a unit's
// all-gather carries its parameters in the gather dtype, its reduce-scatter
// its gradients in the reduce dtype, HSDP's all-reduce one shard (1/G) of
// them.

#include <cstdint>
#include <vector>

#include "dag/comm_plan.h"
#include "dag/sharded_dag_builder.h"
#include "simulator/sharding/shard_settings.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {

struct StepDtypes {
  Dtype precision = Dtype::kFp32;  // parameters and gradients as the step keeps them
  Dtype reduce = Dtype::kFp32;     // gradients as communicated
  Dtype gather = Dtype::kFp32;     // parameters as gathered
};
// workload.precision (else the profile's '# grad_dtype:', else fp32), and
// the reduce and gather dtypes (else the precision).
StepDtypes step_dtypes(const ShardSettings& settings, const trace::LayerProfile& profile);

// The profile with grad_bytes counted in `reduce` (and '# grad_dtype:' so);
// the profile itself when it already is. Every policy buckets these bytes.
trace::LayerProfile profile_in_dtype(const trace::LayerProfile& profile, Dtype reduce);

// Each layer's parameters: grad_bytes over the size of the profile's dtype.
std::vector<std::int64_t> layer_params(const trace::LayerProfile& profile);

// The units of `profile` under `choice` (auto: the unit column, else one a
// layer). Layers without parameters join the unit after them (the last ones
// the unit before), so that every unit has parameters, unless none has.
// The units' `gather` is left at -1.
std::vector<dag::ShardUnit> make_units(const trace::LayerProfile& profile, const UnitsChoice& choice);

// The ranks one shard spans: 1 (none, or a job of one GPU), P (zero1..zero3)
// or G (hsdp). Throws ParameterError (sharding.group) when G does not divide
// P or is below 1.
std::int64_t shard_ranks(const ShardSettings& settings, std::int64_t workers,
                         std::int64_t gpus_per_node);

// The plan of `profile` (already in the reduce dtype) for `workers` ranks.
// `replicated` is the overlap policy's plan, whose groups none, zero1 and
// zero2 communicate.
dag::ShardedPlan make_sharded_plan(const trace::LayerProfile& profile,
                                   const ShardSettings& settings, const StepDtypes& dtypes,
                                   const dag::CommPlan& replicated, std::int64_t workers,
                                   std::int64_t shard_ranks);

}  // namespace ssgd::sim
