#pragma once
// The schedule of scheduler_core.h computed without the event engine, for
// the graphs where every task starts the moment its last predecessor ends:
// a task's start is the latest end of its predecessors, its end that plus
// its duration, taken in an order where every predecessor comes first.
// Private to the engine; run_windowed_list() (windowed_schedule.h) uses it.
//
// It gives the event run's figures to the nanosecond or refuses, and the
// caller runs the events instead. What it checks as it goes, task by task:
//  - its resource is free: the tasks a resource runs come one after
//    another (start >= the previous one's end), so none would have queued;
//    a task that starts as a zero-length one ends on its resource must
//    have been released by it, or by a chain of its rank's tasks, each
//    released by the one before, from it (else the event run could have
//    started either first);
//  - the predecessor that released it is unambiguous: the event run takes
//    the one whose end event came last, of equal end times the one that
//    started last (its end was scheduled later); two of equal end and start
//    are refused, and two of equal end of which an executor ran either
//    (its end event was scheduled at a later step, not as it started);
//  - what its observer sees comes in time order for each rank, and the
//    collectives (rank kAllRanks) one after another, in time order;
//  - nothing is left that never started (the event run says why).
// No prioritized resource: its order is the engine's.
//
// A task an executor runs (a collective on the flow network) runs on the
// engine, alone: started at its start by an event of the scheduler's own,
// the engine run until it ends, each after the one before has ended and
// left nothing on the engine past that instant (else refused). A task's end
// counts as one event, as the event run counts it (an executor's task:
// none, its engine's events instead).
//
// The order: the earliest iteration with a ready task first, within it the
// task made ready last (a rank's tasks run one after another until one
// waits for another rank), so that an iteration is done, and released,
// before the next one starts, and the one after can be built meanwhile.
//
// The Store is scheduler_core.h's, with
//   std::uint64_t iteration_of(TaskId) const;

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "dag/task.h"
#include "simulator/engine/engine.h"
#include "simulator/engine/schedule.h"

namespace ssgd::sim::detail {

template <class Store>
class ListScheduler {
 public:
  using Ref = typename Store::Ref;
  using TaskId = dag::TaskId;

  // `engine`: what an executor's tasks run on.
  ListScheduler(Engine& engine, Store& store, const ScheduleOptions& options)
      : engine_(engine),
        store_(store),
        options_(options),
        engine_events_at_start_(engine.events_processed()) {
    if (options_.executor != nullptr) {
      launch_ = engine_.register_handler([this](Engine&, std::uint64_t t) {
        const auto id = static_cast<TaskId>(t);
        options_.executor->start_alone(id, store_.task(id), [this] {
          ended_at_ = engine_.now();
          executor_done_ = true;
        });
      });
    }
  }

  // Runs the whole graph; false, with refused() saying why, where the event
  // run could differ (what was told to the observer and built is then a
  // part of the run, to be thrown away).
  bool run() {
    use_.assign(store_.resource_count(), {});
    for (std::size_t r = 0; r < use_.size(); ++r) {
      if (store_.resource(static_cast<dag::ResourceId>(r)).prioritized) {
        return refuse("a prioritized resource orders its tasks");
      }
    }
    const std::size_t n = store_.task_count();
    store_.for_each_initial([this](TaskId t) { push(t, Store::kNone, 0); });
    while (refused_.empty()) {
      while (low_ < ready_.size() && ready_[low_].empty()) {
        // Its memory back: no task of an earlier iteration is ready, so
        // every task of this one has run (or waits for ever).
        std::vector<Item>().swap(ready_[low_]);
        ++low_;
      }
      if (low_ == ready_.size()) break;
      const Item item = ready_[low_].back();
      ready_[low_].pop_back();
      run_task(item);
    }
    if (!refused_.empty()) return false;
    if (done_ != n) return refuse("tasks are left that never start");
    if (options_.on_complete) options_.on_complete();
    return true;
  }

  [[nodiscard]] const std::string& refused() const { return refused_; }
  [[nodiscard]] std::uint64_t events() const {
    return done_ - executed_ + (engine_.events_processed() - engine_events_at_start_ - executed_);
  }

 private:
  struct Item {
    TaskId task;
    Ref by;  // held
    std::int64_t start;
  };
  // An ended task's, by its Ref while it is held.
  struct Ended {
    std::int64_t end;
    std::int64_t start;
    TaskId task;
    bool executed;  // by the executor: its end was not scheduled as it started
  };
  struct Use {
    std::int64_t end = -1;  // the last task it ran (-1: none yet)
    TaskId task = dag::kNoTask;
    bool zero = false;                   // which took no time
    std::int32_t rank = dag::kAllRanks;  // its rank, and its sequence number there
    std::uint32_t seq = 0;
  };
  struct Rank {
    std::int64_t seen = 0;       // the last end its observer saw
    TaskId last = dag::kNoTask;  // its last task
    std::uint32_t seq = 0;       // its tasks so far
    std::uint32_t chain = 1;     // the first of the chain that ends with its last
  };
  // The latest predecessor so far of a task that waits for more than one,
  // and the latest end at which two of them could not be ordered (the
  // latest of them releases it, if not); a waiting count's top bit says
  // one is kept.
  struct Candidate {
    Ref ref = Store::kNone;  // held
    std::int64_t tie_end = -1;
  };
  static constexpr std::uint32_t kKept = 1u << 31;

  bool refuse(std::string why) {
    if (refused_.empty()) refused_ = std::move(why);
    return false;
  }

  void push(TaskId t, Ref by, std::int64_t start) {
    const auto i = static_cast<std::size_t>(store_.iteration_of(t));
    if (i >= ready_.size()) ready_.resize(i + 1);
    ready_[i].push_back({t, by, start});
    low_ = std::min(low_, i);
  }

  Ended& ended_of(Ref r) {
    if (r >= ended_.size()) ended_.resize(std::max<std::size_t>(r + 1, 2 * ended_.size()));
    return ended_[r];
  }

  void run_task(const Item& item) {
    const TaskId t = item.task;
    const dag::Task& task = store_.task(t);
    const std::int64_t start = item.start;
    std::int64_t end = start + task.duration.ns();
    const bool executed = options_.executor != nullptr && options_.executor->handles(task);
    if (executed && !execute(t, start, end)) return;
    Use& use = use_[task.resource];
    const TaskId by_task = item.by == Store::kNone ? dag::kNoTask : ended_[item.by].task;
    const bool ranked = task.rank != dag::kAllRanks;
    Rank* rank = ranked ? &rank_state(task.rank) : nullptr;
    // A rank's tasks taken one after another, each released by the one
    // before: the run of them since `chain` (its sequence number).
    if (rank != nullptr && (rank->seq == 0 || by_task != rank->last)) rank->chain = rank->seq + 1;
    if (start < use.end ||
        (start == use.end && use.zero && by_task != use.task &&
         !(rank != nullptr && use.rank == task.rank && use.seq >= rank->chain))) {
      // (A task of no time ended as this one starts, and need not have
      // ended before it became ready, unless it released it, or a chain
      // of the rank's tasks, each released by the one before, leads from
      // it to this one.)
      refuse("two tasks would share resource " + std::to_string(task.resource));
      return;
    }
    std::int64_t& seen = rank != nullptr ? rank->seen : comm_seen_;
    if (start < seen) {
      refuse("a rank's tasks, or the collectives, overlap in time");
      return;
    }
    seen = end;
    if (rank != nullptr) {
      rank->last = t;
      ++rank->seq;
    }
    use = {end, t, end == start, task.rank, rank != nullptr ? rank->seq : 0};
    store_.started(t, Time(start), item.by);
    const Ref ref = store_.ended(t, Time(end), item.by);
    store_.drop(item.by);
    ended_of(ref) = {end, start, t, executed};
    if (++done_ % (1u << 20) == 0 && options_.progress) {
      options_.progress(static_cast<double>(done_) / static_cast<double>(store_.task_count()));
    }
    store_.for_each_successor(t, [this, ref, end, start, executed](TaskId s) {
      std::uint32_t& waiting = store_.waiting(s);
      if (waiting == 1) {  // its only predecessor, or the last and none kept before it
        waiting = 0;
        store_.hold(ref);
        push(s, ref, end);
        return;
      }
      Candidate& c = (waiting & kKept) != 0 ? candidates_.find(s)->second
                                            : candidates_.try_emplace(s).first->second;
      waiting |= kKept;
      // Of equal ends, the one that started last, unless an executor ended
      // either (its end event was scheduled at some later step: a tie).
      const Ended* best = c.ref == Store::kNone ? nullptr : &ended_[c.ref];
      const bool even = best != nullptr && end == best->end;
      const bool ordered = even && !executed && !best->executed;
      if (c.ref != ref && even && (!ordered || start == best->start)) {
        c.tie_end = end;  // (an edge given twice does not tie with itself)
      } else if (best == nullptr || end > best->end || (ordered && start > best->start)) {
        store_.hold(ref);
        store_.drop(c.ref);
        c.ref = ref;
      }
      if ((--waiting & ~kKept) != 0) return;
      if (c.tie_end == ended_[c.ref].end) {
        refuse("two predecessors of a task end and start together");
        return;
      }
      push(s, c.ref, ended_[c.ref].end);  // its hold is the ready task's now
      candidates_.erase(s);
    });
    store_.done_with(t);
    store_.drop(ref);
  }

  // Runs t, an executor's, on the engine from `start`; its end to `end`.
  bool execute(TaskId t, std::int64_t start, std::int64_t& end) {
    if (Time(start) < engine_.now()) return refuse("an executor's tasks overlap in time");
    ++executed_;
    executor_done_ = false;
    engine_.schedule(Time(start), launch_, t);
    engine_.run();
    if (!executor_done_) return refuse("an executor's task never ends");
    // (What it did at that instant after, such as the flow network sharing
    // its links out again, the event run does then too, before anything
    // it could touch.)
    if (engine_.now() != ended_at_) {
      return refuse("an executor left events on the engine after its task ended");
    }
    end = ended_at_.ns();
    return true;
  }

  Rank& rank_state(std::int32_t rank) {
    const auto r = static_cast<std::size_t>(rank);
    if (r >= ranks_.size()) ranks_.resize(r + 1);
    return ranks_[r];
  }

  Engine& engine_;
  Store& store_;
  const ScheduleOptions& options_;
  HandlerId launch_ = 0;            // starts an executor's task
  std::uint64_t executed_ = 0;      // tasks an executor ran
  std::uint64_t engine_events_at_start_;  // what the engine had run before
  bool executor_done_ = false;      // the last of them has ended
  Time ended_at_;
  std::vector<std::vector<Item>> ready_;  // by iteration
  std::size_t low_ = 0;                   // no ready task before this iteration
  std::vector<Ended> ended_;
  std::unordered_map<TaskId, Candidate> candidates_;
  std::vector<Use> use_;  // by resource
  std::vector<Rank> ranks_;
  std::int64_t comm_seen_ = 0;  // the collectives'
  std::uint64_t done_ = 0;
  std::string refused_;
};

}  // namespace ssgd::sim::detail
