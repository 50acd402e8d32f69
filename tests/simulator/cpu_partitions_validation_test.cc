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

#include <filesystem>
#include <string>

#include "tests/support/dataset_validation.h"

namespace ssgd::sim {
namespace {

namespace fs = std::filesystem;
const fs::path kDataset = fs::path(SSGD_SOURCE_DIR) / "traces/datasets/cpu-partitions";

using Group = ssgd::testing::ErrorGroup;

class CpuPartitionsValidation : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    data_ = new ssgd::testing::ReplayedDataset(ssgd::testing::replay_bundled_dataset(kDataset));
    for (const DatasetCase& c : data_->cases) {
      const auto& to = data_->config(c.entry);
      const std::string model = to.at("model").get<std::string>();
      const bool target_cut = to.at("partition_kb").get<double>() > 0;
      const bool source_cut = data_->config(c.from).at("partition_kb").get<double>() > 0;
      const std::string kind = c.kind == DatasetCaseKind::kReplay ? "replay"
                               : !source_cut                      ? "what-if, from uncut"
                               : target_cut ? "what-if, another partition size"
                                            : "what-if, to uncut";
      auto& groups = data_->groups;
      groups[model + ": " + kind].add(c);
      groups[model + ": every case"].add(c);
      groups[model + (target_cut ? ": partitioned targets" : ": uncut targets")].add(c);
    }
  }
  static void TearDownTestSuite() { delete data_; }
  static const Group& group(const std::string& name) { return data_->groups.at(name); }

  static inline ssgd::testing::ReplayedDataset* data_ = nullptr;
};

TEST_F(CpuPartitionsValidation, DatasetIsIntact) {
  EXPECT_EQ(data_->problems, 0u);
  EXPECT_EQ(data_->manifest.entries.size(), 8u);
  EXPECT_EQ(data_->cases.size(), 32u);  // 8 replays, 24 what-ifs
}

TEST_F(CpuPartitionsValidation, PrintTables) { ssgd::testing::print_validation_tables(*data_); }

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
