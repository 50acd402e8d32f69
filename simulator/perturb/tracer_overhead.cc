#include "simulator/perturb/tracer_overhead.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/error.h"

namespace ssgd::sim {
namespace {

using trace::WorkRate;

// Scales the host part of `split` by `keep`, and `t` by what that removes.
void scale_host(Duration& t, std::optional<trace::RateSplit>& split, double keep) {
  if (!split) return;
  const std::int64_t host = (*split)[WorkRate::kHost];
  const auto kept = static_cast<std::int64_t>(std::llround(static_cast<double>(host) * keep));
  (*split)[WorkRate::kHost] = kept;
  t = Duration(t.ns() - (host - kept));
}

}  // namespace

TracerOverhead plan_tracer_overhead(const trace::LayerProfile& captured, bool remove,
                                    trace::LayerProfile* out) {
  TracerOverhead o;
  if (captured.tracing_window) {
    o.window = true;
    o.steps = *captured.tracing_window;
  }
  if (!remove) return o;
  if (!o.window) {
    throw ParameterError("workload.tracer_overhead",
                         fmt::format("{} was not captured with a tracing window (ssgd trace "
                                     "--window), so it holds no untraced step to tell the "
                                     "tracer's cost by; set workload.tracer_overhead: keep",
                                     captured.source_name()));
  }
  const std::int64_t excess = o.steps.traced_median.ns() - o.steps.untraced_median.ns();
  if (excess <= 0) {
    o.note = "the traced steps were no slower than the untraced ones: nothing removed";
    return o;
  }
  trace::LayerProfile& p = *out;
  p = captured;
  // A step: the rows are one micro-batch's, and a step of the capture ran
  // `micro` of them (# micro_batches), then the update.
  const std::int64_t micro = p.micro_batches.value_or(1);
  std::int64_t host = 0;
  std::int64_t total = p.update ? p.update->ns() : 0;
  for (const auto& row : p.layers) {
    total += micro * (row.forward.ns() + row.backward.ns());
    if (row.forward_split) host += micro * (*row.forward_split)[WorkRate::kHost];
    if (row.backward_split) host += micro * (*row.backward_split)[WorkRate::kHost];
  }
  if (p.update_split) host += (*p.update_split)[WorkRate::kHost];
  const bool splits = p.has_splits();
  const std::int64_t pool = splits ? host : total;
  if (pool <= 0) {
    o.note = "the profile has no host time to take the tracer's cost out of: nothing removed";
    return o;
  }
  const std::int64_t taken = std::min(excess, pool);
  if (taken < excess) {
    o.note = fmt::format("the window cost {:.3f} ms a step, more than the {:.3f} ms of {} the "
                         "profile holds: only that removed",
                         static_cast<double>(excess) / 1e6, static_cast<double>(pool) / 1e6,
                         splits ? "host time" : "compute");
  }
  const double keep = 1 - static_cast<double>(taken) / static_cast<double>(pool);
  std::int64_t before = total;
  std::int64_t after = 0;
  for (auto& row : p.layers) {
    if (splits) {
      scale_host(row.forward, row.forward_split, keep);
      scale_host(row.backward, row.backward_split, keep);
    } else {
      row.forward = Duration(std::llround(static_cast<double>(row.forward.ns()) * keep));
      row.backward = Duration(std::llround(static_cast<double>(row.backward.ns()) * keep));
    }
    after += micro * (row.forward.ns() + row.backward.ns());
  }
  if (p.update) {
    Duration u = *p.update;
    if (splits) {
      scale_host(u, p.update_split, keep);
    } else {
      u = Duration(std::llround(static_cast<double>(u.ns()) * keep));
    }
    p.update = u;
    after += u.ns();
  }
  o.removed = true;
  o.removed_per_iteration = Duration(before - after);
  return o;
}

}  // namespace ssgd::sim
