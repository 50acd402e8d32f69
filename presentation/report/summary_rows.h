#pragma once
// What the summaries of `ssgd simulate` share (report.h for a profile's
// replay, graph_report.h for a graph's): their rows and their percentages.

#include <iosfwd>
#include <string_view>

#include "common/time.h"

namespace ssgd::report {

// "  <name, 24 wide> <value, 16 wide, right>  <note>", a line.
void summary_row(std::ostream& out, std::string_view name, std::string_view value,
                 std::string_view note);

// `part` as a percentage of `whole`; 0 when `whole` is not positive.
double percent_of(Duration part, Duration whole);

}  // namespace ssgd::report
