#include "simulator/schedule.h"

#include <algorithm>
#include <memory>
#include <queue>
#include <sstream>
#include <stdexcept>

#include "simulator/deadlock_error.h"
#include "simulator/engine/engine.h"

namespace ssgd::sim {
namespace {

using dag::kNoTask;
using dag::TaskId;

// The ready queue of one serial resource, ordered by (ready time, task id).
struct ReadyEntry {
  std::int64_t ready_ns;
  TaskId task;
  TaskId released_by;
  friend bool operator>(const ReadyEntry& a, const ReadyEntry& b) {
    return a.ready_ns != b.ready_ns ? a.ready_ns > b.ready_ns : a.task > b.task;
  }
};

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
    busy_.assign(graph.resources().size(), false);
    queues_.resize(graph.resources().size());
    finish_ = engine_.register_handler([this](Engine&, std::uint64_t t) {
      finished(static_cast<TaskId>(t));
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
    return std::move(out_);
  }

 private:
  void make_ready(TaskId t, TaskId released_by) {
    const auto r = graph_.task(t).resource;
    if (!busy_[r] && queues_[r].empty()) {
      start(t, released_by);
    } else {
      queues_[r].push({engine_.now().ns(), t, released_by});
    }
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

  void finished(TaskId t) {
    ++done_;
    if (done_ == graph_.task_count() && options_.on_complete) options_.on_complete();
    out_.end[t] = engine_.now();
    const auto r = graph_.task(t).resource;
    busy_[r] = false;
    for (TaskId s : graph_.successors(t)) {
      if (--waiting_[s] == 0) make_ready(s, t);
    }
    if (!busy_[r] && !queues_[r].empty()) {
      const ReadyEntry next = queues_[r].top();
      queues_[r].pop();
      // It was ready earlier and waited for the resource: this task released it.
      start(next.task, next.ready_ns < engine_.now().ns() ? t : next.released_by);
    }
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
  Schedule out_;
  std::vector<std::uint32_t> waiting_;
  std::vector<bool> busy_;
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
