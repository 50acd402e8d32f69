#include "simulator/replay/closed_form.h"

#include <algorithm>
#include <stdexcept>

#include "simulator/replay/job_graph.h"

namespace ssgd::sim {
Duration sum_of(const std::vector<Duration>& v) {
  Duration s;
  for (auto d : v) s += d;
  return s;
}

namespace {

void check(const LayerTimes& t) {
  if (t.forward.empty() || t.forward.size() != t.backward.size() ||
      t.forward.size() != t.comm.size()) {
    throw std::invalid_argument("layer times: forward, backward and comm need the same, non-zero, length");
  }
}

}  // namespace

Duration wfbp_iteration_time(const LayerTimes& t) {
  check(t);
  const auto L = t.backward.size();
  // Index k = l - 1. tau values are relative to the start of backward.
  Duration tau_b;                 // tau_b(L) = 0
  Duration tau_c = t.backward[L - 1];  // tau_c(L) = t_b(L)
  for (std::size_t k = L - 1; k-- > 0;) {
    tau_b = tau_b + t.backward[k + 1];
    tau_c = max(tau_c + t.comm[k + 1], tau_b + t.backward[k]);
  }
  const Duration exposed = tau_c + t.comm[0] - tau_b - t.backward[0];
  return t.io + t.h2d + sum_of(t.forward) + sum_of(t.backward) + exposed + t.update;
}

Duration bsp_iteration_time(const LayerTimes& t) {
  check(t);
  return t.io + t.h2d + sum_of(t.forward) + sum_of(t.backward) + sum_of(t.comm) + t.update;
}

Duration closed_form_iteration_time(OverlapPolicy policy, const LayerTimes& t,
                                    std::int64_t prefetch_depth) {
  const bool after_backward = policy == OverlapPolicy::kBsp || policy == OverlapPolicy::kSingle;
  const Duration no_prefetch = after_backward ? bsp_iteration_time(t) : wfbp_iteration_time(t);
  if (prefetch_depth <= 0) return no_prefetch;
  const Duration rest = no_prefetch - t.io - t.h2d;  // W
  return prefetch_depth == 1 ? t.h2d + max(t.io, rest) : max(t.io, t.h2d + rest);
}

std::optional<Duration> scenario_closed_form(const Scenario& scenario, const LayerTimes& t) {
  if (scenario.overlap_policy == OverlapPolicy::kPriority ||
      effective_update(scenario.overlap_policy, scenario.policy_params) == UpdateMode::kPerLayer) {
    return std::nullopt;
  }
  return closed_form_iteration_time(scenario.overlap_policy, t,
                                    scenario.policy_params.prefetch_depth);
}

LayerTimes layer_times(const trace::LayerProfile& profile, const Scenario& scenario,
                       const CommModel& comm) {
  return layer_times(profile, job_comm_plan(profile, scenario, comm), scenario, comm);
}

LayerTimes layer_times(const trace::LayerProfile& profile, const dag::CommPlan& plan,
                       const Scenario& scenario, const CommModel& comm) {
  LayerTimes t;
  t.io = scenario.io_time;
  t.h2d = scenario.h2d_time;
  t.update = scenario.update_time;
  t.comm.assign(profile.layers.size(), Duration::zero());
  for (const auto& row : profile.layers) {
    t.forward.push_back(row.forward);
    t.backward.push_back(row.backward);
  }
  if (scenario.workers() > 1) {
    for (const auto& g : plan.groups) {
      // A group's all-reduce belongs to its last layer in backward order,
      // the one whose gradient is ready last.
      const auto trigger = *std::min_element(g.layers.begin(), g.layers.end());
      t.comm[static_cast<std::size_t>(trigger)] +=
          g.replayed ? *g.replayed
                     : comm.isolated_time(CollectiveOp::kAllReduce, static_cast<double>(g.bytes));
    }
  }
  return t;
}

}  // namespace ssgd::sim
