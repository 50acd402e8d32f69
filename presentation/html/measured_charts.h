#pragma once
// Charts of predictions against measurements: the cases of a dataset verify
// report (predicted against measured, one dot per case; each case's error in
// percent with its measurement's spread) and a diff report (busy time per
// task kind on each side, and the tasks that differ most).

#include <cstddef>
#include <string>
#include <vector>

#include "presentation/html/measured_input.h"

namespace ssgd::html {

// The most cases drawn as bars (those of the largest |error|), and the most
// tasks of a diff drawn one by one.
inline constexpr std::size_t kMaxCaseBars = 300;
inline constexpr std::size_t kMaxDiffTasks = 30;

// Predicted against measured iteration time, a dot per case, the line where
// they are equal.
Json verify_scatter_chart(const DatasetVerifyReport& report);
// Each case's error in percent, in the report's order (at most kMaxCaseBars:
// the largest |error|), with its measurement's p10 to p90 around the median
// as a band and the error written beside the bar.
Json verify_error_chart(const DatasetVerifyReport& report);

// One task kind's busy time on each side: the sum over its tasks divided by
// the side's ranks (a mean rank's).
struct DiffKind {
  std::string kind;
  std::size_t measured_tasks = 0, simulated_tasks = 0;
  double measured_ns = 0, simulated_ns = 0;
};
// io, h2d, forward, backward, comm, update, then other kinds in the order met.
std::vector<DiffKind> diff_by_kind(const DiffReport& report);

// The iteration and each kind's busy time, measured and simulated side by
// side, with the difference written beside.
Json diff_kinds_chart(const DiffReport& report);
// The first kMaxDiffTasks matched tasks (the largest differences of the
// report's `by`): simulated minus measured, as a bar each, the difference
// written beside.
Json diff_tasks_chart(const DiffReport& report);
// The quantity a diff's rows are ordered by, in words, and its value.
std::string diff_quantity(const std::string& by);
std::int64_t diff_value(const DiffTask& task, const std::string& by);

}  // namespace ssgd::html
