#pragma once
// The tracer's own cost, taken out of a capture made with a tracing window
// (ssgd trace --window; the scenario's workload.tracer_overhead: remove).
//
// Inside the window every kernel, copy and launch is recorded, and the
// recording costs the host time at each launch; outside it only the steps'
// boundaries are. The trace therefore knows how long a step took traced and
// untraced in the same run (trace::TracingWindowSteps): the difference, X a
// step, is the window's own cost, and it lies in the host's part of the
// layers' times (the launch gaps and operators, traces/rate_split.h).
// Removing it scales every layer's and the update's host part by
// 1 - X / H, with H their sum an iteration; the GPU's parts are kept. A
// profile without rate splits (one whose compute ran on the host) has all
// its time scaled by 1 - X / T instead, T its compute an iteration. X is
// capped at H (or T), with a note.

#include <string>

#include "common/time.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {

struct TracerOverhead {
  bool window = false;   // the input was captured with a tracing window
  bool removed = false;  // workload.tracer_overhead: remove was applied
  trace::TracingWindowSteps steps;
  Duration removed_per_iteration;  // what was taken out of one iteration
  std::string note;                // a cap, or why nothing was removed
};

// What the input's window says, and with `remove`, the profile without the
// window's cost (`out`, otherwise left alone). Throws ParameterError naming
// workload.tracer_overhead when `remove` is asked of an input without a
// window.
TracerOverhead plan_tracer_overhead(const trace::LayerProfile& captured, bool remove,
                                    trace::LayerProfile* out);

}  // namespace ssgd::sim
