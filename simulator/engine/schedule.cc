#include "simulator/engine/schedule.h"

#include <algorithm>
#include <map>
#include <memory>
#include <queue>
#include <sstream>
#include <stdexcept>

#include "simulator/engine/deadlock_error.h"
#include "simulator/engine/engine.h"

namespace ssgd::sim {
namespace {

using dag::kNoTask;
using dag::TaskId;

// The ready queue of one serial resource, ordered by (priority, ready time,
// task id); the priority is 0 except on prioritized resources.
struct ReadyEntry {
  std::int64_t priority;
  std::int64_t ready_ns;
  TaskId task;
  TaskId released_by;
  friend bool operator>(const ReadyEntry& a, const ReadyEntry& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    return a.ready_ns != b.ready_ns ? a.ready_ns > b.ready_ns : a.task > b.task;
  }
};

// Earlier iterations first, then front layers (the next forward needs them first).
std::int64_t priority_of(const dag::Task& task) {
  return (static_cast<std::int64_t>(task.iteration) << 32) + (task.layer + 1);
}

class Scheduler {
 public:
  Scheduler(Engine& engine, const dag::TaskGraph& graph, const ScheduleOptions& options)
      : graph_(graph), options_(options), engine_(engine) {
    const auto n = graph.task_count();
    out_.start.assign(n, Time::zero());
    out_.end.assign(n, Time::zero());
    out_.started_by.assign(n, kNoTask);
    waiting_.resize(n);
    for (TaskId t = 0; t < n; ++t) waiting_[t] = graph.in_degree(t);
    const auto resources = graph.resources().size();
    busy_.assign(resources, false);
    dispatch_pending_.assign(resources, false);
    last_ended_.assign(resources, kNoTask);
    queues_.resize(resources);
    finish_ = engine_.register_handler([this](Engine&, std::uint64_t t) {
      finished(static_cast<TaskId>(t));
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
    const auto n = graph_.task_count();
    if (options_.progress) {
      engine_.set_progress(1u << 20, [this, n](const Engine&) {
        options_.progress(static_cast<double>(done_) / static_cast<double>(n));
      });
    }
    for (TaskId t = 0; t < n; ++t) {
      if (waiting_[t] == 0) make_ready(t, kNoTask);
    }
    if (n == 0 && options_.on_complete) options_.on_complete();
  }

  Schedule finish() {
    if (done_ != graph_.task_count()) report_deadlock();
    out_.makespan = Time::zero();
    for (const Time e : out_.end) out_.makespan = max(out_.makespan, e);
    out_.events = engine_.events_processed();
    out_.batches = std::move(batches_);
    return std::move(out_);
  }

 private:
  void make_ready(TaskId t, TaskId released_by) {
    const auto r = graph_.task(t).resource;
    if (graph_.resources()[r].prioritized) {
      // Decided once everything that becomes ready at this instant has.
      queues_[r].push({priority_of(graph_.task(t)), engine_.now().ns(), t, released_by});
      request_dispatch(r);
    } else if (!busy_[r] && queues_[r].empty()) {
      start(t, released_by);
    } else {
      queues_[r].push({0, engine_.now().ns(), t, released_by});
    }
  }

  void request_dispatch(dag::ResourceId r) {
    if (busy_[r] || dispatch_pending_[r] || queues_[r].empty()) return;
    dispatch_pending_[r] = true;
    engine_.schedule_after(Duration::zero(), dispatch_, r);
  }

  // Who released a task taken from a queue: the task that freed the
  // resource when it waited for it, else the one that made it ready.
  TaskId releaser(const ReadyEntry& e, dag::ResourceId r) const {
    return e.ready_ns < engine_.now().ns() && last_ended_[r] != kNoTask ? last_ended_[r]
                                                                         : e.released_by;
  }

  // A prioritized resource starts its highest-priority ready task and, while
  // the bytes started stay below its credit, the next ones, as one batch.
  void dispatch(dag::ResourceId r) {
    dispatch_pending_[r] = false;
    if (busy_[r] || queues_[r].empty()) return;
    const std::int64_t credit = graph_.resources()[r].credit_bytes;
    std::vector<TaskId> batch;
    std::int64_t left = credit;
    do {
      const ReadyEntry e = queues_[r].top();
      queues_[r].pop();
      batch.push_back(e.task);
      out_.started_by[e.task] = releaser(e, r);
      left -= graph_.task(e.task).bytes;
    } while (left > 0 && !queues_[r].empty());
    // The scheduling round's own cost comes first.
    const Duration overhead = graph_.resources()[r].dispatch_overhead;
    if (batch.size() == 1 && overhead == Duration::zero()) {
      start(batch.front(), out_.started_by[batch.front()]);
      return;
    }
    busy_[r] = true;
    dag::Task merged = graph_.task(batch.front());
    merged.bytes = 0;
    merged.duration = Duration::zero();
    for (TaskId t : batch) {
      out_.start[t] = engine_.now();
      merged.bytes += graph_.task(t).bytes;
      merged.duration += graph_.task(t).duration;
    }
    if (options_.batch_duration && batch.size() > 1) {
      merged.duration = options_.batch_duration(merged);
    }
    const std::size_t id = batches_.size();
    batches_.push_back(std::move(batch));
    if (options_.executor != nullptr && options_.executor->handles(merged)) {
      if (overhead == Duration::zero()) {
        options_.executor->start(batches_[id].front(), merged, [this, id] { finished_batch(id); });
        return;
      }
      pending_.emplace(id, std::move(merged));
      engine_.schedule_after(overhead, launch_batch_, id);
      return;
    }
    engine_.schedule_after(merged.duration + overhead, finish_batch_, id);
  }

  // A batch whose round's cost has passed goes to the executor.
  void launch_batch(std::size_t id) {
    const auto it = pending_.find(id);
    const dag::Task merged = std::move(it->second);
    pending_.erase(it);
    options_.executor->start(batches_[id].front(), merged, [this, id] { finished_batch(id); });
  }

  void start(TaskId t, TaskId released_by) {
    const auto& task = graph_.task(t);
    busy_[task.resource] = true;
    out_.start[t] = engine_.now();
    out_.started_by[t] = released_by;
    if (options_.executor != nullptr && options_.executor->handles(task)) {
      options_.executor->start(t, task, [this, t] { finished(t); });
      return;
    }
    engine_.schedule_after(task.duration, finish_, t);
  }

  // Records the end of `t` and makes ready what waited only for it.
  void ended(TaskId t) {
    ++done_;
    if (done_ == graph_.task_count() && options_.on_complete) options_.on_complete();
    out_.end[t] = engine_.now();
    for (TaskId s : graph_.successors(t)) {
      if (--waiting_[s] == 0) make_ready(s, t);
    }
  }

  void finished(TaskId t) {
    const auto r = graph_.task(t).resource;
    busy_[r] = false;
    last_ended_[r] = t;
    ended(t);
    free_resource(r);
  }

  void finished_batch(std::size_t id) {
    const auto& batch = batches_[id];
    const auto r = graph_.task(batch.front()).resource;
    busy_[r] = true;  // until every task of the batch has ended
    for (TaskId t : batch) ended(t);
    busy_[r] = false;
    last_ended_[r] = batch.front();
    free_resource(r);
  }

  void free_resource(dag::ResourceId r) {
    if (busy_[r] || queues_[r].empty()) return;
    if (graph_.resources()[r].prioritized) {
      request_dispatch(r);
      return;
    }
    const ReadyEntry next = queues_[r].top();
    queues_[r].pop();
    // It was ready earlier and waited for the resource: this task released it.
    start(next.task, next.ready_ns < engine_.now().ns() ? last_ended_[r] : next.released_by);
  }

  [[noreturn]] void report_deadlock() const {
    std::ostringstream msg;
    const auto n = graph_.task_count();
    msg << "deadlock at t=" << engine_.now().ns() << " ns: " << (n - done_) << " of " << n
        << " tasks can never start. First of them:";
    int shown = 0;
    for (TaskId t = 0; t < n && shown < 5; ++t) {
      if (waiting_[t] == 0) continue;  // ran, or was at least released
      msg << "\n  " << graph_.describe(t) << " waits for";
      int preds = 0;
      for (TaskId p : graph_.predecessors(t)) {
        if (preds++ == 3) {
          msg << " ...";
          break;
        }
        msg << " " << graph_.describe(p);
      }
      ++shown;
    }
    throw DeadlockError(msg.str());
  }

  const dag::TaskGraph& graph_;
  const ScheduleOptions& options_;
  Engine& engine_;
  HandlerId finish_ = 0;
  HandlerId finish_batch_ = 0;
  HandlerId dispatch_ = 0;
  HandlerId launch_batch_ = 0;
  std::map<std::size_t, dag::Task> pending_;  // batches waiting out their round's cost
  Schedule out_;
  std::vector<std::uint32_t> waiting_;
  std::vector<bool> busy_;
  std::vector<bool> dispatch_pending_;
  std::vector<TaskId> last_ended_;  // per resource: the task that last freed it
  std::vector<std::vector<TaskId>> batches_;  // tasks started together on a prioritized resource
  std::vector<std::priority_queue<ReadyEntry, std::vector<ReadyEntry>, std::greater<>>> queues_;
  std::size_t done_ = 0;
};

}  // namespace

Schedule run_schedule(const dag::TaskGraph& graph, const ScheduleOptions& options) {
  Engine engine;
  return std::move(run_schedules(engine, {&graph}, {options}).front());
}

std::vector<Schedule> run_schedules(Engine& engine, const std::vector<const dag::TaskGraph*>& graphs,
                                    const std::vector<ScheduleOptions>& options) {
  if (graphs.size() != options.size()) throw std::logic_error("one ScheduleOptions per graph");
  std::vector<std::unique_ptr<Scheduler>> schedulers;
  for (std::size_t i = 0; i < graphs.size(); ++i) {
    if (!graphs[i]->finalized()) throw std::logic_error("run_schedules needs finalized graphs");
    schedulers.push_back(std::make_unique<Scheduler>(engine, *graphs[i], options[i]));
  }
  for (auto& s : schedulers) s->prime();
  engine.run();
  std::vector<Schedule> out;
  for (auto& s : schedulers) out.push_back(s->finish());
  return out;
}

}  // namespace ssgd::sim
