#pragma once
// When each task of a graph ran, as the simulator (or a measured trace)
// says: start and end per task, and which task's completion let it start.

#include <span>

#include "common/time.h"
#include "dag/task.h"

namespace ssgd::dag {

struct ScheduledTimes {
  std::span<const Time> start;
  std::span<const Time> end;
  // The predecessor or resource predecessor whose end released the task;
  // kNoTask for a task that started at time zero.
  std::span<const TaskId> started_by;
};

}  // namespace ssgd::dag
