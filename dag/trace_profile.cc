#include "dag/trace_profile.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <unordered_map>

#include "common/error.h"
#include "traces/kernel_names.h"
#include "traces/marker_names.h"

namespace ssgd::dag {
namespace {

namespace v1 = ssgd::trace::v1;

enum class Phase { kForward, kBackward };

struct Range {
  std::int64_t start_ns;
  std::int64_t end_ns;
  std::int32_t layer;  // index into layer order
  Phase phase;
};

struct IterationRange {
  std::int64_t start_ns;
  std::int64_t end_ns;
  std::int64_t number;
};

struct RankData {
  std::vector<IterationRange> iterations;
  std::vector<Range> ranges;
  struct Work {
    std::int64_t host_ns;
    std::int64_t duration_ns;
    std::int64_t bytes;
    bool collective;
    bool optimizer = false;  // a kernel whose name says it is an optimizer step
  };
  std::vector<Work> work;
  // NCCL kernels, kept apart: with Collective records (ssgd's NCCL plugin,
  // or an import) they are the same operations again and are dropped; a
  // rank without any becomes communication of unknown size from them.
  std::vector<Work> nccl_kernels;
  std::vector<std::pair<std::uint64_t, std::size_t>> nccl_pending;  // correlation -> index
  bool has_collectives = false;
  std::unordered_map<std::uint64_t, std::int64_t> launch_ns;  // correlation id -> API call start
  std::vector<std::pair<std::uint64_t, std::size_t>> pending;  // correlation id -> work index
};

struct LayerAccumulator {
  std::int64_t forward_ns = 0;
  std::int64_t backward_ns = 0;
  std::int64_t comm_ns = 0;
  std::int64_t bytes = 0;
};

// Iterations of a rank without iteration markers, from its work in launch
// order; `how` says which rule found them. An iteration ends just after the
// launch of its end mark, where the next one starts; the first starts with
// the trace.
//   1. Optimizer steps: each run of optimizer kernels (no other work
//      between them) ends an iteration.
//   2. Collective boundaries: the smallest K such that the collectives'
//      sizes repeat with period K over at least two periods; every K-th
//      collective ends an iteration.
// Work after the last end mark is a partial iteration and left out. Empty
// when neither rule applies.
std::vector<IterationRange> fallback_iterations(const std::vector<RankData::Work>& work,
                                                std::string& how) {
  std::vector<std::size_t> ends;  // index of the work item that ends each iteration
  for (std::size_t i = 0; i < work.size(); ++i) {
    if (work[i].optimizer && (i + 1 == work.size() || !work[i + 1].optimizer)) ends.push_back(i);
  }
  if (!ends.empty()) {
    how = "after each optimizer step (kernels named like adam, sgd or multi_tensor_apply)";
  } else {
    std::vector<std::size_t> coll;
    for (std::size_t i = 0; i < work.size(); ++i) {
      if (work[i].collective) coll.push_back(i);
    }
    const std::size_t n = coll.size();
    for (std::size_t k = 1; 2 * k <= n && ends.empty(); ++k) {
      bool periodic = true;
      for (std::size_t i = 0; i + k < n && periodic; ++i) {
        periodic = work[coll[i]].bytes == work[coll[i + k]].bytes;
      }
      if (!periodic) continue;
      for (std::size_t j = k - 1; j < n; j += k) ends.push_back(coll[j]);
      how = "every " + std::to_string(k) + " collective(s), the period of their sizes";
    }
  }
  std::vector<IterationRange> out;
  // Each iteration starts just after the previous end mark was launched, so
  // that the layer ranges opened before its first launch are inside it.
  std::int64_t start = std::numeric_limits<std::int64_t>::min();
  for (std::size_t e = 0; e < ends.size(); ++e) {
    const std::int64_t end = work[ends[e]].host_ns + 1;
    out.push_back({start, end, static_cast<std::int64_t>(e)});
    start = end;
  }
  return out;
}

}  // namespace

TraceProfileResult profile_from_trace(trace::TraceReader& reader, const std::string& source) {
  TraceProfileResult out;
  std::map<std::int32_t, RankData> ranks;
  std::vector<std::string> layer_order;
  std::unordered_map<std::string, std::int32_t> layer_index;
  std::vector<std::pair<std::string, std::int64_t>> backward_names;  // resolved after reading

  struct PendingRange {
    std::int32_t rank;
    std::string name;
    std::int64_t start, end;
    bool backward;
  };
  std::vector<PendingRange> layer_ranges;
  std::vector<std::pair<std::int64_t, std::int64_t>> first_forward;  // (start, order) for sorting

  v1::Event ev;
  std::int64_t record = 0;
  while (reader.next(ev)) {
    RankData& rd = ranks[ev.rank()];
    switch (ev.payload_case()) {
      case v1::Event::kMarker: {
        const auto& m = ev.marker();
        const trace::MarkerName mark = trace::parse_marker_name(m, source, record);
        if (mark.kind == trace::MarkerName::Kind::kIteration) {
          rd.iterations.push_back({m.start_ns(), m.end_ns(), mark.number});
        } else if (mark.kind != trace::MarkerName::Kind::kOther) {
          layer_ranges.push_back({ev.rank(), mark.layer, m.start_ns(), m.end_ns(),
                                  mark.kind == trace::MarkerName::Kind::kBackward});
        }
        break;
      }
      case v1::Event::kKernel: {
        const auto& k = ev.kernel();
        if (trace::is_nccl_kernel(k.name())) {
          rd.nccl_kernels.push_back({k.start_ns(), k.end_ns() - k.start_ns(), 0, true});
          if (k.correlation_id() != 0) {
            rd.nccl_pending.emplace_back(k.correlation_id(), rd.nccl_kernels.size() - 1);
          }
          break;
        }
        rd.work.push_back({k.start_ns(), k.end_ns() - k.start_ns(), 0, false,
                           trace::is_optimizer_kernel(k.name())});
        if (k.correlation_id() != 0) rd.pending.emplace_back(k.correlation_id(), rd.work.size() - 1);
        break;
      }
      case v1::Event::kCollective: {
        const auto& c = ev.collective();
        rd.has_collectives = true;
        rd.work.push_back({c.start_ns(), c.end_ns() - c.start_ns(), c.size_bytes(), true});
        if (c.correlation_id() != 0) rd.pending.emplace_back(c.correlation_id(), rd.work.size() - 1);
        break;
      }
      case v1::Event::kApiCall:
        if (ev.api_call().correlation_id() != 0) {
          rd.launch_ns.emplace(ev.api_call().correlation_id(), ev.api_call().start_ns());
        }
        break;
      default:
        break;
    }
    ++record;
  }

  // Layer order: forward ranges by start time (earliest first).
  std::vector<const PendingRange*> forwards;
  for (const auto& r : layer_ranges) {
    if (!r.backward) forwards.push_back(&r);
  }
  if (forwards.empty()) {
    throw InputError({source, std::nullopt, std::nullopt, "marker.name"},
                     "the trace has no forward/<layer> marker ranges, so its layers are unknown "
                     "(mark them, e.g. with tracer/python's helper)");
  }
  std::stable_sort(forwards.begin(), forwards.end(), [](auto* a, auto* b) {
    return a->start != b->start ? a->start < b->start : a->rank < b->rank;
  });
  for (const auto* f : forwards) {
    if (layer_index.emplace(f->name, static_cast<std::int32_t>(layer_order.size())).second) {
      layer_order.push_back(f->name);
    }
  }
  std::int64_t unknown_backward = 0;
  for (const auto& r : layer_ranges) {
    auto it = layer_index.find(r.name);
    if (it == layer_index.end()) {
      ++unknown_backward;
      continue;
    }
    ranks[r.rank].ranges.push_back({r.start, r.end, it->second,
                                    r.backward ? Phase::kBackward : Phase::kForward});
  }
  if (unknown_backward > 0) {
    out.warnings.push_back(std::to_string(unknown_backward) +
                           " backward ranges name layers with no forward range; ignored");
  }

  // NCCL kernels: dropped where Collective records describe the same
  // operations; a rank with none gets its communication from them.
  std::int64_t nccl_dropped = 0;
  for (auto& [rank, rd] : ranks) {
    if (rd.nccl_kernels.empty()) continue;
    if (rd.has_collectives) {
      nccl_dropped += static_cast<std::int64_t>(rd.nccl_kernels.size());
      continue;
    }
    out.warnings.push_back(
        "rank " + std::to_string(rank) + ": no NCCL collective records (was the NCCL profiler "
        "plugin loaded?); its " + std::to_string(rd.nccl_kernels.size()) +
        " NCCL kernels give the communication times, with unknown sizes (grad_bytes 0)");
    const std::size_t base = rd.work.size();
    rd.work.insert(rd.work.end(), rd.nccl_kernels.begin(), rd.nccl_kernels.end());
    for (const auto& [corr, idx] : rd.nccl_pending) rd.pending.emplace_back(corr, base + idx);
  }
  out.nccl_kernels_dropped = nccl_dropped;

  // Every rank's work at its launch time, in launch order.
  for (auto& [rank, rd] : ranks) {
    for (auto& [corr, idx] : rd.pending) {
      auto it = rd.launch_ns.find(corr);
      if (it != rd.launch_ns.end()) rd.work[idx].host_ns = it->second;
    }
    std::sort(rd.work.begin(), rd.work.end(),
              [](const auto& a, const auto& b) { return a.host_ns < b.host_ns; });
  }
  // Ranks without iteration markers: split at optimizer steps, else at the
  // period of their collectives (fallback_iterations).
  for (auto& [rank, rd] : ranks) {
    if (!rd.iterations.empty() || rd.work.empty()) continue;
    std::string how;
    rd.iterations = fallback_iterations(rd.work, how);
    if (!rd.iterations.empty()) {
      out.warnings.push_back("rank " + std::to_string(rank) +
                             " has no iteration/<N> markers: its iterations were split " + how +
                             " (" + std::to_string(rd.iterations.size()) + " found)");
    }
  }

  const auto L = layer_order.size();
  std::vector<LayerAccumulator> acc(L);
  std::int64_t samples = 0;  // rank-iterations accumulated
  std::int64_t max_iterations = 0;
  for (auto& [rank, rd] : ranks) {
    if (rd.iterations.empty()) continue;
    ++out.ranks;
    std::sort(rd.iterations.begin(), rd.iterations.end(),
              [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
    std::sort(rd.ranges.begin(), rd.ranges.end(),
              [](const Range& a, const Range& b) { return a.start_ns < b.start_ns; });
    max_iterations = std::max<std::int64_t>(max_iterations, rd.iterations.size());
    const std::size_t first = rd.iterations.size() > 1 ? 1 : 0;
    for (std::size_t i = first; i < rd.iterations.size(); ++i) {
      const auto& iter = rd.iterations[i];
      ++samples;
      // One pass over the iteration's work in launch order, with the ranges
      // that have started so far: `open` holds those still running, so the
      // holder of a launch is the latest-starting open range. Linear in the
      // work and ranges, apart from the (shallow) nesting depth.
      std::int32_t last_backward = -1;  // latest-starting layer whose backward has ended
      std::int64_t last_backward_start = 0;
      auto ended = [&](const Range& r) {
        if (r.phase == Phase::kBackward && (last_backward < 0 || r.start_ns >= last_backward_start)) {
          last_backward = r.layer;
          last_backward_start = r.start_ns;
        }
      };
      std::vector<const Range*> open;
      auto next_range = std::lower_bound(
          rd.ranges.begin(), rd.ranges.end(), iter.start_ns,
          [](const Range& r, std::int64_t t) { return r.start_ns < t; });
      auto w_it = std::lower_bound(
          rd.work.begin(), rd.work.end(), iter.start_ns,
          [](const RankData::Work& w, std::int64_t t) { return w.host_ns < t; });
      for (; w_it != rd.work.end() && w_it->host_ns < iter.end_ns; ++w_it) {
        const auto& w = *w_it;
        for (; next_range != rd.ranges.end() && next_range->start_ns <= w.host_ns; ++next_range) {
          open.push_back(&*next_range);
        }
        std::erase_if(open, [&](const Range* r) {
          if (r->end_ns > w.host_ns) return false;
          ended(*r);
          return true;
        });
        const Range* holder = open.empty() ? nullptr : open.back();
        if (w.collective) {
          ++out.collectives;
          const std::int32_t layer =
              holder && holder->phase == Phase::kBackward ? holder->layer : last_backward;
          const std::int32_t l = layer >= 0 ? layer : 0;
          acc[l].comm_ns += w.duration_ns;
          acc[l].bytes += w.bytes;
        } else if (holder) {
          ++out.kernels_assigned;
          auto& a = acc[holder->layer];
          (holder->phase == Phase::kForward ? a.forward_ns : a.backward_ns) += w.duration_ns;
        } else {
          ++out.kernels_unassigned;
        }
      }
    }
  }
  if (samples == 0) {
    throw InputError({source, std::nullopt, std::nullopt, "marker.name"},
                     "the trace has no iteration/<N> marker ranges, no optimizer-step kernels and "
                     "no collectives whose sizes repeat; mark iterations to replay it");
  }
  out.iterations_seen = max_iterations;
  out.iterations_used = samples / std::max<std::int64_t>(out.ranks, 1);
  auto avg = [&](std::int64_t v) { return (v + samples / 2) / samples; };
  trace::LayerProfile& p = out.profile;
  p.source = source;
  p.model = reader.metadata().framework();
  p.provenance = "trace " + source + ": " + std::to_string(out.ranks) + " rank(s), " +
                 std::to_string(out.iterations_used) + " steady iteration(s) averaged";
  const bool with_comm = out.collectives > 0;
  for (std::size_t l = 0; l < L; ++l) {
    trace::LayerRow row;
    row.layer = static_cast<std::int64_t>(l);
    row.name = layer_order[l];
    row.forward = Duration(avg(acc[l].forward_ns));
    row.backward = Duration(avg(acc[l].backward_ns));
    row.grad_bytes = avg(acc[l].bytes);
    if (with_comm) row.comm = Duration(avg(acc[l].comm_ns));
    p.layers.push_back(std::move(row));
  }
  if (!with_comm) {
    out.warnings.push_back(
        "the trace has no collectives: gradient sizes are unknown, so no communication is "
        "simulated");
  }
  if (out.kernels_unassigned > 0) {
    out.warnings.push_back(std::to_string(out.kernels_unassigned) +
                           (out.kernels_unassigned == 1 ? " kernel ran" : " kernels ran") +
                           " outside every forward/backward range; left out");
  }
  return out;
}

}  // namespace ssgd::dag
