// Issue 13's validation: the bundled dataset traces/datasets/cpu-cluster
// (docs/testbed.md), real PyTorch DDP training on CPU over gloo between
// network namespaces, replayed by ssgd and compared with the iteration
// times measured without the profiler.
//   replay    each captured configuration under its own scenario
//   what-if   each configuration predicted from the capture of another that
//             differs in one knob: the link rate, the DDP bucket size,
//             overlap on -> off, 2 -> 4 ranks (the four), and 1 -> 2
//             ranks (the model's compute alone -> a distributed run)
// Every case is `ssgd simulate TRACE --scenario SCENARIO`, as `ssgd dataset
// verify` runs it. The test prints the tables of docs/validation.md,
// section 6, checks the dataset's integrity, and holds each group's median
// and worst error to the figures stated there, so that a change that moves
// them shows up.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/logging.h"
#include "simulator/dataset/dataset_replay.h"
#include "tests/support/error_group.h"
#include "traces/dataset/dataset_check.h"

namespace ssgd::sim {
namespace {

namespace fs = std::filesystem;
const fs::path kDataset = fs::path(SSGD_SOURCE_DIR) / "traces/datasets/cpu-cluster";

using Json = trace::JsonFieldReader::Json;

// The knob a what-if case changes, from the two entries' configurations.
std::string what_changes(const Json& from, const Json& to) {
  if (from.at("world") != to.at("world")) {
    return std::to_string(from.at("world").get<int>()) + " -> " +
           std::to_string(to.at("world").get<int>()) + " ranks";
  }
  if (from.at("overlap") != to.at("overlap")) return "overlap on -> off";
  if (from.at("rate") != to.at("rate")) return "link rate";
  if (from.at("bucket_mb") != to.at("bucket_mb")) return "bucket size";
  return "other";
}

using Group = ssgd::testing::ErrorGroup;

class CpuClusterValidation : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    set_log_levels("error");  // each replay warns that DDP's buckets are modelled, not replayed
    const trace::DatasetCheck check = trace::check_dataset(kDataset);
    problems_ = check.problems.size();
    manifest_ = new trace::DatasetManifest(check.manifest);
    DatasetReplayOptions options;
    options.jobs = 2;
    cases_ = new std::vector<DatasetCase>(replay_dataset(kDataset, *manifest_, options));
    std::map<std::string, const trace::DatasetEntry*> by_id;
    for (const auto& e : manifest_->entries) by_id[e.id] = &e;
    groups_ = new std::map<std::string, Group>;
    for (const DatasetCase& c : *cases_) {
      const Json& to = by_id.at(c.entry)->config;
      std::string group;
      if (c.kind == DatasetCaseKind::kReplay) {
        group = to.at("world").get<int>() == 1 ? "replay, 1 rank" : "replay";
      } else {
        group = "what-if: " + what_changes(by_id.at(c.from)->config, to);
      }
      (*groups_)[group].add(c.name(), c.error_percent);
      // The targets: replay of distributed runs; the four what-ifs.
      if (group == "replay") {
        (*groups_)["all replays of 2 or more ranks"].add(c.name(), c.error_percent);
      }
      if (group.rfind("what-if", 0) == 0 && group != "what-if: 1 -> 2 ranks") {
        (*groups_)["all what-ifs but 1 -> 2 ranks"].add(c.name(), c.error_percent);
      }
    }
  }
  static void TearDownTestSuite() {
    delete manifest_;
    delete cases_;
    delete groups_;
  }
  static const Group& group(const std::string& name) { return groups_->at(name); }

  static inline std::size_t problems_ = 0;
  static inline trace::DatasetManifest* manifest_ = nullptr;
  static inline std::vector<DatasetCase>* cases_ = nullptr;
  static inline std::map<std::string, Group>* groups_ = nullptr;
};

TEST_F(CpuClusterValidation, DatasetIsIntact) {
  EXPECT_EQ(problems_, 0u);
  EXPECT_EQ(manifest_->entries.size(), 39u);
}

TEST_F(CpuClusterValidation, PrintTables) {
  std::printf("\n| case | kind | predicted (ms) | measured (ms) | error |\n|---|---|---|---|---|\n");
  for (const DatasetCase& c : *cases_) {
    std::printf("| %s | %s | %.1f | %.1f | %+.1f%% |\n", c.name().c_str(), to_string(c.kind),
                static_cast<double>(c.predicted.ns()) / 1e6,
                static_cast<double>(c.measured.median.ns()) / 1e6, c.error_percent);
  }
  std::printf("\n| group | cases | median abs error | mean error | worst abs error | worst case |\n"
              "|---|---|---|---|---|---|\n");
  for (const auto& [name, g] : *groups_) {
    std::printf("| %s | %zu | %.1f%% | %+.1f%% | %.1f%% | %s |\n", name.c_str(), g.errors.size(),
                g.median_abs(), g.mean_signed(), g.worst_abs, g.worst.c_str());
  }
}

// The targets, where they are met, and today's figures as bands
// (docs/validation.md, section 6), so that a change that moves them shows.
TEST_F(CpuClusterValidation, ReplayOfEveryCapturedConfiguration) {
  const Group& g = group("all replays of 2 or more ranks");
  EXPECT_EQ(g.errors.size(), 33u);
  EXPECT_LE(g.median_abs(), 3.0);  // target: median at most 3% (today 0.7%)
  // Target: worst at most 8%. Not met: one case of 33 (mlp-w2-unshaped-nooverlap,
  // +10.2%) whose capture ran 16% slower than its measured run; every other
  // case is within 6%.
  EXPECT_LE(g.worst_abs, 11.0);
  std::size_t above_target = 0;
  for (double e : g.errors) above_target += std::abs(e) > 8.0 ? 1 : 0;
  EXPECT_LE(above_target, 1u);
  EXPECT_LE(std::abs(g.mean_signed()), 2.0);  // no bias
  EXPECT_LE(group("replay, 1 rank").worst_abs, 6.0);
}

TEST_F(CpuClusterValidation, WhatIfAnotherRateBucketOverlapOrRankCount) {
  const Group& g = group("all what-ifs but 1 -> 2 ranks");
  EXPECT_EQ(g.errors.size(), 93u);
  EXPECT_LE(g.median_abs(), 5.0);   // target: median at most 5% (today 1.4%)
  EXPECT_LE(g.worst_abs, 15.0);     // target: worst at most 15% (today 6.5%)
  EXPECT_LE(g.median_abs(), 2.5);   // today's figures, with room for nothing big
  EXPECT_LE(g.worst_abs, 8.0);
  for (const char* name : {"what-if: link rate", "what-if: bucket size", "what-if: overlap on -> off",
                           "what-if: 2 -> 4 ranks"}) {
    SCOPED_TRACE(name);
    EXPECT_LE(group(name).median_abs(), 5.0);
    EXPECT_LE(group(name).worst_abs, 15.0);
  }
}

TEST_F(CpuClusterValidation, WhatIfFromTheModelAlone) {
  const Group& g = group("what-if: 1 -> 2 ranks");
  EXPECT_EQ(g.errors.size(), 30u);
  EXPECT_LE(g.median_abs(), 5.0);
  EXPECT_LE(g.worst_abs, 15.0);
}

}  // namespace
}  // namespace ssgd::sim
