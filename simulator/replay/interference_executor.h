#pragma once
// Runs a replay's compute and communication tasks under the interference
// models `contention` and `demand` (simulator/perturb/interference.h) on the
// event engine.
//
// It takes over every compute task (forward, backward, update) and every
// collective. A task's work is its duration at full speed. Under
// `contention` it progresses at 1 / (1 + f) while the other kind runs
// beside it:
//   - a compute task of rank r, while a collective of r (or of all ranks)
//     runs: f is the task's factor from the plan;
//   - a collective with a fixed time, while any of its ranks computes: f is
//     the plan's comm factor.
// Under `demand` each rank's CPU budget is shared max-min fairly among its
// compute tasks (each wanting all of it) and the collectives on it (its own
// and those of all ranks, each wanting u = min(1, c b / T): c the plan's CPU
// a byte, b the collective's bytes through a rank, T its time alone); a
// compute task runs at its share, a collective at its share over u (a
// collective of all ranks at the least over the ranks). Under both:
//   - a collective that waited for its resource behind another (the
//     scheduler says so) has plan.concurrent times its time added to its
//     work: the cost, in the resource's serial time, of the library having
//     run it beside the one it waited for.
// Each change of what runs moves the affected tasks' ends (their events
// cancelled and scheduled again). A collective the flow network runs (the
// inner executor) keeps the network's own time; the part of it that
// overlapped compute is then stretched by the comm factor (demand: each
// stretch of it by its own, time x (1 / rate - 1) more) after the network
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
  // active and outlive the executor. Under demand, `workers` is the job's
  // ranks (a collective task without a group in plan.comm_through is an
  // all-reduce of its bytes over them).
  InterferenceExecutor(Engine& engine, TaskExecutor* inner, const InterferencePlan& plan,
                       std::int64_t workers = 1);

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
    double factor = 0;          // contention: f of this task (compute) or the comm factor
    double demand = 1;          // demand: a collective's share of the CPU alone, u
    double stretch = 1;         // its time per unit of work now: 1 at full speed
    bool comm = false;
    bool delegated = false;     // the inner executor runs it, until `tail`
    bool tail = false;          // delegated, the network done: the stretch left
    double overlapped = 0;      // delegated, contention: ns run slowed
    double lag = 0;             // delegated, demand: what the time run slowed costs more,
                                // sum of dt (stretch - 1) (contention's overlapped x factor)
    bool queued = false;        // a collective that waited behind another
    std::int64_t nominal = 0;   // ns at full speed (delegated: set at its network end)
    std::int32_t rank = 0;
    EventHandle event{};
    bool pending = false;       // `event` is scheduled
    std::size_t pos = 0;        // its place in compute_live_ or comm_live_
  };

  // demand: a collective's share of the CPU alone, u = min(1, c b / T).
  [[nodiscard]] double demand_of(const dag::Task& task) const;
  // The work a queued collective of `nominal_ns` alone gains: plan.concurrent of it.
  [[nodiscard]] double queued_extra(std::int64_t nominal_ns) const;
  // The time per unit of work `r` runs at now (1: full speed).
  [[nodiscard]] double stretch_of(const Running& r) const;
  // demand: the share of rank's CPU each thread wanting all of it gets (the
  // level of the max-min sharing); `rank` kAllRanks: a rank with no compute
  // and no collective of its own.
  [[nodiscard]] double level_on(std::int32_t rank) const;
  // The same with `computing` compute tasks and the collectives of `rank`
  // (kAllRanks: those of all ranks only).
  [[nodiscard]] double level_with(int computing, std::int32_t rank) const;
  [[nodiscard]] double comm_rate_on(const Running& r, std::int32_t rank) const;
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
  std::int64_t workers_ = 1;
  HandlerId end_ = 0;
  std::vector<Running> running_;
  std::vector<std::size_t> free_;
  std::vector<std::size_t> compute_live_;  // slots of running compute tasks, any order
  std::vector<std::size_t> comm_live_;     // slots of running collectives
  std::vector<int> compute_on_;  // per rank: compute tasks running
  std::vector<int> comm_on_;     // per rank: collectives of that rank alone running
  int compute_total_ = 0;
  int comm_all_ = 0;             // collectives of all ranks running
  int comm_ranked_ = 0;          // collectives of one rank running
  // demand: ranks by their running compute tasks (index: how many), and the
  // most any rank runs, so that a collective of all ranks finds its slowest
  // rank without visiting every rank.
  std::vector<std::int64_t> compute_ranks_;
  int most_computing_ = 0;
  mutable std::vector<double> demands_;  // level_with's scratch
  InterferenceStats stats_;
};

}  // namespace ssgd::sim
