#pragma once
// The overlap policies' own types: which policy, and its parameters. Scenario
// keys policy.* set them (simulator/scenario/scenario_schema.cc); the
// policies are in overlap_policy.h.

#include <cstdint>
#include <optional>

#include "common/time.h"

namespace ssgd::sim {

enum class OverlapPolicy { kBsp, kWfbp, kMgWfbp, kDdp, kHorovod, kSingle, kPriority };
const char* to_string(OverlapPolicy p);

// The optimizer step: once per iteration after every gradient has arrived
// (global), or per communication group as soon as its gradients have
// (per_layer), so that the next forward of a layer waits only for its own.
enum class UpdateMode { kGlobal, kPerLayer };
const char* to_string(UpdateMode mode);

// The parameters of the overlap policies.
struct PolicyParams {
  std::int64_t bucket_cap_bytes = 25LL << 20;         // policy.bucket_cap (ddp)
  std::int64_t first_bucket_bytes = 1LL << 20;        // policy.first_bucket (ddp)
  // policy.bucket_view (ddp): the gradients are views into DDP's buckets
  // (gradient_as_bucket_view=True), so the buckets hold no copy of them.
  bool bucket_view = false;
  std::int64_t fusion_threshold_bytes = 128LL << 20;  // policy.fusion_threshold (horovod)
  Duration cycle_time = Duration(1'000'000);          // policy.cycle_time (horovod)
  std::optional<Duration> merge_startup;              // policy.merge_startup (mgwfbp's a)
  std::int64_t partition_bytes = 4'000'000;           // policy.partition_size (priority)
  std::int64_t credit_bytes = 16'000'000;             // policy.credit_size (priority)
  // policy.partition_overhead (priority): host time per partition, from
  // bytedance/byteps issue 370 (see priority.cc).
  Duration partition_overhead = Duration(85'000);
  Duration schedule_overhead;                         // policy.schedule_overhead (priority)
  std::optional<UpdateMode> update;                   // policy.update; default per policy
  std::int64_t prefetch_depth = 0;                    // policy.prefetch_depth (batches, >= 0)
};

// The update mode a policy runs with: params.update, or per_layer under
// priority scheduling (which exists to let the next forward start early) and
// global under every other policy.
UpdateMode effective_update(OverlapPolicy overlap, const PolicyParams& params);

}  // namespace ssgd::sim
