#pragma once
// The validation of a dataset of real GPU captures (traces/datasets/
// h200-pytorch, h100-pytorch): each entry replayed as `ssgd dataset verify`
// replays it, against the iterations it was captured from (the entry's
// config.captured_iteration_ns) and against an untraced run (its measured
// median), and the table docs/validation.md prints.

#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "common/logging.h"
#include "simulator/dataset/dataset_replay.h"
#include "traces/dataset/dataset_check.h"

namespace ssgd::testing {

struct CapturedRow {
  std::string id;
  double predicted_ms = 0, captured_ms = 0, untraced_ms = 0;
  [[nodiscard]] double own_error() const {
    return 100 * (predicted_ms - captured_ms) / captured_ms;
  }
  [[nodiscard]] double untraced_error() const {
    return 100 * (predicted_ms - untraced_ms) / untraced_ms;
  }
};

struct CapturedRows {
  std::size_t problems = 0;  // the dataset check's
  std::map<std::string, CapturedRow> rows;
};

// Checks `dataset` and replays every entry.
inline CapturedRows replay_captured_dataset(const std::filesystem::path& dataset) {
  const trace::DatasetCheck check = trace::check_dataset(dataset);
  CapturedRows out;
  out.problems = check.problems.size();
  std::map<std::string, const trace::DatasetEntry*> by_id;
  for (const auto& e : check.manifest.entries) by_id[e.id] = &e;
  for (const sim::DatasetCase& c : sim::replay_dataset(dataset, check.manifest, {})) {
    CapturedRow r;
    r.id = c.entry;
    r.predicted_ms = static_cast<double>(c.predicted.ns()) / 1e6;
    r.untraced_ms = static_cast<double>(c.measured.median.ns()) / 1e6;
    r.captured_ms = by_id.at(c.entry)->config.at("captured_iteration_ns").get<double>() / 1e6;
    out.rows[r.id] = r;
  }
  return out;
}

inline void print_captured_rows(const CapturedRows& rows) {
  std::printf(
      "\n| entry | replay | captured run | error | untraced run | error |\n"
      "|---|---:|---:|---:|---:|---:|\n");
  for (const auto& [id, r] : rows.rows) {
    std::printf("| %s | %.3f ms | %.3f ms | %+.2f%% | %.3f ms | %+.2f%% |\n", id.c_str(),
                r.predicted_ms, r.captured_ms, r.own_error(), r.untraced_ms, r.untraced_error());
  }
}

// A test suite over one captured dataset, replayed once for all its tests:
// `Dataset::path()` names its folder.
template <class Dataset>
class CapturedDatasetTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    set_log_levels("error");  // each replay warns that one GPU communicates nothing
    data_ = new CapturedRows(replay_captured_dataset(Dataset::path()));
  }
  static void TearDownTestSuite() { delete data_; }
  static const CapturedRow& row(const std::string& id) { return data_->rows.at(id); }

  static inline CapturedRows* data_ = nullptr;
};

}  // namespace ssgd::testing
