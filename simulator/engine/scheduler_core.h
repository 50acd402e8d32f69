#pragma once
// The scheduling rules of simulator/engine/schedule.h, once, for two kinds
// of task store: a whole finalized graph with every task's start, end and
// releaser recorded (schedule.cc), and a graph built and released an
// iteration window at a time (windowed_schedule.cc). Private to the engine.
//
// A Store provides:
//   using Ref; static constexpr Ref kNone;   what a task's releaser is kept as
//   std::size_t task_count() const;           tasks in the whole run
//   const dag::Task& task(TaskId) const;      a task that has not been released
//   const dag::Resource& resource(ResourceId) const;  std::size_t resource_count() const;
//   void for_each_initial(F f);               f(t) for each task with no predecessor, by id
//   std::uint32_t& waiting(TaskId);           predecessors not yet ended
//   void started(TaskId, Time, Ref by);       records a start (holds `by` until its end)
//   Ref ended(TaskId, Time, Ref by);          records an end (`by` as started; its hold
//                                             passes on); the task's Ref, held once
//                                             (a windowed store builds what its successors need)
//   void for_each_successor(TaskId, F f);     in the whole graph's order
//   void done_with(TaskId);                   its successors have been told
//   void prefetch_end(TaskId, Ref by) const;  a hint: `t`, released by `by`, ends now
//   void hold(Ref); void drop(Ref);           references to releasers
//   [[noreturn]] void report_deadlock(std::size_t done, Time now) const;

#include <cstdint>
#include <map>
#include <queue>
#include <vector>

#include "dag/task.h"
#include "simulator/engine/engine.h"
#include "simulator/engine/schedule.h"

namespace ssgd::sim::detail {

// Earlier iterations first, then front layers (the next forward needs them first).
inline std::int64_t priority_of(const dag::Task& task) {
  return (static_cast<std::int64_t>(task.iteration) << 32) + (task.layer + 1);
}

template <class Store>
class Scheduler {
 public:
  using Ref = typename Store::Ref;
  using TaskId = dag::TaskId;

  Scheduler(Engine& engine, Store& store, const ScheduleOptions& options)
      : store_(store), options_(options), engine_(engine) {
    const auto resources = store.resource_count();
    state_.assign(resources, 0);
    for (std::size_t r = 0; r < resources; ++r) {
      if (store.resource(static_cast<dag::ResourceId>(r)).prioritized) state_[r] = kPrioritized;
    }
    last_ended_.assign(resources, Store::kNone);
    queues_.resize(resources);
    // A completion carries its task and the task's releaser.
    static_assert(sizeof(TaskId) == 4 && sizeof(Ref) == 4);
    finish_ = engine_.register_handler([this](Engine&, std::uint64_t payload) {
      finished(static_cast<TaskId>(payload), static_cast<Ref>(payload >> 32));
    });
    finish_batch_ = engine_.register_handler([this](Engine&, std::uint64_t b) {
      finished_batch(static_cast<std::size_t>(b));
    });
    dispatch_ = engine_.register_handler([this](Engine&, std::uint64_t r) {
      dispatch(static_cast<dag::ResourceId>(r));
    });
    launch_batch_ = engine_.register_handler([this](Engine&, std::uint64_t b) {
      launch_batch(static_cast<std::size_t>(b));
    });
  }

  void prime() {
    const auto n = store_.task_count();
    if (options_.progress) {
      engine_.set_progress(1u << 20, [this, n](const Engine&) {
        options_.progress(static_cast<double>(done_) / static_cast<double>(n));
      });
    }
    store_.for_each_initial([this](TaskId t) { make_ready(t, Store::kNone); });
    if (n == 0 && options_.on_complete) options_.on_complete();
  }

  // After the run: throws DeadlockError (through the store) when tasks are
  // left that never started; hands over the batches.
  std::vector<std::vector<TaskId>> finish() {
    if (done_ != store_.task_count()) store_.report_deadlock(done_, engine_.now());
    for (Ref r : last_ended_) store_.drop(r);
    last_ended_.clear();
    return std::move(batches_);
  }

 private:
  // The ready queue of one serial resource, ordered by (priority, ready
  // time, task id); the priority is 0 except on prioritized resources.
  struct ReadyEntry {
    std::int64_t priority;
    std::int64_t ready_ns;
    TaskId task;
    Ref released_by;
    friend bool operator>(const ReadyEntry& a, const ReadyEntry& b) {
      if (a.priority != b.priority) return a.priority > b.priority;
      return a.ready_ns != b.ready_ns ? a.ready_ns > b.ready_ns : a.task > b.task;
    }
  };

  // A resource's state, one byte, so that the common case (a task made
  // ready on an idle resource of its own) reads nothing else of it.
  static constexpr std::uint8_t kBusy = 1, kDispatchPending = 2, kPrioritized = 4, kQueued = 8;

  void push(dag::ResourceId r, const ReadyEntry& e) {
    queues_[r].push(e);
    state_[r] |= kQueued;
  }
  ReadyEntry pop(dag::ResourceId r) {
    const ReadyEntry e = queues_[r].top();
    queues_[r].pop();
    if (queues_[r].empty()) state_[r] &= static_cast<std::uint8_t>(~kQueued);
    return e;
  }

  void make_ready(TaskId t, Ref released_by) {
    const dag::Task& task = store_.task(t);
    const auto r = task.resource;
    const std::uint8_t state = state_[r];
    if ((state & kPrioritized) != 0) {
      // Decided once everything that becomes ready at this instant has.
      store_.hold(released_by);
      push(r, {priority_of(task), engine_.now().ns(), t, released_by});
      request_dispatch(r);
    } else if ((state & (kBusy | kQueued)) == 0) {
      start(t, released_by);
    } else {
      store_.hold(released_by);
      push(r, {0, engine_.now().ns(), t, released_by});
    }
  }

  void request_dispatch(dag::ResourceId r) {
    if ((state_[r] & (kBusy | kDispatchPending | kQueued)) != kQueued) return;
    state_[r] |= kDispatchPending;
    engine_.schedule_after(Duration::zero(), dispatch_, r);
  }

  // Who released a task taken from a queue: the task that freed the
  // resource when it waited for it, else the one that made it ready.
  Ref releaser(const ReadyEntry& e, dag::ResourceId r) const {
    return e.ready_ns < engine_.now().ns() && last_ended_[r] != Store::kNone ? last_ended_[r]
                                                                             : e.released_by;
  }

  // A prioritized resource starts its highest-priority ready task and, while
  // the bytes started stay below its credit, the next ones, as one batch.
  void dispatch(dag::ResourceId r) {
    state_[r] &= static_cast<std::uint8_t>(~kDispatchPending);
    if ((state_[r] & (kBusy | kQueued)) != kQueued) return;
    const dag::Resource& resource = store_.resource(r);
    std::vector<TaskId> batch;
    std::int64_t left = resource.credit_bytes;
    std::vector<Ref> by;
    // Whether the batch's first task was ready before this round: it waited.
    bool waited = false;
    do {
      const ReadyEntry e = pop(r);
      if (batch.empty()) waited = e.ready_ns < engine_.now().ns();
      batch.push_back(e.task);
      by.push_back(releaser(e, r));
      store_.started(e.task, engine_.now(), by.back());
      store_.drop(e.released_by);
      left -= store_.task(e.task).bytes;
    } while (left > 0 && (state_[r] & kQueued) != 0);
    state_[r] |= kBusy;
    // The scheduling round's own cost comes first.
    const Duration overhead = resource.dispatch_overhead;
    if (batch.size() == 1 && overhead == Duration::zero()) {
      launch(batch.front(), store_.task(batch.front()), by.front(), waited);
      return;
    }
    dag::Task merged = store_.task(batch.front());
    merged.bytes = 0;
    merged.duration = Duration::zero();
    for (TaskId t : batch) {
      merged.bytes += store_.task(t).bytes;
      merged.duration += store_.task(t).duration;
    }
    if (options_.batch_duration && batch.size() > 1) {
      merged.duration = options_.batch_duration(merged);
    }
    const std::size_t id = batches_.size();
    batches_.push_back(std::move(batch));
    batch_by_.push_back(std::move(by));
    if (options_.executor != nullptr && options_.executor->handles(merged)) {
      if (overhead == Duration::zero()) {
        options_.executor->start_waited(batches_[id].front(), merged, waited,
                                        [this, id] { finished_batch(id); });
        return;
      }
      pending_.emplace(id, Pending{std::move(merged), waited});
      engine_.schedule_after(overhead, launch_batch_, id);
      return;
    }
    engine_.schedule_after(merged.duration + overhead, finish_batch_, id);
  }

  // A batch whose round's cost has passed goes to the executor.
  void launch_batch(std::size_t id) {
    const auto it = pending_.find(id);
    const Pending batch = std::move(it->second);
    pending_.erase(it);
    options_.executor->start_waited(batches_[id].front(), batch.merged, batch.waited,
                                    [this, id] { finished_batch(id); });
  }

  // `waited`: t was ready before now and queued for its resource.
  void start(TaskId t, Ref released_by, bool waited = false) {
    const dag::Task& task = store_.task(t);
    state_[task.resource] |= kBusy;
    store_.started(t, engine_.now(), released_by);
    launch(t, task, released_by, waited);
  }

  void launch(TaskId t, const dag::Task& task, Ref by, bool waited) {
    if (options_.executor != nullptr && options_.executor->handles(task)) {
      options_.executor->start_waited(t, task, waited, [this, t, by] { finished(t, by); });
      return;
    }
    engine_.schedule_after(task.duration, finish_,
                           static_cast<std::uint64_t>(t) | static_cast<std::uint64_t>(by) << 32);
  }

  // Records the end of `t` and makes ready what waited only for it. Returns
  // t's Ref, held once for the caller.
  Ref ended(TaskId t, Ref by) {
    ++done_;
    if (done_ == store_.task_count() && options_.on_complete) options_.on_complete();
    const Ref ref = store_.ended(t, engine_.now(), by);
    store_.for_each_successor(t, [this, ref](TaskId s) {
      if (--store_.waiting(s) == 0) make_ready(s, ref);
    });
    store_.done_with(t);
    return ref;
  }

  // Only a prioritized resource reads the task that last freed it later
  // (its dispatch is an event of its own); any other starts its next task
  // as it is freed, from the task just ended.
  void set_last_ended(dag::ResourceId r, Ref ref) {
    if ((state_[r] & kPrioritized) == 0) return;
    store_.hold(ref);
    store_.drop(last_ended_[r]);
    last_ended_[r] = ref;
  }

  void finished(TaskId t, Ref by) {
    store_.prefetch_end(t, by);
    const auto r = store_.task(t).resource;
    state_[r] &= static_cast<std::uint8_t>(~kBusy);
    const Ref ref = ended(t, by);
    set_last_ended(r, ref);
    free_resource(r, ref);
    store_.drop(ref);
  }

  void finished_batch(std::size_t id) {
    const std::vector<TaskId> batch = batches_[id];
    const std::vector<Ref> by = std::move(batch_by_[id]);
    const auto r = store_.task(batch.front()).resource;
    state_[r] |= kBusy;  // until every task of the batch has ended
    std::vector<Ref> refs;
    refs.reserve(batch.size());
    for (std::size_t k = 0; k < batch.size(); ++k) refs.push_back(ended(batch[k], by[k]));
    state_[r] &= static_cast<std::uint8_t>(~kBusy);
    set_last_ended(r, refs.front());
    free_resource(r, refs.front());
    for (Ref ref : refs) store_.drop(ref);
  }

  // `freed_by`: the task whose end freed the resource, now.
  void free_resource(dag::ResourceId r, Ref freed_by) {
    if ((state_[r] & (kBusy | kQueued)) != kQueued) return;
    if ((state_[r] & kPrioritized) != 0) {
      request_dispatch(r);
      return;
    }
    const ReadyEntry next = pop(r);
    // It was ready earlier and waited for the resource: this task released it.
    const bool waited = next.ready_ns < engine_.now().ns();
    start(next.task, waited ? freed_by : next.released_by, waited);
    store_.drop(next.released_by);
  }

  Store& store_;
  const ScheduleOptions& options_;
  Engine& engine_;
  HandlerId finish_ = 0;
  HandlerId finish_batch_ = 0;
  HandlerId dispatch_ = 0;
  HandlerId launch_batch_ = 0;
  // A batch waiting out its round's cost: its merged task, and whether its
  // first task waited for the resource.
  struct Pending {
    dag::Task merged;
    bool waited = false;
  };
  std::map<std::size_t, Pending> pending_;
  std::vector<std::uint8_t> state_;  // per resource: kBusy, kDispatchPending, kPrioritized, kQueued
  std::vector<Ref> last_ended_;  // per prioritized resource: the task that last freed it
  std::vector<std::vector<TaskId>> batches_;  // tasks started together on a prioritized resource
  std::vector<std::vector<Ref>> batch_by_;    // and their releasers, until they end
  std::vector<std::priority_queue<ReadyEntry, std::vector<ReadyEntry>, std::greater<>>> queues_;
  std::size_t done_ = 0;
};

}  // namespace ssgd::sim::detail
