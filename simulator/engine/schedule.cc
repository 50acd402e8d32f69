#include "simulator/engine/schedule.h"

#include <algorithm>
#include <map>
#include <memory>
#include <queue>
#include <sstream>
#include <stdexcept>

#include "simulator/engine/deadlock_error.h"
#include "simulator/engine/engine.h"
#include "simulator/engine/scheduler_core.h"

namespace ssgd::sim {
namespace {

using dag::kNoTask;
using dag::TaskId;

// The whole finalized graph, with every task's start, end and releaser.
class WholeStore {
 public:
  using Ref = TaskId;
  static constexpr Ref kNone = kNoTask;

  explicit WholeStore(const dag::TaskGraph& graph) : graph_(graph) {
    const auto n = graph.task_count();
    out_.start.assign(n, Time::zero());
    out_.end.assign(n, Time::zero());
    out_.started_by.assign(n, kNoTask);
    waiting_.resize(n);
    for (TaskId t = 0; t < n; ++t) waiting_[t] = graph.in_degree(t);
  }

  [[nodiscard]] std::size_t task_count() const { return graph_.task_count(); }
  [[nodiscard]] const dag::Task& task(TaskId t) const { return graph_.task(t); }
  [[nodiscard]] const dag::Resource& resource(dag::ResourceId r) const {
    return graph_.resources()[r];
  }
  [[nodiscard]] std::size_t resource_count() const { return graph_.resources().size(); }
  template <class F>
  void for_each_initial(F f) {
    for (TaskId t = 0; t < graph_.task_count(); ++t) {
      if (waiting_[t] == 0) f(t);
    }
  }
  std::uint32_t& waiting(TaskId t) { return waiting_[t]; }
  void started(TaskId t, Time now, Ref by) {
    out_.start[t] = now;
    out_.started_by[t] = by;
  }
  Ref ended(TaskId t, Time now, Ref) {
    out_.end[t] = now;
    return t;
  }
  template <class F>
  void for_each_successor(TaskId t, F f) {
    for (TaskId s : graph_.successors(t)) f(s);
  }
  void done_with(TaskId) {}
  void prefetch_end(TaskId, Ref) const {}
  void hold(Ref) {}
  void drop(Ref) {}

  [[noreturn]] void report_deadlock(std::size_t done, Time now) const {
    std::ostringstream msg;
    const auto n = graph_.task_count();
    msg << "deadlock at t=" << now.ns() << " ns: " << (n - done) << " of " << n
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

  Schedule take(std::uint64_t events, std::vector<std::vector<TaskId>> batches) {
    out_.makespan = Time::zero();
    for (const Time e : out_.end) out_.makespan = max(out_.makespan, e);
    out_.events = events;
    out_.batches = std::move(batches);
    return std::move(out_);
  }

 private:
  const dag::TaskGraph& graph_;
  Schedule out_;
  std::vector<std::uint32_t> waiting_;
};

}  // namespace

Schedule run_schedule(const dag::TaskGraph& graph, const ScheduleOptions& options) {
  Engine engine;
  return std::move(run_schedules(engine, {&graph}, {options}).front());
}

std::vector<Schedule> run_schedules(Engine& engine, const std::vector<const dag::TaskGraph*>& graphs,
                                    const std::vector<ScheduleOptions>& options) {
  if (graphs.size() != options.size()) throw std::logic_error("one ScheduleOptions per graph");
  std::vector<std::unique_ptr<WholeStore>> stores;
  std::vector<std::unique_ptr<detail::Scheduler<WholeStore>>> schedulers;
  for (std::size_t i = 0; i < graphs.size(); ++i) {
    if (!graphs[i]->finalized()) throw std::logic_error("run_schedules needs finalized graphs");
    stores.push_back(std::make_unique<WholeStore>(*graphs[i]));
    schedulers.push_back(
        std::make_unique<detail::Scheduler<WholeStore>>(engine, *stores.back(), options[i]));
  }
  for (auto& s : schedulers) s->prime();
  engine.run();
  std::vector<Schedule> out;
  for (std::size_t i = 0; i < schedulers.size(); ++i) {
    auto batches = schedulers[i]->finish();
    out.push_back(stores[i]->take(engine.events_processed(), std::move(batches)));
  }
  return out;
}

}  // namespace ssgd::sim
