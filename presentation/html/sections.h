#pragma once
// The sections of the report's page, one per input and one per comparison of
// inputs of one kind, each written into a Page (page.h). html_report.cc puts
// them in order.

#include <string>
#include <vector>

#include "presentation/html/charts.h"
#include "presentation/html/labels.h"
#include "presentation/html/page.h"
#include "presentation/html/report_input.h"

namespace ssgd::html {

// ---------------------------------------------------------------- one input each

// simulate_section.cc: key figures, breakdown, iteration times, critical
// path, collectives, links, the shared fabric's jobs, the scenario.
void simulate_section(Page& page, const std::string& label, const SimulateRun& run);
// timeline_section.cc: one iteration per group of identical ranks.
// `run_before`: the simulate report given just before it, if any.
void timeline_section(Page& page, const std::string& path, const TimelineView& timeline,
                      const ReportInput* run_before);
// study_sections.cc. `charts`: false when a comparison above draws them.
void scale_section(Page& page, const ScaleReport& scale, bool charts);
void optimize_section(Page& page, const OptimizeReport& optimize, bool chart);
// sweep_section.cc.
void sweep_section(Page& page, const SweepReport& sweep);
// measured_sections.cc.
void dataset_verify_section(Page& page, const DatasetVerifyReport& report);
void diff_section(Page& page, const DiffReport& report);

// ---------------------------------------------------------------- comparisons (compare.cc)

// What labels an input of each kind (labels.h): a simulate run's input and
// scenario; a scale report's input, scenario file, policy, mode and batch; an
// optimize report's input and scenario file.
Settings simulate_settings(const SimulateRun& run);
Settings scale_settings(const ScaleReport& scale);
Settings optimize_settings(const OptimizeReport& optimize);

// Two or more simulate runs: their breakdowns side by side, their figures
// against the first's, and every scenario key whose values differ.
void simulate_comparison(Page& page, const std::vector<LabelledRun>& runs,
                         const Labelling& labelling, const std::vector<Settings>& settings);
// Two or more scale reports: speedup and efficiency, one line each.
void scale_comparison(Page& page, const std::vector<LabelledScale>& scales,
                      const Labelling& labelling, const std::vector<Settings>& settings);
// Two or more optimize reports of one parameter: one curve each.
void optimize_comparison(Page& page, const std::vector<LabelledOptimize>& optimizes,
                         const Labelling& labelling, const std::vector<Settings>& settings);

}  // namespace ssgd::html
