#pragma once
// The report's context for tests that print or write a report of a replay.

#include <string>

#include "presentation/report/report.h"

namespace ssgd::testing {

// An input of KIND at PATH; the rest (model, provenance, scenario) left empty.
inline report::ReportContext report_context(const std::string& path, const std::string& kind) {
  report::ReportContext c;
  c.input = path;
  c.input_kind = kind;
  return c;
}

}  // namespace ssgd::testing
