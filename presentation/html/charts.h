#pragma once
// The Vega-Lite specifications of the report's charts of simulate runs,
// timelines, scale and optimize reports, data inlined (sweep_charts.h and
// measured_charts.h have the others). Every chart is drawn by vega-embed from
// the page's own copy of Vega, as wide as the page; times are in
// milliseconds, as doubles made from the reports' integer nanoseconds.

#include <string>
#include <vector>

#include "presentation/html/report_input.h"

namespace ssgd::html {

// An input as the charts name it (labels.h: "policy.overlap=bsp", or its
// file name).
struct LabelledRun {
  std::string label;
  const SimulateRun* run = nullptr;
};
struct LabelledScale {
  std::string label;
  const ScaleReport* scale = nullptr;
};
struct LabelledOptimize {
  std::string label;
  const OptimizeReport* optimize = nullptr;
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

// Each job's slowdown on a shared fabric (shared / alone), the line of 1.
Json shared_fabric_chart(const SharedFabric& fabric);

// Speedup against GPUs with the ideal (speedup = GPUs); efficiency against
// GPUs with the ideal (1): one line per scale report, overlaid.
Json scale_speedup_chart(const std::vector<LabelledScale>& scales);
Json scale_efficiency_chart(const std::vector<LabelledScale>& scales);

// The iteration time of every value tried, one line per optimize report (all
// of one parameter), each one's best marked and the iteration time of its
// scenario as given a dashed line. Sizes, times and rates are on a number
// axis in a unit that suits them (quantity.h); other values in the order
// tried.
Json optimize_chart(const std::vector<LabelledOptimize>& optimizes);

}  // namespace ssgd::html
