#pragma once
// `ssgd report`: one self-contained HTML page from the inputs
// (report_input.h), in the order given: per simulate run its breakdown,
// iteration times, critical path, collectives, link utilisation, shared
// fabric and scenario; per scale report speedup and efficiency against GPUs;
// per optimize report its curve; per sweep its points, split by the keys that
// vary; per dataset verify report its cases predicted against measured; per
// diff report measured against simulated. What-ifs are compared first: two or
// more simulate runs side by side, scale reports (and optimize reports of one
// parameter) overlaid, each named by the settings that differ (labels.h).
// The charts are Vega-Lite specifications, as wide as the page, drawn by the
// Vega bundles inlined into the page (vega_bundle.h), so the page opens from
// disk with no network. The same inputs give the same bytes: no clock, no
// random number, no absolute path is written. docs/report.md describes it.

#include <string>
#include <vector>

#include "presentation/html/report_input.h"

namespace ssgd::html {

std::string html_report(const std::vector<ReportInput>& inputs);

}  // namespace ssgd::html
