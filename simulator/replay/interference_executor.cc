#include "simulator/replay/interference_executor.h"

#include <algorithm>
#include <cmath>

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

double InterferenceExecutor::queued_extra(std::int64_t nominal_ns) const {
  return plan_.concurrent * static_cast<double>(nominal_ns);
}

InterferenceExecutor::InterferenceExecutor(Engine& engine, TaskExecutor* inner,
                                           const InterferencePlan& plan)
    : engine_(engine), inner_(inner), plan_(plan) {
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

bool InterferenceExecutor::should_slow(const Running& r) const {
  if (r.tail) return false;
  const auto at = [](const std::vector<int>& v, std::int32_t rank) {
    const auto k = static_cast<std::size_t>(std::max(rank, 0));
    return k < v.size() ? v[k] : 0;
  };
  if (r.comm) return r.rank == dag::kAllRanks ? compute_total_ > 0 : at(compute_on_, r.rank) > 0;
  return comm_all_ > 0 || at(comm_on_, r.rank) > 0;
}

void InterferenceExecutor::count(const Running& r, int delta) {
  if (r.comm) {
    if (r.rank == dag::kAllRanks) {
      comm_all_ += delta;
    } else {
      comm_on(r.rank) += delta;
    }
  } else {
    compute_on(r.rank) += delta;
    compute_total_ += delta;
  }
}

void InterferenceExecutor::advance(Running& r, std::int64_t now) {
  const std::int64_t elapsed = now - r.since;
  r.since = now;
  if (elapsed <= 0) return;
  if (!r.comm && r.slowed) stats_.compute_slowed_ns += elapsed;
  const auto dt = static_cast<double>(elapsed);
  if (r.delegated && !r.tail) {
    if (r.slowed) r.overlapped += dt;
    return;
  }
  r.left = std::max(0.0, r.left - (r.slowed ? dt / (1 + r.factor) : dt));
}

void InterferenceExecutor::schedule_end(std::size_t slot, std::int64_t now) {
  Running& r = running_[slot];
  if (r.pending) engine_.cancel(r.event);
  r.pending = true;
  const double rate = r.slowed ? 1 + r.factor : 1;
  const auto ns = static_cast<std::int64_t>(std::llround(r.left * rate));
  r.event = engine_.schedule(Time(now + std::max<std::int64_t>(ns, 0)), end_, slot);
}

void InterferenceExecutor::update(std::size_t slot, std::int64_t now) {
  Running& r = running_[slot];
  advance(r, now);
  const bool slow = should_slow(r) && r.factor > 0;
  if (slow == r.slowed) return;
  r.slowed = slow;
  if (!r.delegated || r.tail) schedule_end(slot, now);
}

void InterferenceExecutor::refresh(const Running& changed, std::int64_t now) {
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
  r.slowed = false;
  r.left = r.overlapped * r.factor + (r.queued ? queued_extra(r.nominal) : 0.0);
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
