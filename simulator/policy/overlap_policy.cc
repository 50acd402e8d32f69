#include "simulator/policy/overlap_policy.h"

#include <array>

namespace ssgd::sim {
namespace {

constexpr std::array kPolicies = {
    PolicyInfo{OverlapPolicy::kBsp, "bsp",
               "no overlap: all gradient all-reduces after the whole backward pass",
               "bulk synchronous parallel; closed form in Shi et al., ICPADS 2018"},
    PolicyInfo{OverlapPolicy::kWfbp, "wfbp",
               "wait-free backpropagation: each layer's all-reduce starts when its backward ends",
               "Zhang et al., Poseidon, USENIX ATC 2017; Shi et al., ICPADS 2018, eq. for tau_c"},
};

}  // namespace

std::span<const PolicyInfo> overlap_policies() { return kPolicies; }

dag::CommPlan make_comm_plan(OverlapPolicy policy, const trace::LayerProfile& profile) {
  dag::CommPlan plan;
  plan.wait_for_full_backward = policy == OverlapPolicy::kBsp;
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

}  // namespace ssgd::sim
