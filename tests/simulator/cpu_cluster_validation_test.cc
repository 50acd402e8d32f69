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

#include <filesystem>
#include <string>

#include "simulator/dataset/dataset_replay.h"
#include "tests/support/dataset_validation.h"

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
    data_ = new ssgd::testing::ReplayedDataset(ssgd::testing::replay_bundled_dataset(kDataset));
    for (const DatasetCase& c : data_->cases) {
      const Json& to = data_->config(c.entry);
      std::string group;
      if (c.kind == DatasetCaseKind::kReplay) {
        group = to.at("world").get<int>() == 1 ? "replay, 1 rank" : "replay";
      } else {
        group = "what-if: " + what_changes(data_->config(c.from), to);
      }
      data_->groups[group].add(c);
      // The targets: replay of distributed runs; the four what-ifs.
      if (group == "replay") data_->groups["all replays of 2 or more ranks"].add(c);
      if (group.rfind("what-if", 0) == 0 && group != "what-if: 1 -> 2 ranks") {
        data_->groups["all what-ifs but 1 -> 2 ranks"].add(c);
      }
    }
  }
  static void TearDownTestSuite() { delete data_; }
  static const Group& group(const std::string& name) { return data_->groups.at(name); }

  static inline ssgd::testing::ReplayedDataset* data_ = nullptr;
};

TEST_F(CpuClusterValidation, DatasetIsIntact) {
  EXPECT_EQ(data_->problems, 0u);
  EXPECT_EQ(data_->manifest.entries.size(), 39u);
}

TEST_F(CpuClusterValidation, PrintTables) { ssgd::testing::print_validation_tables(*data_); }

// The targets, where they are met, and today's figures as bands
// (docs/validation.md, section 6), so that a change that moves them shows.
TEST_F(CpuClusterValidation, ReplayOfEveryCapturedConfiguration) {
  const Group& g = group("all replays of 2 or more ranks");
  EXPECT_EQ(g.errors.size(), 33u);
  EXPECT_LE(g.median_abs(), 3.0);  // target: median at most 3% (today 0.7%)
  // Target: worst at most 8%. Not met: one case of 33 (mlp-w2-unshaped-nooverlap,
  // +10.2%) whose capture ran 16% slower than its measured run; every other
  // case is within 6%. (A calibrated band is bounded by the platform's link;
  // these scenarios name none, so the link is taken at the calibration's
  // fastest band, scenario_platform_spec, not at the default 10 GbE.)
  EXPECT_LE(g.worst_abs, 10.5);
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
