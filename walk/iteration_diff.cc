#include "walk/iteration_diff.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "common/error.h"

namespace ssgd::walk {
namespace {

using Key = std::tuple<std::int32_t, int, std::string, std::int64_t>;

Key key_of(const IterationTask& t) {
  const bool layered = t.kind == dag::TaskKind::kForward || t.kind == dag::TaskKind::kBackward;
  return {t.rank, static_cast<int>(t.kind), layered ? t.layer : "", t.index};
}

// The task with its times made relative to `origin_ns`.
IterationTask aligned(IterationTask t, std::int64_t origin_ns) {
  t.start_ns -= origin_ns;
  t.end_ns -= origin_ns;
  return t;
}

std::int64_t magnitude(std::int64_t v) { return v < 0 ? -v : v; }

}  // namespace

const char* to_string(DiffBy by) {
  switch (by) {
    case DiffBy::kStart: return "start";
    case DiffBy::kEnd: return "end";
    case DiffBy::kDuration: return "duration";
  }
  return "?";
}

std::int64_t DiffRow::diff(DiffBy by) const {
  switch (by) {
    case DiffBy::kStart: return start_diff_ns;
    case DiffBy::kEnd: return end_diff_ns;
    case DiffBy::kDuration: return duration_diff_ns;
  }
  return 0;
}

std::string task_label(const IterationTask& t) {
  switch (t.kind) {
    case dag::TaskKind::kForward: return "forward " + t.layer;
    case dag::TaskKind::kBackward: return "backward " + t.layer;
    case dag::TaskKind::kComm:
      return "all-reduce #" + std::to_string(t.index) + (t.layer.empty() ? "" : " (" + t.layer + ")");
    default: return to_string(t.kind);
  }
}

IterationDiff diff_iterations(const TraceIterations& measured, const TraceIterations& simulated,
                              const DiffOptions& options) {
  IterationDiff out;
  out.by = options.by;
  out.measured_iterations = static_cast<std::int64_t>(measured.iterations().size());
  if (options.iteration) {
    out.measured = measured.iteration(*options.iteration);
    out.measured_choice = "as asked (--iteration)";
  } else {
    out.measured = measured.median();
    out.measured_choice = "the median of " + std::to_string(out.measured_iterations) +
                          " by duration";
  }
  if (options.simulated_iteration) {
    out.simulated = simulated.iteration(*options.simulated_iteration);
    out.simulated_choice = "as asked (--simulated-iteration)";
  } else if (auto it = simulated.iterations().find(out.measured.number);
             it != simulated.iterations().end()) {
    out.simulated = it->second;
    out.simulated_choice = "the same number";
  } else {
    out.simulated = simulated.median();
    out.simulated_choice = "its median by duration (the measured number is not in it)";
  }

  auto keep = [&](const IterationTask& t) { return !options.rank || t.rank == *options.rank; };
  std::vector<IterationTask> m_tasks = measured.tasks(out.measured.number);
  std::vector<IterationTask> s_tasks = simulated.tasks(out.simulated.number);
  if (options.rank && std::none_of(m_tasks.begin(), m_tasks.end(), keep)) {
    throw InputError({measured.source(), std::nullopt, std::nullopt, "--rank"},
                     "rank " + std::to_string(*options.rank) + " has no tasks in iteration " +
                         std::to_string(out.measured.number));
  }
  std::map<Key, const IterationTask*> s_by_key;
  for (const auto& t : s_tasks) {
    if (keep(t)) s_by_key.emplace(key_of(t), &t);
  }
  for (const auto& t : m_tasks) {
    if (!keep(t)) continue;
    DiffRow row;
    row.measured = aligned(t, out.measured.start_ns);
    auto it = s_by_key.find(key_of(t));
    if (it == s_by_key.end()) {
      out.measured_only.push_back(std::move(row));
      continue;
    }
    row.simulated = aligned(*it->second, out.simulated.start_ns);
    s_by_key.erase(it);
    row.start_diff_ns = row.simulated->start_ns - row.measured->start_ns;
    row.end_diff_ns = row.simulated->end_ns - row.measured->end_ns;
    row.duration_diff_ns = row.simulated->busy_ns - row.measured->busy_ns;
    out.matched.push_back(std::move(row));
  }
  for (const auto& t : s_tasks) {
    if (keep(t) && s_by_key.count(key_of(t)) > 0) {
      DiffRow row;
      row.simulated = aligned(t, out.simulated.start_ns);
      out.simulated_only.push_back(std::move(row));
    }
  }
  std::stable_sort(out.matched.begin(), out.matched.end(), [&](const DiffRow& a, const DiffRow& b) {
    return magnitude(a.diff(options.by)) > magnitude(b.diff(options.by));
  });
  return out;
}

}  // namespace ssgd::walk
