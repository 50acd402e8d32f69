#pragma once
// Runs a replay's compute and communication tasks under the interference
// model `contention` (simulator/perturb/interference.h) on the event engine.
//
// It takes over every compute task (forward, backward, update) and every
// collective. A task's work is its duration at full speed; it progresses at
// 1 / (1 + f) while the other kind runs beside it:
//   - a compute task of rank r, while a collective of r (or of all ranks)
//     runs: f is the task's factor from the plan;
//   - a collective with a fixed time, while any of its ranks computes: f is
//     the plan's comm factor;
//   - a collective that waited for its resource behind another (the
//     scheduler says so) has plan.concurrent times its time added to its
//     work: the cost, in the resource's serial time, of the library having
//     run it beside the one it waited for.
// Each change of what runs moves the affected tasks' ends (their events
// cancelled and scheduled again). A collective the flow network runs (the
// inner executor) keeps the network's own time; the part of it that
// overlapped compute is then stretched by the comm factor after the network
// is done with it, before its successors may start.

#include <cstdint>
#include <functional>
#include <vector>

#include "dag/task.h"
#include "simulator/engine/engine.h"
#include "simulator/engine/schedule.h"
#include "simulator/perturb/interference.h"

namespace ssgd::sim {

// What the model added over the run (nanoseconds), and the work it slowed.
struct InterferenceStats {
  std::int64_t compute_tasks = 0;
  std::int64_t compute_ns = 0;          // compute tasks' time at full speed
  std::int64_t compute_added_ns = 0;    // what interference added to it
  std::int64_t compute_slowed_ns = 0;   // compute time spent slowed beside a collective
  std::int64_t comm_tasks = 0;
  std::int64_t comm_ns = 0;             // collectives' time without interference
  std::int64_t comm_added_ns = 0;
  std::int64_t comm_queued = 0;           // collectives that waited behind another
  std::int64_t comm_queued_added_ns = 0;  // what host.concurrent added to them
};

class InterferenceExecutor final : public TaskExecutor {
 public:
  // `inner` (may be null) runs the collectives it handles; the plan must be
  // active and outlive the executor.
  InterferenceExecutor(Engine& engine, TaskExecutor* inner, const InterferencePlan& plan);

  [[nodiscard]] bool handles(const dag::Task& task) const override;
  void start(dag::TaskId id, const dag::Task& task, std::function<void()> finished) override;
  void start_waited(dag::TaskId id, const dag::Task& task, bool waited,
                    std::function<void()> finished) override;

  [[nodiscard]] const InterferenceStats& stats() const { return stats_; }

 private:
  struct Running {
    std::function<void()> finished;
    std::int64_t started = 0;   // ns
    std::int64_t since = 0;     // ns: the last time `left` was brought up to date
    double left = 0;            // work left at full speed, ns
    double factor = 0;          // f of this task (compute) or the comm factor
    bool slowed = false;        // progressing at 1 / (1 + factor) now
    bool comm = false;
    bool delegated = false;     // the inner executor runs it, until `tail`
    bool tail = false;          // delegated, the network done: the stretch left
    double overlapped = 0;      // delegated: ns run beside compute
    bool queued = false;        // a collective that waited behind another
    std::int64_t nominal = 0;   // ns at full speed (delegated: set at its network end)
    std::int32_t rank = 0;
    EventHandle event{};
    bool pending = false;       // `event` is scheduled
    std::size_t pos = 0;        // its place in compute_live_ or comm_live_
  };

  // The work a queued collective of `nominal_ns` alone gains: plan.concurrent of it.
  [[nodiscard]] double queued_extra(std::int64_t nominal_ns) const;
  [[nodiscard]] bool should_slow(const Running& r) const;
  void count(const Running& r, int delta);
  void advance(Running& r, std::int64_t now);
  void schedule_end(std::size_t slot, std::int64_t now);
  // Brings slot's progress up to `now` and its rate in line with what runs beside it.
  void update(std::size_t slot, std::int64_t now);
  // After `changed` started or ended: the tasks of the other kind it runs
  // beside (a collective: its ranks' compute; compute: the collectives).
  void refresh(const Running& changed, std::int64_t now);
  void enlist(std::size_t slot);
  void delist(std::size_t slot);
  void finish(std::size_t slot);
  void network_done(std::size_t slot);
  std::size_t allocate();
  int& compute_on(std::int32_t rank);
  int& comm_on(std::int32_t rank);

  Engine& engine_;
  TaskExecutor* inner_;
  const InterferencePlan& plan_;
  HandlerId end_ = 0;
  std::vector<Running> running_;
  std::vector<std::size_t> free_;
  std::vector<std::size_t> compute_live_;  // slots of running compute tasks, any order
  std::vector<std::size_t> comm_live_;     // slots of running collectives
  std::vector<int> compute_on_;  // per rank: compute tasks running
  std::vector<int> comm_on_;     // per rank: collectives of that rank alone running
  int compute_total_ = 0;
  int comm_all_ = 0;             // collectives of all ranks running
  InterferenceStats stats_;
};

}  // namespace ssgd::sim
