#pragma once
// Runs a task graph on the discrete-event engine.
//
// A task becomes ready when all its predecessors have ended; it then queues
// on its resource, which runs one task at a time in ready order (ties by task
// id). The only events are task completions. Every task's start and end are
// recorded, with the task whose completion released it, so the critical path
// and the breakdown can be read off afterwards.

#include <cstdint>
#include <functional>
#include <vector>

#include "dag/scheduled_times.h"
#include "dag/task_graph.h"

namespace ssgd::sim {

struct Schedule {
  std::vector<Time> start;
  std::vector<Time> end;
  std::vector<dag::TaskId> started_by;
  Time makespan;
  std::uint64_t events = 0;

  [[nodiscard]] dag::ScheduledTimes view() const { return {start, end, started_by}; }
};

struct ScheduleOptions {
  // Called now and then with the fraction of tasks done, for progress output.
  std::function<void(double fraction_done)> progress;
};

// Throws DeadlockError when tasks are left that can never start.
Schedule run_schedule(const dag::TaskGraph& graph, const ScheduleOptions& options = {});

}  // namespace ssgd::sim
