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

// Each case in its group: replays, what-ifs, and each kind of what-if.
void group_cases(ssgd::testing::ReplayedDataset& data) {
  for (const DatasetCase& c : data.cases) {
    const auto& to = data.config(c.entry);
    const auto& from = data.config(c.from);
    std::string kind = "replay";
    if (c.kind == DatasetCaseKind::kWhatIf) {
      kind = to.at("world") != from.at("world")         ? "what-if: 2 -> 4 ranks"
             : to.at("strategy") != from.at("strategy") ? "what-if: strategy"
                                                        : "what-if: prefetch";
    }
    data.groups[kind].add(c);
    data.groups[c.kind == DatasetCaseKind::kReplay ? "replays" : "what-ifs"].add(c);
  }
}

class CpuShardedValidation : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    data_ = new ssgd::testing::ReplayedDataset(ssgd::testing::replay_bundled_dataset(kDataset));
    group_cases(*data_);
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
  EXPECT_LE(g.median_abs(), 6.5);  // today 5.2%
  EXPECT_LE(g.worst_abs, 11.0);    // today 8.1%
}

// Not met (5% and 15%): the captures hold the CPU the loop's own collectives
// took from the compute, each strategy a different share (section 12).
TEST_F(CpuShardedValidation, WhatIfs) {
  const Group& g = group("what-ifs");
  EXPECT_EQ(g.errors.size(), 28u);
  EXPECT_LE(g.median_abs(), 15.0);  // today 12.7%
  EXPECT_LE(g.worst_abs, 35.0);     // today 31.9%
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

// The same cases with the interference model on (docs/validation.md,
// section 12, "With interference"): `interference.model: contention` with the
// host's factors fitted by `ssgd calibrate --interference` on the other
// dataset of this machine and CPU share, traces/datasets/cpu-sharded-accum
// (its 6 captures against its gloo sweep), never on these captures or their
// measured times. A rank's half core runs its compute and gloo's threads, so
// each slows the other while they overlap; the captures hold each strategy's
// own share of that (taken out), the target's is added.
class CpuShardedInterference : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const fs::path accum = fs::path(SSGD_SOURCE_DIR) / "traces/datasets/cpu-sharded-accum";
    factors_ = ssgd::testing::fit_host_factors(
        accum,
        {"mlp-w2-1gbit-b25-cpu0p5", "mlp-w2-1gbit-b25-k2-cpu0p5", "mlp-w2-1gbit-zero2-cpu0p5",
         "mlp-w2-1gbit-zero2-k2-cpu0p5", "mlp-w2-1gbit-zero3-f1-cpu0p5",
         "mlp-w2-1gbit-zero3-f1-k2-cpu0p5"},
        "network/1gbit-w2-cpu0p5/calibration.yaml");
    std::printf("\nfitted on cpu-sharded-accum: interference.host.compute %.3f, host.comm %.3f\n",
                factors_.compute, factors_.comm);
    data_ = new ssgd::testing::ReplayedDataset(ssgd::testing::replay_bundled_dataset(
        kDataset, ssgd::testing::with_host_contention(factors_)));
    group_cases(*data_);
  }
  static void TearDownTestSuite() { delete data_; }
  static const Group& group(const std::string& name) { return data_->groups.at(name); }

  static inline ssgd::testing::HostFactors factors_;
  static inline ssgd::testing::ReplayedDataset* data_ = nullptr;
};

TEST_F(CpuShardedInterference, PrintTables) { ssgd::testing::print_validation_tables(*data_); }

// The fit finds both kinds of work much slower beside the other than alone
// (the operators by 41%, gloo's all-reduces by 50%), an order of magnitude
// more than section 6's captures, whose ranks were not held to half a core.
TEST_F(CpuShardedInterference, TheFitFindsTheHalfCoreShared) {
  EXPECT_GT(factors_.compute, 0.2);  // today 0.406
  EXPECT_LT(factors_.compute, 0.8);
  EXPECT_GT(factors_.comm, 0.2);  // today 0.495
  EXPECT_LT(factors_.comm, 1.0);
}

// The what-ifs close from 12.7% and 31.9% to 6.9% and 16.9% (targets 5% and
// 15%: not met), the strategy what-ifs most (from 18.3% and 31.9% to 7.6%
// and 16.9%). The replays barely move (5.2% and 8.1% without).
TEST_F(CpuShardedInterference, WhatIfs) {
  const Group& g = group("what-ifs");
  EXPECT_EQ(g.errors.size(), 28u);
  EXPECT_LE(g.median_abs(), 8.5);  // today 6.9%
  EXPECT_LE(g.worst_abs, 19.0);    // today 16.9%
  const Group& strategy = group("what-if: strategy");
  EXPECT_LE(strategy.median_abs(), 9.0);  // today 7.6%
  EXPECT_LE(strategy.worst_abs, 19.0);    // today 16.9%
  const Group& replays = group("replays");
  EXPECT_LE(replays.median_abs(), 7.0);  // today 5.6%
  EXPECT_LE(replays.worst_abs, 11.0);    // today 9.2%
}

}  // namespace
}  // namespace ssgd::sim
