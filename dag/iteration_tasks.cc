#include "dag/iteration_tasks.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

#include "common/error.h"
#include "traces/kernel_names.h"
#include "traces/marker_names.h"

namespace ssgd::dag {
namespace {

namespace v1 = trace::v1;

// A task being filled: its first work sets start and end.
struct Builder {
  IterationTask task;
  bool has_work = false;
  void add(std::int64_t start_ns, std::int64_t end_ns, std::int64_t bytes) {
    task.start_ns = has_work ? std::min(task.start_ns, start_ns) : start_ns;
    task.end_ns = has_work ? std::max(task.end_ns, end_ns) : end_ns;
    task.busy_ns += end_ns - start_ns;
    task.bytes += bytes;
    has_work = true;
  }
};

int kind_order(TaskKind k) {
  switch (k) {
    case TaskKind::kIo: return 0;
    case TaskKind::kH2d: return 1;
    case TaskKind::kForward: return 2;
    case TaskKind::kBackward: return 3;
    case TaskKind::kComm: return 4;
    case TaskKind::kUpdate: return 5;
  }
  return 6;
}

}  // namespace

TraceIterations TraceIterations::read(const std::string& path, bool allow_truncated) {
  TraceIterations out;
  out.source_ = path;
  auto reader = trace::TraceReader::open(path);
  std::map<std::int32_t, std::unordered_map<std::uint64_t, std::int64_t>> launch_ns;
  std::map<std::int32_t, std::vector<std::pair<std::uint64_t, std::size_t>>> pending;
  v1::Event ev;
  std::int64_t record = 0;
  while (reader.next(ev)) {
    Rank& rank = out.ranks_[ev.rank()];
    auto add_work = [&](Work w, std::uint64_t correlation) {
      rank.work.push_back(w);
      if (correlation != 0) pending[ev.rank()].emplace_back(correlation, rank.work.size() - 1);
    };
    switch (ev.payload_case()) {
      case v1::Event::kMarker: {
        const auto& m = ev.marker();
        const trace::MarkerName mark = trace::parse_marker_name(m, path, record);
        if (mark.kind == trace::MarkerName::Kind::kIteration) {
          rank.iterations.emplace(mark.number, std::make_pair(m.start_ns(), m.end_ns()));
        } else if (mark.kind != trace::MarkerName::Kind::kOther) {
          rank.ranges.push_back({m.start_ns(), m.end_ns(), mark.layer,
                                 mark.kind == trace::MarkerName::Kind::kBackward});
        } else if (m.name() == "io") {
          rank.io.emplace_back(m.start_ns(), m.end_ns());
        }
        break;
      }
      case v1::Event::kKernel: {
        const auto& k = ev.kernel();
        if (trace::is_nccl_kernel(k.name())) {  // communication; see below
          rank.nccl_kernels.push_back({TaskKind::kComm, k.start_ns(), k.start_ns(), k.end_ns(),
                                       0, 0, rank.nccl_kernels.size()});
          rank.nccl_correlations.push_back(k.correlation_id());
          break;
        }
        add_work({TaskKind::kForward, k.start_ns(), k.start_ns(), k.end_ns(), 0, 0, 0},
                 k.correlation_id());
        break;
      }
      case v1::Event::kCollective: {
        const auto& c = ev.collective();
        rank.has_collectives = true;
        add_work({TaskKind::kComm, c.start_ns(), c.start_ns(), c.end_ns(), c.size_bytes(),
                  c.communicator_id(), c.sequence_number()},
                 c.correlation_id());
        break;
      }
      case v1::Event::kMemcpy: {
        const auto& c = ev.memcpy();
        if (c.kind() != v1::Memcpy::HTOD) break;
        add_work({TaskKind::kH2d, c.start_ns(), c.start_ns(), c.end_ns(), c.size_bytes(), 0, 0},
                 c.correlation_id());
        break;
      }
      case v1::Event::kApiCall:
        if (ev.api_call().correlation_id() != 0) {
          launch_ns[ev.rank()].emplace(ev.api_call().correlation_id(), ev.api_call().start_ns());
        }
        break;
      default:
        break;
    }
    ++record;
  }
  if (reader.truncated() && !allow_truncated) {
    throw trace::truncated_trace_error(reader, "; pass --allow-truncated to use the readable prefix");
  }
  // NCCL kernels are the rank's collectives only when it has no Collective
  // records of them (no NCCL plugin); they are never compute.
  for (auto& [r, rank] : out.ranks_) {
    if (rank.has_collectives) continue;
    for (std::size_t i = 0; i < rank.nccl_kernels.size(); ++i) {
      rank.work.push_back(rank.nccl_kernels[i]);
      if (rank.nccl_correlations[i] != 0) {
        pending[r].emplace_back(rank.nccl_correlations[i], rank.work.size() - 1);
      }
    }
  }
  // Work at its launch time, in launch order; ranges by start.
  for (auto& [r, rank] : out.ranks_) {
    const auto& launches = launch_ns[r];
    for (const auto& [correlation, index] : pending[r]) {
      auto it = launches.find(correlation);
      if (it != launches.end()) rank.work[index].host_ns = it->second;
    }
    std::stable_sort(rank.work.begin(), rank.work.end(),
                     [](const Work& a, const Work& b) { return a.host_ns < b.host_ns; });
    std::stable_sort(rank.ranges.begin(), rank.ranges.end(),
                     [](const Range& a, const Range& b) { return a.start_ns < b.start_ns; });
    for (const auto& [number, range] : rank.iterations) {
      auto [it, added] = out.spans_.try_emplace(number, IterationSpan{number, range.first, range.second});
      if (!added) {
        it->second.start_ns = std::min(it->second.start_ns, range.first);
        it->second.end_ns = std::max(it->second.end_ns, range.second);
      }
    }
  }
  if (out.spans_.empty()) {
    throw InputError({path, std::nullopt, std::nullopt, "marker.name"},
                     "the trace has no iteration/<N> marker ranges: ssgd diff compares marked "
                     "iterations (mark them, e.g. with tracer/python's helper)");
  }
  // Layer order: forward ranges by start (then rank), first appearance.
  std::vector<std::tuple<std::int64_t, std::int32_t, const std::string*>> forwards;
  for (const auto& [r, rank] : out.ranks_) {
    for (const auto& range : rank.ranges) {
      if (!range.backward) forwards.emplace_back(range.start_ns, r, &range.layer);
    }
  }
  std::stable_sort(forwards.begin(), forwards.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  for (const auto& f : forwards) {
    out.layer_order_.emplace(*std::get<2>(f), static_cast<std::int64_t>(out.layer_order_.size()));
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
  for (const auto& [r, rank] : ranks_) {
    auto found = rank.iterations.find(number);
    if (found == rank.iterations.end()) continue;
    const auto [s, e] = found->second;
    std::map<std::pair<TaskKind, std::string>, Builder> tasks;
    auto task = [&](TaskKind kind, const std::string& layer) -> Builder& {
      auto [it, added] = tasks.try_emplace({kind, layer});
      if (added) {
        it->second.task.rank = r;
        it->second.task.kind = kind;
        it->second.task.layer = layer;
      }
      return it->second;
    };
    std::vector<const Range*> ranges;
    for (const auto& range : rank.ranges) {
      if (range.start_ns < s || range.start_ns >= e) continue;
      ranges.push_back(&range);
      Builder& b = task(range.backward ? TaskKind::kBackward : TaskKind::kForward, range.layer);
      if (!b.has_work) b.task.start_ns = b.task.end_ns = range.start_ns;
    }
    for (const auto& [start, end] : rank.io) {
      if (start >= s && start < e) task(TaskKind::kIo, "").add(start, end, 0);
    }
    std::vector<std::pair<const Work*, std::string>> comms;
    for (const auto& w : rank.work) {
      if (w.host_ns < s || w.host_ns >= e) continue;
      // The innermost range open at the launch, and the latest-starting
      // backward range that had ended by then.
      const Range* holder = nullptr;
      const Range* ended_backward = nullptr;
      for (const Range* range : ranges) {
        if (range->start_ns > w.host_ns) break;
        if (w.host_ns < range->end_ns) {
          holder = range;
        } else if (range->backward) {
          ended_backward = range;
        }
      }
      if (w.kind == TaskKind::kComm) {
        const Range* by = holder && holder->backward ? holder : ended_backward;
        comms.emplace_back(&w, by ? by->layer : "");
      } else if (w.kind == TaskKind::kH2d) {
        task(TaskKind::kH2d, "").add(w.start_ns, w.end_ns, w.bytes);
      } else if (holder) {
        task(holder->backward ? TaskKind::kBackward : TaskKind::kForward, holder->layer)
            .add(w.start_ns, w.end_ns, 0);
      } else {
        task(TaskKind::kUpdate, "").add(w.start_ns, w.end_ns, 0);
      }
    }
    std::stable_sort(comms.begin(), comms.end(), [](const auto& a, const auto& b) {
      return std::tie(a.first->communicator, a.first->sequence) <
             std::tie(b.first->communicator, b.first->sequence);
    });
    std::vector<IterationTask> rank_tasks;
    for (auto& [key, b] : tasks) rank_tasks.push_back(b.task);
    for (std::size_t k = 0; k < comms.size(); ++k) {
      Builder b;
      b.task.rank = r;
      b.task.kind = TaskKind::kComm;
      b.task.layer = comms[k].second;
      b.task.index = static_cast<std::int64_t>(k);
      b.add(comms[k].first->start_ns, comms[k].first->end_ns, comms[k].first->bytes);
      rank_tasks.push_back(b.task);
    }
    // Forward in layer order, backward in reverse, as they run.
    auto position = [&](const IterationTask& t) -> std::int64_t {
      if (t.kind == TaskKind::kComm) return t.index;
      auto it = layer_order_.find(t.layer);
      const std::int64_t p = it == layer_order_.end() ? 0 : it->second;
      return t.kind == TaskKind::kBackward ? -p : p;
    };
    std::stable_sort(rank_tasks.begin(), rank_tasks.end(),
                     [&](const IterationTask& a, const IterationTask& b) {
                       const int ka = kind_order(a.kind), kb = kind_order(b.kind);
                       if (ka != kb) return ka < kb;
                       return position(a) < position(b);
                     });
    out.insert(out.end(), rank_tasks.begin(), rank_tasks.end());
  }
  return out;
}

}  // namespace ssgd::dag
