#include "simulator/replay/iteration_observer.h"

#include <algorithm>

namespace ssgd::sim {

IterationObserver::IterationObserver(std::int64_t ranks_built, std::int64_t iterations,
                                     std::int64_t updates,
                                     std::span<const std::int64_t> rank_weight,
                                     bool collectives_may_lag)
    : iteration_end_(static_cast<std::size_t>(iterations), Time::zero()),
      // Steady state: the first iteration may differ (nothing overlaps it),
      // so it is left out whenever there is more than one.
      breakdown_(ranks_built, iterations, updates, iterations > 1 ? 0 : -1, rank_weight) {
  if (collectives_may_lag) breakdown_.collectives_may_lag();
}

void IterationObserver::started(dag::TaskId id, const dag::Task& task, Time now) {
  breakdown_.started(task, now);
  if (task.kind == dag::TaskKind::kComm) comm_start_.emplace(id, now);
  if (task.kind == dag::TaskKind::kBackward && task.rank == 0) {
    backward_start_[{task.iteration, task.layer}] = now;  // the later micro-batch's
  }
}

void IterationObserver::ended(dag::TaskId id, const dag::Task& task, Time now) {
  breakdown_.ended(task, now);
  if (task.kind == dag::TaskKind::kUpdate) {
    auto& end = iteration_end_[static_cast<std::size_t>(task.iteration)];
    end = max(end, now);
  } else if (task.kind == dag::TaskKind::kComm) {
    const auto it = comm_start_.find(id);
    comm_.push_back({id, task, it->second, now});
    comm_start_.erase(it);
  }
}

std::vector<CommRun> IterationObserver::collectives() const {
  std::vector<CommRun> out = comm_;
  std::sort(out.begin(), out.end(), [](const CommRun& a, const CommRun& b) { return a.id < b.id; });
  return out;
}

}  // namespace ssgd::sim
