#include "simulator/policy/overlap_policy.h"

#include <array>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "common/error.h"
#include "simulator/policy/merge_policies.h"

namespace ssgd::sim {
namespace {

constexpr std::array kPolicies = {
    PolicyInfo{OverlapPolicy::kBsp, "bsp",
               "no overlap: all gradient all-reduces after the whole backward pass",
               "bulk synchronous parallel; closed form in Shi et al., ICPADS 2018"},
    PolicyInfo{OverlapPolicy::kWfbp, "wfbp",
               "wait-free backpropagation: each layer's all-reduce starts when its backward ends",
               "Zhang et al., Poseidon, USENIX ATC 2017; Shi et al., ICPADS 2018, eq. for tau_c"},
    PolicyInfo{OverlapPolicy::kMgWfbp, "mgwfbp",
               "merged-gradient WFBP: a gradient joins the previous group when waiting for it costs "
               "less than the start-up it saves",
               "Shi, Chu and Li, MG-WFBP, INFOCOM 2019; HKBU-HPML/MG-WFBP _generate_groups_mgwfbp"},
    PolicyInfo{OverlapPolicy::kDdp, "ddp",
               "PyTorch DDP buckets: policy.first_bucket, then policy.bucket_cap, in backward order",
               "torch/csrc/distributed/c10d/reducer.cpp (compute_bucket_assignment_by_size)"},
    PolicyInfo{OverlapPolicy::kHorovod, "horovod",
               "Horovod tensor fusion: ready gradients packed up to policy.fusion_threshold every "
               "policy.cycle_time",
               "horovod/common/operations.cc, controller.cc (FuseResponses)"},
    PolicyInfo{OverlapPolicy::kSingle, "single",
               "one all-reduce of every gradient after the backward pass",
               "SyncEASGD in the MG-WFBP paper's experiments (Shi et al., INFOCOM 2019)"},
    PolicyInfo{OverlapPolicy::kPriority, "priority",
               "gradients cut into policy.partition_size pieces, front layers first, up to "
               "policy.credit_size in flight; per-layer update lets the next forward start early",
               "P3 (Jayarajan et al., SysML 2019); ByteScheduler (Peng et al., SOSP 2019), "
               "bytescheduler/common/bytecore.py"},
};

// bsp and wfbp: one group per layer, measured times replayed.
dag::CommPlan per_layer_plan(const trace::LayerProfile& profile, bool wait_for_full_backward) {
  dag::CommPlan plan;
  plan.wait_for_full_backward = wait_for_full_backward;
  // Backward runs from the last layer to the first, and so do the all-reduces.
  for (auto l = static_cast<std::int32_t>(profile.layers.size()) - 1; l >= 0; --l) {
    const auto& row = profile.layers[l];
    const bool measured = row.comm && *row.comm > Duration::zero();
    if (row.grad_bytes <= 0 && !measured) continue;
    dag::CommGroup g;
    g.layers = {l};
    g.bytes = row.grad_bytes;
    g.replayed = row.comm;
    plan.groups.push_back(std::move(g));
  }
  return plan;
}

}  // namespace

std::span<const PolicyInfo> overlap_policies() { return kPolicies; }

bool merges_gradients(OverlapPolicy policy) {
  return policy != OverlapPolicy::kBsp && policy != OverlapPolicy::kWfbp;
}

dag::CommPlan make_comm_plan(OverlapPolicy policy, const PolicyParams& p,
                             const trace::LayerProfile& profile,
                             const AllReduceTime& allreduce_time) {
  // Merging policies add gradients up: all of them together must fit in a
  // collective's int64 bytes, or a merged group's size would wrap negative.
  std::int64_t total = 0;
  for (const auto& row : profile.layers) {
    if (row.grad_bytes > 0 && __builtin_add_overflow(total, row.grad_bytes, &total)) {
      throw InputError(
          {profile.source_name(), std::nullopt, std::nullopt, "grad_bytes"},
          fmt::format("the layers' gradients add up to more than {} bytes (passing it at layer "
                      "'{}'): no collective can hold them",
                      std::numeric_limits<std::int64_t>::max(), row.name));
    }
  }
  switch (policy) {
    case OverlapPolicy::kBsp: return per_layer_plan(profile, true);
    case OverlapPolicy::kWfbp: return per_layer_plan(profile, false);
    case OverlapPolicy::kMgWfbp:
      return detail::mgwfbp_plan(detail::gradients_in_backward_order(profile), allreduce_time,
                                 p.merge_startup);
    case OverlapPolicy::kDdp:
      return detail::ddp_plan(detail::gradients_in_backward_order(profile), p.first_bucket_bytes,
                              p.bucket_cap_bytes);
    case OverlapPolicy::kHorovod:
      return detail::horovod_plan(detail::gradients_in_backward_order(profile),
                                  p.fusion_threshold_bytes, p.cycle_time);
    case OverlapPolicy::kSingle: {
      const auto g = detail::gradients_in_backward_order(profile);
      dag::CommPlan plan = detail::plan_of_groups(g, g.empty() ? std::vector<std::size_t>{}
                                                               : std::vector<std::size_t>{0});
      plan.wait_for_full_backward = true;
      return plan;
    }
    case OverlapPolicy::kPriority:
      return detail::priority_plan(detail::gradients_in_backward_order(profile), p.partition_bytes,
                                   p.credit_bytes, p.partition_overhead, p.schedule_overhead);
  }
  return per_layer_plan(profile, false);
}

namespace detail {

std::vector<Gradient> gradients_in_backward_order(const trace::LayerProfile& profile) {
  std::vector<Gradient> out;
  Duration t;
  for (auto l = static_cast<std::int32_t>(profile.layers.size()) - 1; l >= 0; --l) {
    const auto& row = profile.layers[l];
    t += row.backward;
    if (row.grad_bytes > 0) out.push_back({l, row.grad_bytes, t});
  }
  return out;
}

dag::CommPlan plan_of_groups(const std::vector<Gradient>& g, const std::vector<std::size_t>& starts) {
  dag::CommPlan plan;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const std::size_t end = k + 1 < starts.size() ? starts[k + 1] : g.size();
    dag::CommGroup group;
    for (std::size_t i = starts[k]; i < end; ++i) {
      group.layers.push_back(g[i].layer);
      group.bytes += g[i].bytes;
    }
    plan.groups.push_back(std::move(group));
  }
  return plan;
}

}  // namespace detail
}  // namespace ssgd::sim
