#pragma once
// Runs a task graph that is built an iteration at a time and released as
// the run leaves it behind, so that memory holds a window of iterations
// rather than the whole run: the scheduling of schedule.h, to the
// nanosecond, without the per-task records.
//
// The source gives iterations of equal task counts, numbered as the whole
// graph would number them (iteration i holds ids [i x T, (i + 1) x T)), with
// the whole graph's edges in the same order; no edge reaches more than
// `reach` iterations forward, and only the first `reach` iterations hold
// tasks without predecessors; edges that leave an iteration leave from
// tasks `reaches_forward` says so. The run builds the first `reach`
// iterations, then iterations up to i + reach when such a task of
// iteration i ends (so every task exists before a predecessor of it ends,
// and every draw a builder makes in task order comes in the same order),
// and releases an iteration once all its tasks have ended. Once an
// iteration is released, the next one is built into its memory on a
// thread of its own while the run goes on: `build` may be called from
// another thread than run_windowed's, one call at a time, in order. What a caller
// needs of the tasks it observes as they start and end (TaskObserver); the
// critical path's figures are kept as the run goes (each path that may
// still be extended, by task kind), not its task list.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dag/critical_path.h"
#include "dag/profile_dag_builder.h"
#include "dag/task.h"
#include "simulator/engine/engine.h"
#include "simulator/engine/schedule.h"

namespace ssgd::sim {

struct IterationSource {
  std::vector<dag::Resource> resources;
  std::size_t tasks_per_iteration = 0;
  std::int64_t iterations = 0;
  std::int64_t reach = 1;
  // Whether a task may have successors in later iterations (left empty:
  // any task may).
  std::function<bool(const dag::Task&)> reaches_forward;
  // Adds the next iteration's tasks and edges to the batch (its `first` is
  // set), with their final durations.
  std::function<void(dag::TaskBatch&)> build;
  std::vector<std::string> layer_names;  // for messages
  std::size_t edges_hint = 0;  // about the edges an iteration has (0: unknown), to reserve room
  // A layout hint, optional: an iteration's first ranks x tasks_per_rank
  // tasks are its ranks' own, tasks_per_rank each, in rank order. They are
  // then stored in tiles of 128 ranks, each tile position-major (a rank's
  // k-th task beside its tile's other ranks' k-th), so that the tasks that
  // run at about the same time lie together in memory. Only the speed of a
  // run depends on it.
  std::size_t ranks = 0;
  std::size_t tasks_per_rank = 0;
};

class TaskObserver {
 public:
  virtual ~TaskObserver() = default;
  virtual void started(dag::TaskId id, const dag::Task& task, Time now) = 0;
  virtual void ended(dag::TaskId id, const dag::Task& task, Time now) = 0;
};

struct WindowedSchedule {
  Time makespan;
  std::uint64_t events = 0;
  std::vector<std::vector<dag::TaskId>> batches;  // as Schedule::batches
  dag::CriticalPath critical_path;  // as dag::scheduled_critical_path(), without its task list
  std::size_t tasks = 0;
  std::size_t edges = 0;
  std::int64_t peak_iterations_held = 0;  // the most iterations built and not yet released
  // Building iterations, within the run: on the run's thread or, for an
  // iteration built ahead, on a thread of its own while the run went on;
  // and of the run's own time, what went to building iterations or
  // waiting for one built ahead (the rest went to simulating).
  double build_seconds = 0;
  double build_foreground_seconds = 0;
};

// Throws DeadlockError when tasks are left that can never start, and
// std::logic_error on a source that breaks the rules above.
WindowedSchedule run_windowed(Engine& engine, const IterationSource& source,
                              const ScheduleOptions& options, TaskObserver& observer);

// The same run computed without the event engine, task by task in an order
// where every predecessor comes first (list_scheduler_core.h), where the
// graph allows it: every task starts the moment its last predecessor ends
// (no resource is asked for by two tasks at once), the predecessor that
// releases each is unambiguous and no resource is prioritized; an
// executor's tasks run on `engine` one at a time. Every figure of
// run_windowed() to the nanosecond, the events counted as it counts them
// (those of the engine included); the observer sees each task's start and its
// end together, each rank's tasks in time order, and the collectives (rank
// kAllRanks) in time order, but a rank's tasks may come before the
// collectives that start earlier. Where the graph does not allow it,
// returns nothing, with why in `refused`: the source has then been built
// from and the observer told part of the run, so a run_windowed() after
// needs fresh ones. Throws what run_windowed() throws of a bad source.
std::optional<WindowedSchedule> run_windowed_list(Engine& engine, const IterationSource& source,
                                                  const ScheduleOptions& options,
                                                  TaskObserver& observer,
                                                  std::string* refused = nullptr);

}  // namespace ssgd::sim
