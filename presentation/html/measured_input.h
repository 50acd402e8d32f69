#pragma once
// The inputs of `ssgd report` that set a prediction against a measurement:
// the report of `ssgd dataset verify --report` (every case's predicted and
// measured iteration time, docs/datasets.md) and of `ssgd diff --report`
// (one iteration of two traces compared task by task, docs/report.md "The
// diff report"). Only the fields the page shows are read; each is checked,
// and a wrong one is an ssgd::InputError naming the file and the field.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "presentation/html/json_fields.h"

namespace ssgd::html {

// The format and version of dataset verify's report this ssgd reads.
inline constexpr std::string_view kDatasetVerifyFormat = "ssgd.dataset.verify";
inline constexpr std::int64_t kDatasetVerifyVersion = 1;

// A case's memory, when its entry measured it (cases[].memory).
struct VerifyMemory {
  std::int64_t predicted_bytes = 0, measured_bytes = 0;  // measured: the median
  std::optional<std::int64_t> p10_bytes, p90_bytes;
  double error_percent = 0;
  std::optional<double> noise_percent;  // (p90 - p10) / median, as the report says
  bool activations_known = true;  // false: the estimate counts no activations
};

struct VerifyCase {
  std::string name, kind;  // case ("ID" or "ID <- FROM"), "replay" or "what-if"
  std::int64_t predicted_ns = 0, measured_ns = 0;  // measured: the median
  std::optional<std::int64_t> p10_ns, p90_ns;
  double error_percent = 0;  // (predicted - measured) / measured, as the report says
  std::optional<double> noise_percent;
  std::optional<VerifyMemory> memory;
};

struct VerifySummary {
  std::int64_t cases = 0;
  std::optional<double> median_abs_error_percent, worst_abs_error_percent;
  std::string worst_case;
};

struct DatasetVerifyReport {
  std::string folder, name, packed_by;  // dataset.folder, .name, .packed_by_ssgd_version
  std::optional<std::int64_t> entries, files;
  std::vector<VerifyCase> cases;
  VerifySummary replay, what_if, all;
  std::optional<VerifySummary> memory;  // over the cases with a measured memory
  std::optional<double> median_noise_percent;
};

struct DiffTask {
  std::int64_t start_ns = 0, end_ns = 0;  // from its iteration's start
  std::int64_t busy_ns = 0, bytes = 0;
};

struct DiffRow {
  std::int64_t rank = 0;
  std::string kind, task;
  std::optional<DiffTask> measured, simulated;
};

struct DiffSide {
  std::string path, chosen;
  std::int64_t iteration = 0, iteration_time_ns = 0;
};

struct DiffReport {
  DiffSide measured, simulated;
  std::string by;  // start, end or duration
  std::vector<DiffRow> matched, measured_only, simulated_only;
};

// `r` (an object) is dataset verify's report: `format` is kDatasetVerifyFormat.
DatasetVerifyReport read_dataset_verify(const JsonFields& f, const Json& r);
// `r` (an object) is a diff report: it has `matched` and `measured`.
DiffReport read_diff(const JsonFields& f, const Json& r);

}  // namespace ssgd::html
