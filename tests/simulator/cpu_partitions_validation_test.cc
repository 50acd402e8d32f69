// Issue 18's scheduler validation: the bundled dataset
// traces/datasets/cpu-partitions (docs/testbed.md), real PyTorch DDP on CPU
// over gloo with every DDP bucket cut into partitions of 1024, 256 or 64 KiB
// (each its own all-reduce, ByteScheduler's partitioning) or not cut, two
// ranks on one 16-core machine (--loopback --cores-per-rank 2). Each
// partitioned scenario runs ssgd's `priority` policy with the scheduler
// costs `ssgd calibrate --scheduler` fitted on the other partitioned
// captures of the same model, so a prediction never sees its target's own
// capture.
//   replay    each configuration under its own scenario
//   what-if   each configuration from the capture of another that differs in
//             its partition size only
// The test prints the tables of docs/validation.md, section 8c, and holds
// each group to today's figures, the failures included: ssgd predicts the
// cnn's cases (few partitions) within about 20%, and every partitioned mlp
// case 30-70% too fast, because gloo runs many small all-reduces from two
// worker threads far slower than one alone (section 8c). A change that
// closes that gap shows here.
#include <gtest/gtest.h>

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
const fs::path kDataset = fs::path(SSGD_SOURCE_DIR) / "traces/datasets/cpu-partitions";

using Group = ssgd::testing::ErrorGroup;

class CpuPartitionsValidation : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    set_log_levels("error");  // each partitioned replay warns that collectives are modelled
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
      const auto& to = by_id.at(c.entry)->config;
      const auto& from = by_id.at(c.from)->config;
      const std::string model = to.at("model").get<std::string>();
      const bool target_cut = to.at("partition_kb").get<double>() > 0;
      const bool source_cut = from.at("partition_kb").get<double>() > 0;
      std::string kind = c.kind == DatasetCaseKind::kReplay ? "replay"
                         : !source_cut                      ? "what-if, from uncut"
                         : target_cut                       ? "what-if, another partition size"
                                                            : "what-if, to uncut";
      (*groups_)[model + ": " + kind].add(c.name(), c.error_percent);
      (*groups_)[model + ": every case"].add(c.name(), c.error_percent);
      if (target_cut)
        (*groups_)[model + ": partitioned targets"].add(c.name(), c.error_percent);
      else
        (*groups_)[model + ": uncut targets"].add(c.name(), c.error_percent);
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

TEST_F(CpuPartitionsValidation, DatasetIsIntact) {
  EXPECT_EQ(problems_, 0u);
  EXPECT_EQ(manifest_->entries.size(), 8u);
  EXPECT_EQ(cases_->size(), 32u);  // 8 replays, 24 what-ifs
}

TEST_F(CpuPartitionsValidation, PrintTables) {
  std::printf(
      "\n| case | kind | predicted (ms) | measured (ms) | error |\n|---|---|---|---|---|\n");
  for (const DatasetCase& c : *cases_) {
    std::printf("| %s | %s | %.1f | %.1f | %+.1f%% |\n", c.name().c_str(), to_string(c.kind),
                static_cast<double>(c.predicted.ns()) / 1e6,
                static_cast<double>(c.measured.median.ns()) / 1e6, c.error_percent);
  }
  std::printf(
      "\n| group | cases | median abs error | mean error | worst abs error | worst case |\n"
      "|---|---|---|---|---|---|\n");
  for (const auto& [name, g] : *groups_) {
    std::printf("| %s | %zu | %.1f%% | %+.1f%% | %.1f%% | %s |\n", name.c_str(), g.errors.size(),
                g.median_abs(), g.mean_signed(), g.worst_abs, g.worst.c_str());
  }
}

// Few partitions (the cnn's 2.8 MB of gradients): within about 20%, against a
// measurement whose iterations spread by 30-64% (p90 - p10 over the median).
TEST_F(CpuPartitionsValidation, FewPartitionsWithinTheNoise) {
  const Group& g = group("cnn: every case");
  EXPECT_EQ(g.errors.size(), 16u);
  EXPECT_LE(g.median_abs(), 10.0);  // today 7.2%
  EXPECT_LE(g.worst_abs, 25.0);     // today 20.2%
}

// Many partitions (the mlp's 33.6 MB in 32 to 513 partitions): every case
// predicted 30-70% too fast, from the uncut capture or from another
// partition size alike. Not met; the cause is gloo's, not the scheduler
// costs' (fitted: 15-20 us and 7-14 us a partition), docs/validation.md 8c.
TEST_F(CpuPartitionsValidation, ManyPartitionsPredictedTooFast) {
  const Group& g = group("mlp: partitioned targets");
  EXPECT_EQ(g.errors.size(), 12u);
  for (double e : g.errors) {
    EXPECT_LE(e, -25.0);
    EXPECT_GE(e, -75.0);
  }
  // Without partitions the same captures predict the uncut run within 30%.
  EXPECT_LE(group("mlp: uncut targets").worst_abs, 30.0);
}

}  // namespace
}  // namespace ssgd::sim
