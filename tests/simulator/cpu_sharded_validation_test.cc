// Issue 34's emulated-cluster validation: the bundled dataset
// traces/datasets/cpu-sharded-mini (tools/testbed/grids/cpu-sharded-mini.toml,
// docs/testbed.md "Sharded training"): the mlp trained on CPU over gloo
// between network namespaces at 1 Gbit/s, 2 and 4 ranks at half a core each,
// by PyTorch DDP (25 MiB buckets) and by ZeRO-2 and ZeRO-3 written by hand
// (tools/testbed/sharded.py), ZeRO-3 with forward prefetch 0 and 1.
//   replay    each configuration under its own scenario
//   what-if   from the capture of a configuration that differs in the
//             strategy, the prefetch, or 2 -> 4 ranks
//   memory    each case's per-GPU memory estimate against the rank's peak
//             resident set above its baseline, less the library code paged
//             in (measured.memory_bytes)
// The test prints the tables of docs/validation.md, section 12, and holds
// each group to today's figures, the misses included (the targets are 3%
// and 8% for replays, 5% and 15% for what-ifs, 10% for memory): a change
// that closes a gap shows here, and one that widens it fails.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/support/dataset_validation.h"

namespace ssgd::sim {
namespace {

namespace fs = std::filesystem;
const fs::path kDataset = fs::path(SSGD_SOURCE_DIR) / "traces/datasets/cpu-sharded-mini";

using Group = ssgd::testing::ErrorGroup;

class CpuShardedValidation : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    data_ = new ssgd::testing::ReplayedDataset(ssgd::testing::replay_bundled_dataset(kDataset));
    ssgd::testing::group_sharded_cases(*data_);
    memory_ = ssgd::testing::replay_memory_errors(*data_);
  }
  static void TearDownTestSuite() { delete data_; }
  static const Group& group(const std::string& name) { return data_->groups.at(name); }

  static inline ssgd::testing::ReplayedDataset* data_ = nullptr;
  static inline Group memory_;  // replays' memory errors
};

TEST_F(CpuShardedValidation, DatasetIsIntact) {
  EXPECT_EQ(data_->problems, 0u);
  EXPECT_EQ(data_->manifest.entries.size(), 8u);
  EXPECT_EQ(group("replays").errors.size(), 8u);
  for (const auto& e : data_->manifest.entries) {
    EXPECT_TRUE(e.memory.has_value()) << e.id << ": the testbed measures every rank's memory";
  }
}

TEST_F(CpuShardedValidation, PrintTables) {
  ssgd::testing::print_validation_tables(*data_);
  ssgd::testing::print_memory_table(*data_, memory_);
}

// Every capture carries what its layers saved for backward
// (ssgd/activation_bytes marks), so every estimate holds its activations.
TEST_F(CpuShardedValidation, EveryEstimateHoldsItsActivations) {
  for (const DatasetCase& c : data_->cases) {
    if (c.measured_memory) {
      EXPECT_TRUE(c.memory_activations_known) << c.name();
    }
  }
}

// Not met (3% and 8%), against a measurement whose iterations spread by
// 7-26% (p90 - p10 over the median, median 11.6%).
TEST_F(CpuShardedValidation, Replays) {
  const Group& g = group("replays");
  EXPECT_LE(g.median_abs(), 9.5);  // today 8.6% (5.2% before waits were cut out of the compute)
  EXPECT_LE(g.worst_abs, 13.5);    // today 12.3% (8.1%)
}

// Not met (5% and 15%): the captures hold the CPU the loop's own collectives
// took from the compute, each strategy a different share (section 12).
TEST_F(CpuShardedValidation, WhatIfs) {
  const Group& g = group("what-ifs");
  EXPECT_EQ(g.errors.size(), 28u);
  EXPECT_LE(g.median_abs(), 15.0);  // today 11.7%
  EXPECT_LE(g.worst_abs, 35.0);     // today 29.3%
}

// The measurement leaves out the libraries' code paged in (10.2-10.8 MiB of
// file-backed pages); the estimate counts the sharded loops' temporaries
// (autograd's gradient of a layer, gloo's flat all-gather output). Still low
// everywhere: DDP by 4% (autograd's temporary gradient under
// zero_grad(set_to_none=False) is not counted), ZeRO-2 at 4 ranks by 12%
// (reductions that lag the backward further than the replay has them).
// Within 10% in 7 of 8 (the target: all).
TEST_F(CpuShardedValidation, Memory) {
  EXPECT_EQ(memory_.errors.size(), 8u);
  for (double e : memory_.errors) {
    EXPECT_LT(e, 0.0);
    EXPECT_GT(e, -14.0);  // today -0.9% to -11.9%
  }
  EXPECT_LE(memory_.median_abs(), 7.0);  // today 5.7%
  EXPECT_LE(memory_.worst_abs, 13.0);    // today 11.9%
  for (const DatasetCase& c : data_->cases) {
    if (c.kind == DatasetCaseKind::kReplay && c.entry.find("-b25-") != std::string::npos) {
      EXPECT_LE(std::abs(c.memory_error_percent), 5.0) << c.entry;  // today -3.7%, -3.6%
    }
  }
}

}  // namespace
}  // namespace ssgd::sim
