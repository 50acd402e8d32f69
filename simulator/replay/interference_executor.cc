#include "simulator/replay/interference_executor.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/collective_op.h"

namespace ssgd::sim {
namespace {

bool is_compute(dag::TaskKind kind) {
  return kind == dag::TaskKind::kForward || kind == dag::TaskKind::kBackward ||
         kind == dag::TaskKind::kUpdate;
}

double factor_of(const InterferencePlan& plan, const dag::Task& task) {
  const auto in = [&](const std::vector<double>& v) {
    return task.layer >= 0 && static_cast<std::size_t>(task.layer) < v.size()
               ? v[static_cast<std::size_t>(task.layer)]
               : plan.compute;
  };
  switch (task.kind) {
    case dag::TaskKind::kForward: return in(plan.forward);
    case dag::TaskKind::kBackward: return in(plan.backward);
    case dag::TaskKind::kUpdate: return plan.update;
    default: return plan.comm;
  }
}

}  // namespace

double InterferenceExecutor::demand_of(const dag::Task& task) const {
  const bool grouped =
      task.group >= 0 && static_cast<std::size_t>(task.group) < plan_.comm_through.size();
  const double through = grouped ? plan_.comm_through[static_cast<std::size_t>(task.group)]
                                 : bytes_through_rank(CollectiveOp::kAllReduce,
                                                      static_cast<double>(task.bytes), workers_);
  // A collective with no time of its own is taken as bound by the CPU; one
  // the flow network runs by its time alone on the network (isolated_time).
  if (task.duration.ns() <= 0) return 1;
  const double u = plan_.cpu_per_byte * through / static_cast<double>(task.duration.ns());
  return std::min(u, 1.0);
}

double InterferenceExecutor::queued_extra(std::int64_t nominal_ns) const {
  return plan_.concurrent * static_cast<double>(nominal_ns);
}

InterferenceExecutor::InterferenceExecutor(Engine& engine, TaskExecutor* inner,
                                           const InterferencePlan& plan, std::int64_t workers)
    : engine_(engine), inner_(inner), plan_(plan), workers_(std::max<std::int64_t>(workers, 1)) {
  end_ = engine_.register_handler(
      [this](Engine&, std::uint64_t slot) { finish(static_cast<std::size_t>(slot)); });
}

bool InterferenceExecutor::handles(const dag::Task& task) const {
  return task.kind == dag::TaskKind::kComm || is_compute(task.kind);
}

int& InterferenceExecutor::compute_on(std::int32_t rank) {
  const auto r = static_cast<std::size_t>(std::max(rank, 0));
  if (r >= compute_on_.size()) compute_on_.resize(r + 1, 0);
  return compute_on_[r];
}

int& InterferenceExecutor::comm_on(std::int32_t rank) {
  const auto r = static_cast<std::size_t>(std::max(rank, 0));
  if (r >= comm_on_.size()) comm_on_.resize(r + 1, 0);
  return comm_on_[r];
}

double InterferenceExecutor::level_on(std::int32_t rank) const {
  const auto k = static_cast<std::size_t>(std::max(rank, 0));
  return level_with(rank == dag::kAllRanks || k >= compute_on_.size() ? 0 : compute_on_[k], rank);
}

double InterferenceExecutor::level_with(int computing, std::int32_t rank) const {
  // Max-min sharing of one CPU: the collectives on the rank in ascending
  // demand take what they want while it is below an equal share of what is
  // left; the rest (every compute task, wanting all) split the remainder.
  std::vector<double>& all = demands_;
  all.clear();
  for (const std::size_t slot : comm_live_) {
    const Running& c = running_[slot];
    if (c.tail || (c.rank != dag::kAllRanks && c.rank != rank)) continue;
    all.push_back(c.demand);
  }
  std::sort(all.begin(), all.end());
  double left = 1;
  auto threads = static_cast<double>(all.size()) + computing;
  for (const double d : all) {
    if (d * threads > left) break;
    left -= d;
    threads -= 1;
  }
  return threads > 0 ? left / threads : 1.0;
}

double InterferenceExecutor::comm_rate_on(const Running& r, std::int32_t rank) const {
  return std::min(1.0, level_on(rank) / r.demand);
}

double InterferenceExecutor::stretch_of(const Running& r) const {
  if (r.tail) return 1;
  const auto at = [](const std::vector<int>& v, std::int32_t rank) {
    const auto k = static_cast<std::size_t>(std::max(rank, 0));
    return k < v.size() ? v[k] : 0;
  };
  if (!plan_.demand) {
    const bool beside =
        r.comm ? (r.rank == dag::kAllRanks ? compute_total_ > 0 : at(compute_on_, r.rank) > 0)
               : comm_all_ > 0 || at(comm_on_, r.rank) > 0;
    return beside && r.factor > 0 ? 1 + r.factor : 1;
  }
  double rate = 1;
  if (!r.comm) {
    rate = std::min(1.0, level_on(r.rank));
  } else if (r.rank != dag::kAllRanks) {
    rate = comm_rate_on(r, r.rank);
  } else if (comm_ranked_ == 0) {
    // Only collectives of all ranks: the slowest rank is one that computes most.
    rate = std::min(1.0, level_with(most_computing_, dag::kAllRanks) / r.demand);
  } else {
    // The slowest of the ranks: those with compute or collectives of their
    // own, and any other (only the collectives of all ranks on it).
    rate = comm_rate_on(r, dag::kAllRanks);
    const std::size_t ranks = std::max(compute_on_.size(), comm_on_.size());
    for (std::size_t k = 0; k < ranks; ++k) {
      if (at(compute_on_, static_cast<std::int32_t>(k)) > 0 ||
          at(comm_on_, static_cast<std::int32_t>(k)) > 0) {
        rate = std::min(rate, comm_rate_on(r, static_cast<std::int32_t>(k)));
      }
    }
  }
  return rate > 0 ? 1 / rate : 1;
}

void InterferenceExecutor::count(const Running& r, int delta) {
  if (r.comm) {
    if (r.rank == dag::kAllRanks) {
      comm_all_ += delta;
    } else {
      comm_on(r.rank) += delta;
      comm_ranked_ += delta;
    }
  } else {
    int& on = compute_on(r.rank);
    const int before = on;
    on += delta;
    compute_total_ += delta;
    // Ranks by how many compute tasks they run (ranks at 0 not counted).
    const auto need = static_cast<std::size_t>(std::max(before, on)) + 1;
    if (compute_ranks_.size() < need) compute_ranks_.resize(need, 0);
    if (before > 0) --compute_ranks_[static_cast<std::size_t>(before)];
    if (on > 0) ++compute_ranks_[static_cast<std::size_t>(on)];
    most_computing_ = std::max(most_computing_, on);
    while (most_computing_ > 0 && compute_ranks_[static_cast<std::size_t>(most_computing_)] == 0) {
      --most_computing_;
    }
  }
}

void InterferenceExecutor::advance(Running& r, std::int64_t now) {
  const std::int64_t elapsed = now - r.since;
  r.since = now;
  if (elapsed <= 0) return;
  const bool slowed = r.stretch != 1;
  if (!r.comm && slowed) stats_.compute_slowed_ns += elapsed;
  const auto dt = static_cast<double>(elapsed);
  if (r.delegated && !r.tail) {
    if (slowed) {
      r.overlapped += dt;
      r.lag += dt * (r.stretch - 1);
    }
    return;
  }
  r.left = std::max(0.0, r.left - (slowed ? dt / r.stretch : dt));
}

void InterferenceExecutor::schedule_end(std::size_t slot, std::int64_t now) {
  Running& r = running_[slot];
  if (r.pending) engine_.cancel(r.event);
  r.pending = true;
  const auto ns = static_cast<std::int64_t>(std::llround(r.left * r.stretch));
  r.event = engine_.schedule(Time(now + std::max<std::int64_t>(ns, 0)), end_, slot);
}

void InterferenceExecutor::update(std::size_t slot, std::int64_t now) {
  Running& r = running_[slot];
  advance(r, now);
  const double stretch = stretch_of(r);
  if (stretch == r.stretch) return;
  r.stretch = stretch;
  if (!r.delegated || r.tail) schedule_end(slot, now);
}

void InterferenceExecutor::refresh(const Running& changed, std::int64_t now) {
  if (plan_.demand) {
    // A rank's shares change for every task on it, of either kind.
    const auto on = [&](const Running& r) {
      return changed.rank == dag::kAllRanks || r.rank == dag::kAllRanks || r.rank == changed.rank;
    };
    for (const std::size_t slot : compute_live_) {
      if (on(running_[slot])) update(slot, now);
    }
    for (const std::size_t slot : comm_live_) {
      if (&running_[slot] != &changed && on(running_[slot])) update(slot, now);
    }
    return;
  }
  if (changed.comm) {
    for (const std::size_t slot : compute_live_) {
      if (changed.rank == dag::kAllRanks || running_[slot].rank == changed.rank) update(slot, now);
    }
  } else {
    for (const std::size_t slot : comm_live_) update(slot, now);
  }
}

void InterferenceExecutor::enlist(std::size_t slot) {
  auto& list = running_[slot].comm ? comm_live_ : compute_live_;
  running_[slot].pos = list.size();
  list.push_back(slot);
}

void InterferenceExecutor::delist(std::size_t slot) {
  auto& list = running_[slot].comm ? comm_live_ : compute_live_;
  const std::size_t pos = running_[slot].pos;
  list[pos] = list.back();
  running_[list[pos]].pos = pos;
  list.pop_back();
}

std::size_t InterferenceExecutor::allocate() {
  if (!free_.empty()) {
    const std::size_t slot = free_.back();
    free_.pop_back();
    return slot;
  }
  running_.emplace_back();
  return running_.size() - 1;
}

void InterferenceExecutor::start(dag::TaskId id, const dag::Task& task,
                                 std::function<void()> finished) {
  start_waited(id, task, false, std::move(finished));
}

void InterferenceExecutor::start_waited(dag::TaskId id, const dag::Task& task, bool waited,
                                        std::function<void()> finished) {
  const std::int64_t now = engine_.now().ns();
  const std::size_t slot = allocate();
  Running& r = running_[slot];
  r = Running{};
  r.finished = std::move(finished);
  r.started = r.since = now;
  r.comm = task.kind == dag::TaskKind::kComm;
  r.rank = task.rank;
  r.factor = factor_of(plan_, task);
  r.delegated = r.comm && inner_ != nullptr && inner_->handles(task);
  r.queued = r.comm && waited && plan_.concurrent > 0;
  if (r.comm && plan_.demand) r.demand = demand_of(task);
  if (!r.delegated) {
    r.left = static_cast<double>(task.duration.ns());
    r.nominal = task.duration.ns();
    if (r.queued) r.left += queued_extra(r.nominal);
  }
  count(r, +1);
  enlist(slot);
  // The others first (the new task's arrival changes what they run beside),
  // then the new one: nothing else runs at the same instant in between.
  refresh(running_[slot], now);
  update(slot, now);
  if (running_[slot].delegated) {
    inner_->start(id, task, [this, slot] { network_done(slot); });
  } else {
    schedule_end(slot, now);
  }
}

void InterferenceExecutor::network_done(std::size_t slot) {
  const std::int64_t now = engine_.now().ns();
  Running& r = running_[slot];
  advance(r, now);
  r.nominal = now - r.started;
  r.tail = true;
  r.stretch = 1;
  // demand: its CPU is no longer shared (its tail is the work the CPU held back).
  if (plan_.demand) refresh(r, now);
  r.left =
      (plan_.demand ? r.lag : r.overlapped * r.factor) + (r.queued ? queued_extra(r.nominal) : 0.0);
  schedule_end(slot, now);
}

void InterferenceExecutor::finish(std::size_t slot) {
  const std::int64_t now = engine_.now().ns();
  Running& r = running_[slot];
  r.pending = false;
  const std::int64_t took = now - r.started;
  if (r.comm) {
    if (r.queued) {
      ++stats_.comm_queued;
      stats_.comm_queued_added_ns += std::llround(queued_extra(r.nominal));
    }
    ++stats_.comm_tasks;
    stats_.comm_ns += r.nominal;
    stats_.comm_added_ns += took - r.nominal;
  } else {
    ++stats_.compute_tasks;
    stats_.compute_ns += r.nominal;
    stats_.compute_added_ns += took - r.nominal;
  }
  advance(r, now);
  count(r, -1);
  delist(slot);
  std::function<void()> done = std::move(r.finished);
  free_.push_back(slot);
  refresh(running_[slot], now);
  done();
}

}  // namespace ssgd::sim
