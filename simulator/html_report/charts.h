#pragma once
// The Vega-Lite specifications of the report's charts, data inlined. Every
// chart is drawn by vega-embed from the page's own copy of Vega; times are in
// milliseconds, as doubles made from the reports' integer nanoseconds.

#include <string>
#include <vector>

#include "simulator/html_report/report_input.h"

namespace ssgd::sim::html {

// A run as the charts name it ("1: resnet50.json").
struct LabelledRun {
  std::string label;
  const SimulateRun* run = nullptr;
};

// Iteration time breakdown (compute, exposed communication, I/O, idle): one
// stacked horizontal bar per run.
Json breakdown_chart(const std::vector<LabelledRun>& runs);
// Each iteration's time, in order.
Json iteration_times_chart(const SimulateRun& run);
// Each collective of the last iteration: its time, coloured by algorithm.
Json collectives_chart(const SimulateRun& run);
// Mean and busiest link utilisation per link kind.
Json link_kinds_chart(const SimulateRun& run);
// The critical path's time by task kind per iteration, one stacked bar in
// the order an iteration runs them (io, h2d, forward, backward, comm, update),
// then the path's gaps.
Json critical_path_chart(const SimulateRun& run, std::int64_t iterations);

// One iteration of a timeline: a Gantt chart, one row per group and track,
// x from the iteration's start in ms, coloured by task kind.
Json timeline_chart(const TimelineView& timeline);

// Speedup against GPUs with the ideal (speedup = GPUs); efficiency against
// GPUs with the ideal (1).
Json scale_speedup_chart(const ScaleReport& scale);
Json scale_efficiency_chart(const ScaleReport& scale);

// The iteration time of every candidate in the order tried, the best marked.
Json optimize_chart(const OptimizeReport& optimize);

// `figure` ("iteration_time_ms" or "throughput") against the first key that
// varies, coloured by the second if any (`x_key`, `colour_key`: indices into
// sweep.keys, or -1).
Json sweep_chart(const SweepReport& sweep, int x_key, int colour_key, bool throughput);

}  // namespace ssgd::sim::html
