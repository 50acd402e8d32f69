#pragma once
// What one GPU holds at the peak of a step, by part, under a sharding
// strategy (docs/sharding.md, "Memory"). With Ψ parameters, N the ranks a
// shard spans (1 without sharding), s the precision's bytes (4 for fp32, 2
// for bf16 and fp16), K the optimizer state's bytes per parameter (ZeRO,
// Rajbhandari et al., SC'20, section 3.1: fp32 master weights, 4, when the
// precision is not fp32, plus momentum 4 or Adam's two moments 8):
//   parameters   s Ψ             (ZeRO-3, HSDP: s Ψ / N)
//   gradients    s Ψ             (ZeRO-2, ZeRO-3, HSDP: s Ψ / N)
//   optimizer    K Ψ             (ZeRO-1 and up: K Ψ / N; ZeRO-1 and ZeRO-2
//                count the fp32 copy of the shard the optimizer steps on in K
//                in fp32 too: DeepSpeed clones it, FSDP SHARD_GRAD_OP keeps it)
//   gathered     ZeRO-3 and HSDP: the parameters of the units gathered at
//                once, in the gather dtype: the largest run of w consecutive
//                units, w = 1 + forward_prefetch (at least 2 with a backward
//                prefetch; at most max_gathers_in_flight), plus the last
//                unit, which stays gathered from its forward into its
//                backward; every unit without reshard_after_forward
//   waiting      ZeRO-2 and up: unsharded gradients before their reduction,
//                in the reduce dtype: one unit (or bucket) here, the peak of
//                the simulated schedule after a replay
//   accumulation ZeRO-2 and up with no_sync and k > 1: the unsharded
//                gradients kept across micro-batches, s Ψ; the waiting
//                gradients are then among them (0 apart, unless the reduce
//                dtype is another)
//   activations  the profile's activation_bytes over one micro-batch; with
//                activation checkpointing, each unit's first layer's plus
//                the largest unit's (recomputed in its backward); unknown
//                without the column
//   temporaries  ZeRO-2 and up: the largest layer's gradients as autograd
//                computes them, before they are added into the unit's flat
//                gradient buffer, in the precision; ZeRO-3 and HSDP under
//                gloo (network.library: generic): the flat output gloo's
//                all-gather allocates beside the unit it fills (PyTorch,
//                ProcessGroupGloo's AsyncAllgatherWork: newLikeFlat, then a
//                copy into the outputs), the largest unit, in the gather
//                dtype (generic_gather_output_bytes)
// Left out, and said so wherever the figure is printed: the CUDA context,
// NCCL's buffers (and FSDP2's all-gather copy-out buffer under NCCL), the
// caching allocator's reserve and fragmentation, the optimizer's and the
// replicated policies' temporary buffers.

#include <cstdint>
#include <optional>
#include <vector>

#include "dag/sharded_dag_builder.h"
#include "simulator/sharding/shard_plan.h"
#include "simulator/sharding/shard_settings.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {

// Whose buffers MemoryEstimate::comm_buffers are.
enum class CommBuffers { kNone, kDdpBuckets, kHorovodFusion };

struct MemoryEstimate {
  std::int64_t parameters = 0;
  std::int64_t gradients = 0;
  std::int64_t optimizer_state = 0;
  std::int64_t gathered = 0;           // units gathered at once (ZeRO-3, HSDP)
  // ZeRO-2 and up: unsharded gradients before their reduction. One unit (or
  // bucket) from the formula; the peak of the simulated schedule once a
  // replay has run (waiting_from_schedule), as many as wait at once.
  std::int64_t waiting_gradients = 0;
  bool waiting_from_schedule = false;
  std::int64_t accumulation = 0;
  bool waiting_in_accumulation = false;  // the waiting gradients are among `accumulation`
  // Buffers the data-parallel library keeps beside the gradients: DDP's
  // buckets, a copy of every gradient unless they are views into them
  // (ddp_bucket_bytes); Horovod's fusion buffer (horovod_fusion_buffer_bytes);
  // 0 for the other policies and the sharded strategies.
  std::int64_t comm_buffers = 0;
  CommBuffers comm_buffers_kind = CommBuffers::kNone;
  std::optional<std::int64_t> activations;  // nullopt: the profile has no activation_bytes
  // Temporaries alive at a sharded step's peak (the formula above): autograd's
  // gradients of the largest layer before they land in the unit's flat buffer,
  // and gloo's flat all-gather output (0 unless network.library is generic).
  std::int64_t gradient_temporary = 0;
  std::int64_t gather_output = 0;
  std::int64_t shard_ranks = 1;
  std::int64_t optimizer_bytes_per_param = 0;  // K
  bool master_weights = false;  // K holds 4 bytes of fp32 master weights (or shard copy)
  [[nodiscard]] std::int64_t total() const {
    return parameters + gradients + optimizer_state + gathered + waiting_gradients + accumulation +
           comm_buffers + gradient_temporary + gather_output + activations.value_or(0);
  }
};

// What the estimate leaves out, in words, for every output that prints it.
inline constexpr const char* kMemoryLeftOut =
    "CUDA context, NCCL buffers, allocator reserve and fragmentation, the optimizer's and the "
    "replicated policies' temporary buffers";

// DDP's bucket buffers under `estimate` (replicated, policy ddp): PyTorch's
// Reducer packs every gradient into a flat bucket buffer of its own dtype
// for the all-reduce, so they hold a second copy of the gradients, unless
// gradient_as_bucket_view=True makes the gradients views into them (its
// documentation: the memory saved is the size of the gradients).
std::int64_t ddp_bucket_bytes(const MemoryEstimate& estimate, bool bucket_view);

// Horovod's fusion buffer (policy horovod, replicated): Horovod allocates one
// persistent buffer of the whole fusion threshold per device the first time
// a response fuses two or more tensors, and keeps it (horovod/common/
// fusion_buffer_manager.cc, InitializeBuffer; docs/tensor-fusion.md). Counted
// when the job has more than one worker and the profile more than one layer
// with gradients (each a tensor Horovod may fuse: an assumption, said where
// the figure is printed); else 0.
std::int64_t horovod_fusion_buffer_bytes(const trace::LayerProfile& profile,
                                         std::int64_t fusion_threshold_bytes, std::int64_t workers);

// gloo's all-gather (ProcessGroupGloo's AsyncAllgatherWork) gathers into a
// flat tensor of its own and then copies it into the output tensors, so one
// unit's gathered bytes are held twice while a gather runs. Under ZeRO-3 and
// HSDP (per-unit gathers) a prefetch gather runs beside the backward's peak:
// the largest unit in the gather dtype; 0 for the other strategies, whose
// gathers (ZeRO-1 and ZeRO-2's after the step) run past the peak.
std::int64_t generic_gather_output_bytes(const trace::LayerProfile& profile,
                                         const ShardSettings& settings, const StepDtypes& dtypes);

// `activation_scale` multiplies the profile's activations (the batch a GPU
// computes over the profile's). The parameters are counted in the profile's
// own dtype (layer_params), the gradients held and sent in `dtypes`.
MemoryEstimate estimate_memory(const trace::LayerProfile& profile, const ShardSettings& settings,
                               const StepDtypes& dtypes, std::int64_t shard_ranks,
                               double activation_scale = 1.0);

}  // namespace ssgd::sim
