#pragma once
// What a replay measures of a job's tasks as they run, for a graph built
// and released an iteration window at a time (run_windowed(),
// simulator/engine/windowed_schedule.h), where no task is kept once it has
// ended: each iteration's end (its last update), the breakdown over the
// steady iterations (dag::OnlineBreakdown), and every collective as it ran.
// The same figures iteration_measures() and the measure stage read off a
// whole schedule, to the nanosecond.

#include <cstdint>
#include <map>
#include <span>
#include <utility>
#include <unordered_map>
#include <vector>

#include "dag/task.h"
#include "dag/time_breakdown.h"
#include "simulator/engine/windowed_schedule.h"

namespace ssgd::sim {

// A collective task as it ran.
struct CommRun {
  dag::TaskId id;
  dag::Task task;
  Time start;
  Time end;
};

class IterationObserver : public TaskObserver {
 public:
  // `updates`: update tasks a rank has each iteration; `rank_weight` as
  // iteration_measures() takes it.
  // `collectives_may_lag`: a list schedule's order (run_windowed_list()).
  IterationObserver(std::int64_t ranks_built, std::int64_t iterations, std::int64_t updates,
                    std::span<const std::int64_t> rank_weight = {},
                    bool collectives_may_lag = false);
  void started(dag::TaskId id, const dag::Task& task, Time now) override;
  void ended(dag::TaskId id, const dag::Task& task, Time now) override;

  [[nodiscard]] const std::vector<Time>& iteration_end() const { return iteration_end_; }
  [[nodiscard]] dag::TimeBreakdown breakdown() const { return breakdown_.result(); }
  // The collectives by task id.
  [[nodiscard]] std::vector<CommRun> collectives() const;
  // When each layer's backward last started on rank 0, by (iteration, layer):
  // where a sharded job's gradient buffers begin (gradient_buffers.h).
  [[nodiscard]] const std::map<std::pair<std::int64_t, std::int32_t>, Time>& backward_starts() const {
    return backward_start_;
  }

 private:
  std::vector<Time> iteration_end_;
  dag::OnlineBreakdown breakdown_;
  std::unordered_map<dag::TaskId, Time> comm_start_;  // collectives running
  std::vector<CommRun> comm_;
  std::map<std::pair<std::int64_t, std::int32_t>, Time> backward_start_;
};

}  // namespace ssgd::sim
