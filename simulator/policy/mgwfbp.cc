// MG-WFBP's merge rule (overlap_policy.h), one pass in backward order.
//
// The authors' code re-runs the WFBP recurrence over every layer after each
// merge; a merge only changes the current group and what comes after it, so
// keeping the current group's start (tau_c) and the end of the group before
// it gives the same groups in one pass.

#include <algorithm>

#include "simulator/policy/merge_policies.h"

namespace ssgd::sim::detail {

dag::CommPlan mgwfbp_plan(const std::vector<Gradient>& g, const AllReduceTime& time,
                          const std::optional<Duration>& startup) {
  std::vector<std::size_t> starts;
  if (g.empty()) return plan_of_groups(g, starts);
  Duration previous_end;          // end of the group before the current one
  std::int64_t bytes = g[0].bytes;
  Duration start = max(previous_end, g[0].ready);  // tau_c of the current group
  starts.push_back(0);
  for (std::size_t i = 1; i < g.size(); ++i) {
    const Duration group_time = time(bytes);
    const Duration e = g[i].ready;
    const Duration saved =
        startup ? *startup : time(bytes) + time(g[i].bytes) - time(bytes + g[i].bytes);
    const bool ready_before_end = e < start + group_time;   // (A)
    const bool wait_pays = e - start < saved;              // (B)
    if (ready_before_end && wait_pays) {
      bytes += g[i].bytes;
      start = max(previous_end, e);
      continue;
    }
    previous_end = start + group_time;
    bytes = g[i].bytes;
    start = max(previous_end, g[i].ready);
    starts.push_back(i);  // the current group now starts at gradient i
  }
  return plan_of_groups(g, starts);
}

}  // namespace ssgd::sim::detail
