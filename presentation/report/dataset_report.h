#pragma once
// The results of `ssgd dataset verify`: predicted against measured iteration
// time for every case (and, where an entry measured it, predicted against
// measured peak memory), as tables and a summary for people and as JSON for
// programs (docs/datasets.md lists the keys).

#include <cstddef>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "simulator/dataset/dataset_replay.h"
#include "traces/dataset/dataset_manifest.h"

namespace ssgd::report {

// |error| over a set of cases. The median of an even count is the mean of
// the two middle values.
struct DatasetErrorSummary {
  std::size_t cases = 0;
  std::optional<double> median_abs_error_percent;  // none without cases
  std::optional<double> worst_abs_error_percent;
  std::string worst_case;  // its name
};

struct DatasetSummary {
  DatasetErrorSummary replay;
  DatasetErrorSummary what_if;
  DatasetErrorSummary all;
  // The memory estimate's error over the cases whose entry measured its
  // memory (replays and what-ifs); no cases when none did.
  DatasetErrorSummary memory;
  // The measurement noise next to the errors: the median over the entries of
  // (p90 - p10) / median, in percent.
  std::optional<double> median_noise_percent;
};

DatasetSummary summarise_dataset(const std::vector<sim::DatasetCase>& cases,
                                 const trace::DatasetManifest& manifest);

// (p90 - p10) / median and, when the rounds' medians are given, their
// (max - min) / median, in percent.
double measured_noise_percent(const trace::MeasuredTime& m);
double measured_noise_percent(const trace::MeasuredBytes& m);
std::optional<double> round_spread_percent(const trace::MeasuredTime& m);

void print_dataset_table(const std::vector<sim::DatasetCase>& cases, const DatasetSummary& summary,
                         std::ostream& out);

// The --report JSON. `dir` is the dataset folder as given.
nlohmann::ordered_json dataset_report_json(const std::string& dir,
                                           const trace::DatasetManifest& manifest,
                                           const std::vector<sim::DatasetCase>& cases,
                                           const DatasetSummary& summary);

}  // namespace ssgd::report
