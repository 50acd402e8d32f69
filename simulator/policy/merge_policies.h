#pragma once
// Internal to simulator/policy: the plans of the policies that merge
// gradients (overlap_policy.h describes each). They see the layers with
// gradients in backward order, with the time each is ready.

#include <cstdint>
#include <vector>

#include "dag/comm_plan.h"
#include "simulator/policy/overlap_policy.h"

namespace ssgd::sim::detail {

struct Gradient {
  std::int32_t layer = 0;
  std::int64_t bytes = 0;
  Duration ready;  // end of its backward, from the start of backward on one worker
};

// The layers with gradients, in backward order.
std::vector<Gradient> gradients_in_backward_order(const trace::LayerProfile& profile);

// A plan of one group per run of consecutive gradients: group k holds
// gradients [starts[k], starts[k+1]).
dag::CommPlan plan_of_groups(const std::vector<Gradient>& g, const std::vector<std::size_t>& starts);

dag::CommPlan mgwfbp_plan(const std::vector<Gradient>& g, const AllReduceTime& time,
                          const std::optional<Duration>& startup);
dag::CommPlan ddp_plan(const std::vector<Gradient>& g, std::int64_t first_bucket_bytes,
                       std::int64_t bucket_cap_bytes);
dag::CommPlan horovod_plan(const std::vector<Gradient>& g, std::int64_t threshold_bytes,
                           Duration cycle);
// Every gradient cut into ceil(bytes / partition) nearly equal partitions
// (the first ones one byte larger), one group each, prioritized with the
// credit and the scheduler's costs per partition and per round (priority.cc).
dag::CommPlan priority_plan(const std::vector<Gradient>& g, std::int64_t partition_bytes,
                            std::int64_t credit_bytes, Duration partition_overhead,
                            Duration schedule_overhead);

}  // namespace ssgd::sim::detail
