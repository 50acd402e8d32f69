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

}  // namespace ssgd::dag
