#include "presentation/report/summary_rows.h"

#include <ostream>

#include <fmt/format.h>

namespace ssgd::report {

void summary_row(std::ostream& out, std::string_view name, std::string_view value,
                 std::string_view note) {
  out << fmt::format("  {:<24} {:>16}  {}\n", name, value, note);
}

double percent_of(Duration part, Duration whole) {
  return whole.ns() > 0 ? 100.0 * static_cast<double>(part.ns()) / static_cast<double>(whole.ns())
                        : 0.0;
}

}  // namespace ssgd::report
