#include "walk/iteration_tasks.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <utility>

#include "common/checked_math.h"
#include "common/error.h"

namespace ssgd::walk {
namespace {

// A task being filled: its first work sets start and end.
struct Builder {
  IterationTask task;
  bool has_work = false;
  // False (and the task unchanged) when its busy time or bytes would
  // overflow int64.
  [[nodiscard]] bool add(std::int64_t start_ns, std::int64_t end_ns, std::int64_t bytes) {
    const auto busy = checked_add(task.busy_ns, end_ns - start_ns);  // 0 <= start <= end
    const auto total_bytes = checked_add(task.bytes, bytes);
    if (!busy || !total_bytes) return false;
    task.start_ns = has_work ? std::min(task.start_ns, start_ns) : start_ns;
    task.end_ns = has_work ? std::max(task.end_ns, end_ns) : end_ns;
    task.busy_ns = *busy;
    task.bytes = *total_bytes;
    has_work = true;
    return true;
  }
};

}  // namespace

TraceIterations::TraceIterations(std::string source, TraceWalk walk)
    : source_(std::move(source)), walk_(std::move(walk)) {}

TraceIterations TraceIterations::read(const std::string& path, bool allow_truncated) {
  auto reader = trace::TraceReader::open(path);
  TraceIterations out(path, TraceWalk(reader, path, {.split_unmarked_iterations = false}));
  if (reader.truncated() && !allow_truncated) {
    throw trace::truncated_trace_error(reader,
                                       "; pass --allow-truncated to use the readable prefix");
  }
  for (const std::int32_t rank : out.walk_.ranks()) {
    for (const WalkIteration& it : out.walk_.iterations(rank)) {
      auto [span, added] =
          out.spans_.try_emplace(it.number, IterationSpan{it.number, it.start_ns, it.end_ns});
      if (!added) {
        span->second.start_ns = std::min(span->second.start_ns, it.start_ns);
        span->second.end_ns = std::max(span->second.end_ns, it.end_ns);
      }
    }
  }
  if (out.spans_.empty()) {
    throw InputError({path, std::nullopt, std::nullopt, "marker.name"},
                     "the trace has no iteration/<N> marker ranges: ssgd diff compares marked "
                     "iterations (mark them, e.g. with tracer/python's helper)");
  }
  return out;
}

const IterationSpan& TraceIterations::median() const {
  std::vector<const IterationSpan*> by_duration;
  for (const auto& [n, span] : spans_) by_duration.push_back(&span);
  std::stable_sort(by_duration.begin(), by_duration.end(),
                   [](const IterationSpan* a, const IterationSpan* b) {
                     return a->duration_ns() < b->duration_ns();
                   });
  return *by_duration[(by_duration.size() - 1) / 2];
}

const IterationSpan& TraceIterations::iteration(std::int64_t number) const {
  auto it = spans_.find(number);
  if (it == spans_.end()) {
    throw InputError({source_, std::nullopt, std::nullopt, "--iteration"},
                     "iteration " + std::to_string(number) + " is not in the trace (it marks " +
                         std::to_string(spans_.size()) + " iteration(s), numbers " +
                         std::to_string(spans_.begin()->first) + " to " +
                         std::to_string(spans_.rbegin()->first) + ")");
  }
  return it->second;
}

std::vector<IterationTask> TraceIterations::tasks(std::int64_t number) const {
  (void)iteration(number);  // throws for a number the trace lacks
  std::vector<IterationTask> out;
  for (const std::int32_t r : walk_.ranks()) {
    const auto& iterations = walk_.iterations(r);
    const auto found =
        std::find_if(iterations.begin(), iterations.end(),
                     [number](const WalkIteration& it) { return it.number == number; });
    if (found == iterations.end()) continue;
    const IterationWork work = walk_.iteration_work(r, *found);
    // One task per (kind, position): forward in layer order, backward in
    // reverse, as they run; comm by number; io, h2d and update one each. The
    // map's order is the tasks' (TaskKind lists the kinds in that order).
    std::map<std::pair<dag::TaskKind, std::int64_t>, Builder> tasks;
    auto task = [&](dag::TaskKind kind, std::int32_t layer, std::int64_t position) -> Builder& {
      auto [it, added] = tasks.try_emplace({kind, position});
      if (added) {
        it->second.task.rank = r;
        it->second.task.kind = kind;
        if (layer >= 0) it->second.task.layer = walk_.layers()[static_cast<std::size_t>(layer)];
      }
      return it->second;
    };
    auto layer_task = [&](dag::TaskKind kind, std::int32_t layer) -> Builder& {
      return task(kind, layer, kind == dag::TaskKind::kBackward ? -layer : layer);
    };
    for (const LayerRange& range : work.ranges) {
      Builder& b = layer_task(range.kind, range.layer);
      if (!b.has_work) b.task.start_ns = b.task.end_ns = range.start_ns;
    }
    auto add = [&](Builder& b, const TaskWork& w) {
      if (!b.add(w.start_ns, w.end_ns, w.bytes)) {
        throw InputError({source_, std::nullopt, std::nullopt, ""},
                         fmt::format("iteration {}, rank {}: the busy time or the bytes of one "
                                     "task exceed 2^63 - 1",
                                     number, r));
      }
    };
    std::vector<const TaskWork*> comms;
    for (const TaskWork& w : work.work) {
      if (w.kind == dag::TaskKind::kComm) {
        comms.push_back(&w);
      } else if (w.kind == dag::TaskKind::kForward || w.kind == dag::TaskKind::kBackward) {
        add(layer_task(w.kind, w.layer), w);
      } else {
        add(task(w.kind, -1, 0), w);
      }
    }
    std::stable_sort(comms.begin(), comms.end(), [](const TaskWork* a, const TaskWork* b) {
      return std::tie(a->communicator, a->sequence) < std::tie(b->communicator, b->sequence);
    });
    for (std::size_t k = 0; k < comms.size(); ++k) {
      Builder& b = task(dag::TaskKind::kComm, comms[k]->layer, static_cast<std::int64_t>(k));
      b.task.index = static_cast<std::int64_t>(k);
      add(b, *comms[k]);
    }
    for (auto& [key, b] : tasks) out.push_back(std::move(b.task));
  }
  return out;
}

}  // namespace ssgd::walk
