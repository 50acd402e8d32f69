#include "dag/time_breakdown.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <vector>

namespace ssgd::dag {
namespace {

enum Class : std::uint8_t { kCompute = 0, kIo = 1, kComm = 2 };

struct Edge {
  std::int64_t t;
  std::int8_t delta;
  Class cls;
};

Class class_of(TaskKind k) {
  switch (k) {
    case TaskKind::kIo:
    case TaskKind::kH2d: return kIo;
    case TaskKind::kComm: return kComm;
    default: return kCompute;
  }
}

bool edge_before(const Edge& a, const Edge& b) {
  return a.t != b.t ? a.t < b.t : a.delta < b.delta;
}

// Sweeps interval edges sorted by edge_before and splits [from, to) by class.
std::array<std::int64_t, 4> sweep(const std::vector<Edge>& edges, std::int64_t from,
                                  std::int64_t to) {
  std::array<std::int64_t, 4> out{};  // compute, io, comm, idle
  std::array<int, 3> active{};
  std::int64_t cursor = from;
  auto account = [&](std::int64_t until) {
    until = std::clamp(until, from, to);
    if (until <= cursor) return;
    const int cls = active[kCompute] > 0 ? 0 : active[kIo] > 0 ? 1 : active[kComm] > 0 ? 2 : 3;
    out[cls] += until - cursor;
    cursor = until;
  };
  for (const Edge& e : edges) {
    account(e.t);
    active[e.cls] += e.delta;
  }
  account(to);
  return out;
}

}  // namespace

TimeBreakdown average_breakdown(const TaskGraph& graph, const ScheduledTimes& times,
                                std::span<const Time> window_start,
                                std::span<const Time> window_end, std::int64_t iterations,
                                std::span<const std::int64_t> weight) {
  const auto P = window_start.size();
  if (window_end.size() != P || P == 0 || iterations < 1 ||
      (!weight.empty() && weight.size() != P)) {
    throw std::invalid_argument("average_breakdown: bad window, weights or iteration count");
  }
  std::int64_t ranks = 0;  // the ranks the built ones stand for
  for (std::size_t r = 0; r < P; ++r) {
    const std::int64_t w = weight.empty() ? 1 : weight[r];
    if (w < 1) throw std::invalid_argument("average_breakdown: a rank's weight is below 1");
    ranks += w;
  }
  std::vector<std::vector<Edge>> per_rank(P);
  std::vector<Edge> shared;  // collectives involve every rank
  for (TaskId t = 0; t < graph.task_count(); ++t) {
    const Task& task = graph.task(t);
    if (times.end[t] <= times.start[t]) continue;
    const Class cls = class_of(task.kind);
    auto& out = task.rank == kAllRanks ? shared : per_rank.at(static_cast<std::size_t>(task.rank));
    out.push_back({times.start[t].ns(), +1, cls});
    out.push_back({times.end[t].ns(), -1, cls});
  }
  // Collective edges are sorted once and merged into each rank's sorted edges.
  std::sort(shared.begin(), shared.end(), edge_before);
  std::array<std::int64_t, 4> sum{};
  std::vector<Edge> merged;
  for (std::size_t r = 0; r < P; ++r) {
    auto& edges = per_rank[r];
    std::sort(edges.begin(), edges.end(), edge_before);
    merged.resize(edges.size() + shared.size());
    std::merge(edges.begin(), edges.end(), shared.begin(), shared.end(), merged.begin(),
               edge_before);
    const auto part = sweep(merged, window_start[r].ns(), window_end[r].ns());
    const std::int64_t w = weight.empty() ? 1 : weight[r];
    for (int k = 0; k < 4; ++k) sum[k] += part[k] * w;
  }
  const auto denom = ranks * iterations;
  auto avg = [&](std::int64_t v) { return Duration((v + denom / 2) / denom); };
  return {avg(sum[0]), avg(sum[1]), avg(sum[2]), avg(sum[3])};
}

OnlineBreakdown::OnlineBreakdown(std::int64_t ranks, std::int64_t iterations, std::int64_t updates,
                                 std::int64_t window_from, std::span<const std::int64_t> weight)
    : ranks_(static_cast<std::size_t>(ranks)),
      weight_(weight.begin(), weight.end()),
      iterations_(iterations),
      updates_(updates),
      from_(window_from) {
  if (ranks < 1 || iterations < 1 || updates < 1 || window_from < -1 ||
      (window_from >= 0 && window_from >= iterations - 1) ||
      (!weight.empty() && weight.size() != ranks_.size())) {
    throw std::invalid_argument("OnlineBreakdown: bad ranks, iterations, updates or window");
  }
  if (weight_.empty()) weight_.assign(ranks_.size(), 1);
  for (auto w : weight_) {
    if (w < 1) throw std::invalid_argument("OnlineBreakdown: a rank's weight is below 1");
  }
  if (from_ < 0) {
    for (auto& r : ranks_) r.state = 1;
  }
}

std::int64_t OnlineBreakdown::comm_before(std::int64_t t) const {
  // The closed intervals that start before t, then the running one.
  const auto k = static_cast<std::size_t>(
      std::lower_bound(comm_start_.begin(), comm_start_.end(), t) - comm_start_.begin());
  std::int64_t covered = 0;
  if (k > 0) covered = comm_cum_[k - 1] + (std::min(t, comm_end_[k - 1]) - comm_start_[k - 1]);
  if (running_ > 0 && running_since_ < t) covered += t - running_since_;
  return covered;
}

void OnlineBreakdown::account(Rank& rank, std::int64_t until) {
  if (until <= rank.cursor) return;
  if (rank.state == 1) {
    if (rank.compute > 0) {
      rank.sum[0] += until - rank.cursor;
    } else if (rank.io > 0) {
      rank.sum[1] += until - rank.cursor;
    } else {
      const Idle idle{static_cast<std::size_t>(&rank - ranks_.data()), rank.cursor, until};
      if (lag_ && until > known_) {
        waiting_.push_back(idle);
      } else {
        add_idle(rank.sum, idle);
      }
    }
  }
  rank.cursor = until;
}

void OnlineBreakdown::add_idle(std::array<std::int64_t, 4>& sum, const Idle& idle) const {
  const std::int64_t comm = comm_before(idle.until) - comm_before(idle.from);
  sum[2] += comm;
  sum[3] += idle.until - idle.from - comm;
}

void OnlineBreakdown::started(const Task& task, Time now) {
  if (task.rank == kAllRanks) {
    if (running_++ == 0) running_since_ = now.ns();
    return;
  }
  Rank& rank = ranks_.at(static_cast<std::size_t>(task.rank));
  account(rank, now.ns());
  switch (class_of(task.kind)) {
    case kCompute: ++rank.compute; break;
    case kIo: ++rank.io; break;
    case kComm: throw std::logic_error("OnlineBreakdown: a collective of one rank");
  }
}

void OnlineBreakdown::ended(const Task& task, Time now) {
  if (task.rank == kAllRanks) {
    if (--running_ == 0 && now.ns() > running_since_) {
      comm_cum_.push_back((comm_cum_.empty() ? 0 : comm_cum_.back()) +
                          (comm_end_.empty() ? 0 : comm_end_.back() - comm_start_.back()));
      comm_start_.push_back(running_since_);
      comm_end_.push_back(now.ns());
    }
    if (lag_ && running_ == 0) {
      // No collective left to report starts before this one's end.
      known_ = std::max(known_, now.ns());
      std::erase_if(waiting_, [this](const Idle& idle) {
        if (idle.until > known_) return false;
        add_idle(ranks_[idle.rank].sum, idle);
        return true;
      });
    }
    return;
  }
  Rank& rank = ranks_.at(static_cast<std::size_t>(task.rank));
  account(rank, now.ns());
  if (class_of(task.kind) == kCompute) {
    --rank.compute;
  } else {
    --rank.io;
  }
  if (task.kind != TaskKind::kUpdate) return;
  // The rank's window opens at the end of its last update of iteration
  // `from_` and closes at the end of its last update of the last iteration.
  const std::int64_t opens = rank.state == 0 ? from_ : iterations_ - 1;
  if (rank.state == 2 || task.iteration != opens) return;
  if (++rank.updates_seen == updates_) {
    rank.updates_seen = 0;
    ++rank.state;
  }
}

TimeBreakdown OnlineBreakdown::result() const {
  std::array<std::int64_t, 4> sum{};
  std::int64_t ranks = 0;
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    if (ranks_[r].state != 2) throw std::logic_error("OnlineBreakdown: a rank's window is open");
    for (int k = 0; k < 4; ++k) sum[k] += ranks_[r].sum[k] * weight_[r];
    ranks += weight_[r];
  }
  // Idle spells still waiting for collectives: all are known now.
  for (const Idle& idle : waiting_) {
    std::array<std::int64_t, 4> late{};
    add_idle(late, idle);
    for (int k = 0; k < 4; ++k) sum[k] += late[k] * weight_[idle.rank];
  }
  const std::int64_t steady = iterations_ - 1 - from_;
  const auto denom = ranks * steady;
  auto avg = [&](std::int64_t v) { return Duration((v + denom / 2) / denom); };
  return {avg(sum[0]), avg(sum[1]), avg(sum[2]), avg(sum[3])};
}

}  // namespace ssgd::dag
