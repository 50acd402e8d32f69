#pragma once
// The closed forms of the S-SGD DAG model (Shi, Wang, Chu and Li, ICPADS
// 2018), the simulator's first correctness test. With layers 1..L, backward
// running L down to 1, t_b(l) and t_c(l) the per-layer backward and
// all-reduce times:
//   WFBP: tau_b(L) = 0;       tau_b(l) = tau_b(l+1) + t_b(l+1)
//         tau_c(L) = t_b(L);  tau_c(l) = max(tau_c(l+1) + t_c(l+1), tau_b(l) + t_b(l))
//         t_iter = t_io' + t_f + t_b + (tau_c(1) + t_c(1) - tau_b(1) - t_b(1)) + t_u
//   BSP:  t_iter = t_io + t_h2d + t_f + t_b + sum(t_c) + t_u
// Without I/O prefetch (policy.prefetch_depth 0), t_io' = t_io + t_h2d. With
// a prefetch depth of d, and W = t_f + t_b + exposed comm + t_u the rest of
// the step, the loader reads batch i while step i-1 runs:
//   d = 1:   t_iter = t_h2d + max(t_io, W)
//   d >= 2:  t_iter = max(t_io, t_h2d + W)
// (with d = 1 the read of batch i+1 waits for the copy of batch i). Layers without
// communication have t_c(l) = 0. A policy that merges gradients puts a
// group's whole all-reduce on the group's last layer in backward order (the
// smallest l) and 0 on the others: WFBP's recurrence then gives mgwfbp, ddp
// and horovod, and BSP's sum gives single.

#include <cstdint>
#include <optional>
#include <vector>

#include "common/time.h"
#include "dag/comm_plan.h"
#include "simulator/network/comm_model.h"
#include "simulator/scenario/scenario.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {

struct LayerTimes {
  std::vector<Duration> forward;   // forward order, index 0 = layer 1
  std::vector<Duration> backward;
  std::vector<Duration> comm;
  Duration io, h2d, update;
};

// The durations added up.
Duration sum_of(const std::vector<Duration>& v);

Duration wfbp_iteration_time(const LayerTimes& t);
Duration bsp_iteration_time(const LayerTimes& t);

// The per-layer times the simulator itself uses for `profile` under
// `scenario`: comm replayed when measured, else the collective's time with
// nothing else on the network (closed form, or one flow-model run); all zero
// with one worker.
LayerTimes layer_times(const trace::LayerProfile& profile, const Scenario& scenario,
                       const CommModel& comm);
// The same for a plan already made for them (job_comm_plan()).
LayerTimes layer_times(const trace::LayerProfile& profile, const dag::CommPlan& plan,
                       const Scenario& scenario, const CommModel& comm);

Duration closed_form_iteration_time(OverlapPolicy policy, const LayerTimes& t,
                                    std::int64_t prefetch_depth = 0);

// The closed form for `scenario`, when there is one: none under priority
// scheduling or a per-layer update, whose overlap with the next forward the
// recurrences above do not describe.
std::optional<Duration> scenario_closed_form(const Scenario& scenario, const LayerTimes& t);

}  // namespace ssgd::sim
