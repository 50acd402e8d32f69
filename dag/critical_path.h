#pragma once
// Critical paths of a task graph.
//
// longest_path() is the static one: the longest chain of durations along the
// edges, ignoring that tasks share resources; it bounds the iteration time
// from below. scheduled_critical_path() is the one a schedule actually had:
// from the task that ends last, follow each task back to the task whose end
// released it (its last predecessor, or the task before it on its resource).
// Its length is the makespan, and its time split by task kind says what the
// run was waiting for.

#include <array>
#include <vector>

#include "dag/scheduled_times.h"
#include "dag/task_graph.h"

namespace ssgd::dag {

struct CriticalPath {
  // In execution order; empty where the schedule was not kept (a graph run
  // an iteration window at a time keeps the path's figures, not its tasks).
  std::vector<TaskId> tasks;
  std::size_t task_count = 0;  // tasks on the path
  Duration length;            // end of the last task, from time zero
  std::array<Duration, kTaskKindCount> time_by_kind{};  // indexed by TaskKind
  Duration gaps;              // time on the path when no path task ran
};

CriticalPath longest_path(const TaskGraph& graph);
CriticalPath scheduled_critical_path(const TaskGraph& graph, const ScheduledTimes& times);

}  // namespace ssgd::dag
