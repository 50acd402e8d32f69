#pragma once
// Runs a task graph on the discrete-event engine.
//
// A task becomes ready when all its predecessors have ended; it then queues
// on its resource, which runs one task at a time in ready order (ties by task
// id). The only events are task completions. Every task's start and end are
// recorded, with the task whose completion released it, so the critical path
// and the breakdown can be read off afterwards.
//
// A prioritized resource (the network under priority scheduling) orders its
// ready tasks by (iteration, layer) instead, decides what to start only once
// everything that becomes ready at an instant has, and may start several
// ready tasks together up to its credit in bytes (dag::Resource).
//
// A TaskExecutor may take over tasks whose end is not known when they start
// (collectives on the flow-level network): the scheduler starts them through
// it and learns of their end from it. Several graphs can share one engine,
// and with it one network, through run_schedules().

#include <cstdint>
#include <functional>
#include <vector>

#include "dag/scheduled_times.h"
#include "dag/task_graph.h"
#include "simulator/engine/engine.h"

namespace ssgd::sim {

struct Schedule {
  std::vector<Time> start;
  std::vector<Time> end;
  std::vector<dag::TaskId> started_by;
  Time makespan;
  std::uint64_t events = 0;
  // Tasks a prioritized resource started together and ran as one (in the
  // order it took them), each batch of at least two.
  std::vector<std::vector<dag::TaskId>> batches;

  [[nodiscard]] dag::ScheduledTimes view() const { return {start, end, started_by}; }
};

class TaskExecutor {
 public:
  virtual ~TaskExecutor() = default;
  // Whether this executor runs `task` (else it takes its fixed duration).
  [[nodiscard]] virtual bool handles(const dag::Task& task) const = 0;
  // Starts `task` now; the executor calls `finished` from a later engine
  // event (never inside this call) when the task has ended.
  virtual void start(dag::TaskId id, const dag::Task& task, std::function<void()> finished) = 0;
  // The same where nothing else runs on the engine until `task` has ended
  // (a list schedule runs each executor task so): an executor may then
  // replay a recording of the same work instead, with the same end.
  virtual void start_alone(dag::TaskId id, const dag::Task& task, std::function<void()> finished) {
    start(id, task, std::move(finished));
  }
  // The same as start(), told whether `task` waited for its resource: it was
  // ready before now and queued behind another task of the resource. The
  // scheduler runs a resource's tasks one at a time; a library that runs
  // several collectives at once on its worker threads (gloo) would have run
  // it beside the one it waited for.
  virtual void start_waited(dag::TaskId id, const dag::Task& task, bool waited,
                            std::function<void()> finished) {
    (void)waited;
    start(id, task, std::move(finished));
  }
};

struct ScheduleOptions {
  // Called now and then with the fraction of tasks done, for progress output.
  std::function<void(double fraction_done)> progress;
  TaskExecutor* executor = nullptr;  // optional
  // Called once, from the engine, when the graph's last task has ended.
  std::function<void()> on_complete;
  // The time of tasks a prioritized resource starts together, given as one
  // task holding their bytes together (dag::Resource::credit_bytes); when
  // unset, the sum of their times. An executor that handles the merged task
  // runs it instead.
  std::function<Duration(const dag::Task& merged)> batch_duration;
};

// Throws DeadlockError when tasks are left that can never start.
Schedule run_schedule(const dag::TaskGraph& graph, const ScheduleOptions& options = {});

// Runs several graphs at once on `engine` (whose other models, such as a
// flow network, they share) until the engine has nothing left to do. Each
// schedule's makespan is the end of its own last task.
std::vector<Schedule> run_schedules(Engine& engine, const std::vector<const dag::TaskGraph*>& graphs,
                                    const std::vector<ScheduleOptions>& options);

}  // namespace ssgd::sim
