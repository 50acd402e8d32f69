// Issue 34's HSDP on the emulated cluster: the bundled dataset
// traces/datasets/cpu-sharded-hsdp (tools/testbed/grids/cpu-sharded-hsdp.toml,
// docs/testbed.md "HSDP"): the mlp trained on CPU over gloo between network
// namespaces at 1 Gbit/s, 4 ranks at half a core each, by PyTorch DDP (25 MiB
// buckets), ZeRO-3 and HSDP written by hand (tools/testbed/sharded.py; HSDP in
// shard groups of 2 ranks, each unit's shard all-reduced across the 2
// groups), each sharded one with forward prefetch 0 and 1.
//   replay    each configuration under its own scenario
//   what-if   from the capture of a configuration that differs in the
//             strategy or the prefetch (HSDP from ZeRO-3 and DDP, and back)
//   memory    each case's per-GPU memory estimate against the rank's peak
//             resident set above its baseline (measured.memory_bytes)
// Replayed two ways: with the interference model off (the default), and
// with processor sharing (interference.host.compute = host.comm = 1, nothing
// fitted: docs/validation.md, section 12, "With interference"). The test
// prints the tables of section 12 and holds each group to today's figures,
// the misses included (targets: 3% and 8% for replays, 5% and 15% for
// what-ifs, 10% for memory).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "simulator/api/collectives.h"
#include "simulator/input/replay_input.h"
#include "simulator/input/scenario_inputs.h"
#include "tests/support/dataset_validation.h"
#include "traces/import/measurement_files.h"

namespace ssgd::sim {
namespace {

namespace fs = std::filesystem;
const fs::path kDataset = fs::path(SSGD_SOURCE_DIR) / "traces/datasets/cpu-sharded-hsdp";

using Group = ssgd::testing::ErrorGroup;
using ssgd::testing::ReplayedDataset;

bool is_hsdp(const std::string& entry) { return entry.find("-hsdp-") != std::string::npos; }

// The sharded groups, and the what-ifs that predict HSDP from another
// strategy ("what-if: to hsdp") and another strategy from HSDP ("what-if:
// from hsdp").
void group_cases(ReplayedDataset& d) {
  ssgd::testing::group_sharded_cases(d);
  for (const DatasetCase& c : d.cases) {
    if (c.kind != DatasetCaseKind::kWhatIf || is_hsdp(c.entry) == is_hsdp(c.from)) continue;
    d.groups[is_hsdp(c.entry) ? "what-if: to hsdp" : "what-if: from hsdp"].add(c);
  }
}

class CpuShardedHsdp : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    none_ = new ReplayedDataset(ssgd::testing::replay_bundled_dataset(kDataset));
    group_cases(*none_);
    sharing_ = new ReplayedDataset(ssgd::testing::replay_bundled_dataset(
        kDataset, ssgd::testing::with_host_contention({1.0, 1.0})));
    group_cases(*sharing_);
    memory_ = ssgd::testing::replay_memory_errors(*none_);
  }
  static void TearDownTestSuite() {
    delete none_;
    delete sharing_;
  }
  static const Group& none(const std::string& name) { return none_->groups.at(name); }
  static const Group& sharing(const std::string& name) { return sharing_->groups.at(name); }

  static inline ReplayedDataset* none_ = nullptr;
  static inline ReplayedDataset* sharing_ = nullptr;
  static inline Group memory_;
};

TEST_F(CpuShardedHsdp, DatasetIsIntact) {
  EXPECT_EQ(none_->problems, 0u);
  EXPECT_EQ(none_->manifest.entries.size(), 5u);
  EXPECT_EQ(none("replays").errors.size(), 5u);
  EXPECT_EQ(none("what-ifs").errors.size(), 20u);
  EXPECT_EQ(none("what-if: to hsdp").errors.size(), 6u);
  EXPECT_EQ(none("what-if: from hsdp").errors.size(), 6u);
}

TEST_F(CpuShardedHsdp, PrintTables) {
  std::printf("\n### interference none\n");
  ssgd::testing::print_validation_tables(*none_);
  ssgd::testing::print_memory_table(*none_, memory_);
  std::printf("\n### processor sharing (interference.host.compute = host.comm = 1)\n");
  ssgd::testing::print_validation_tables(*sharing_);
}

// The capture is read back as HSDP: the strategy, its shard group and the
// gradients reduced to their owners (ssgd/collective_bytes/<op> and
// ssgd/collective_ranks/<op> marks; walk/trace_sharding.h); ZeRO-3's as
// zero3 over the world.
TEST_F(CpuShardedHsdp, TheCapturesAreReadBackWithTheirStrategyAndGroup) {
  for (const auto& e : none_->manifest.entries) {
    if (e.id.find("-b25-") != std::string::npos) continue;
    const ReplayInput input = load_replay_input(kDataset / "configs" / e.id / "trace.ssgdt");
    EXPECT_EQ(input.profile.sharding, is_hsdp(e.id) ? "hsdp" : "zero3") << e.id;
    EXPECT_EQ(input.profile.shard_group.value_or(0), is_hsdp(e.id) ? 2 : 4) << e.id;
    EXPECT_EQ(input.profile.gradient_reduction, "reduce") << e.id;
  }
}

// Interference off. Replays: the targets (3% and 8%) not met, against a
// measurement whose iterations spread by 22-28% (p90 - p10 over the median)
// and whose rounds' medians lie 13-18% apart.
TEST_F(CpuShardedHsdp, ReplaysWithoutInterference) {
  const Group& g = none("replays");
  EXPECT_LE(g.median_abs(), 5.5);  // today 1.9%
  EXPECT_LE(g.worst_abs, 17.5);    // today 16.0% (ZeRO-3 f1, predicted fast)
  for (const DatasetCase& c : none_->cases) {
    if (c.kind == DatasetCaseKind::kReplay && is_hsdp(c.entry)) {
      EXPECT_LE(std::abs(c.error_percent), 6.0) << c.entry;  // today +1.8%, +3.2%
    }
  }
}

// Interference off, what-ifs: DDP's capture predicts every sharded strategy
// 23-35% fast and the sharded captures predict DDP 26-44% slow (the loop's
// gloo threads share each rank's half core with the compute, each strategy
// a different share: section 12); between the sharded strategies within
// 15%.
TEST_F(CpuShardedHsdp, WhatIfsWithoutInterference) {
  EXPECT_EQ(none("what-ifs").errors.size(), 20u);
  EXPECT_LE(none("what-ifs").median_abs(), 13.0);          // today 12.3%
  EXPECT_LE(none("what-ifs").worst_abs, 50.0);             // today 44.2% (DDP from HSDP f1)
  EXPECT_LE(none("what-if: to hsdp").median_abs(), 11.0);  // today 10.0%
  for (const DatasetCase& c : none_->cases) {
    if (c.kind == DatasetCaseKind::kWhatIf && is_hsdp(c.entry) &&
        c.from.find("-zero3-") != std::string::npos) {
      EXPECT_LE(std::abs(c.error_percent), 12.5) << c.name();  // today -11.2% to -0.2%
    }
  }
}

// Processor sharing, nothing fitted: every what-if within 14.5% (the targets
// 5% and 15%: median missed, worst met); HSDP from another strategy within
// 11.6%. The replays move the other way (median 9.8%): HSDP's own capture is
// predicted about 10% slow, processor sharing counting the cross-group
// all-reduces, which wait on the 1 Gbit/s link more than they use the CPU,
// as busy CPU.
TEST_F(CpuShardedHsdp, WithProcessorSharing) {
  EXPECT_EQ(sharing_->problems, 0u);
  EXPECT_LE(sharing("what-ifs").median_abs(), 9.0);          // today 8.1%
  EXPECT_LE(sharing("what-ifs").worst_abs, 17.0);            // today 14.5%
  EXPECT_LE(sharing("what-if: to hsdp").median_abs(), 6.0);  // today 1.6%
  EXPECT_LE(sharing("what-if: to hsdp").worst_abs, 12.5);    // today 11.6%
  EXPECT_LE(sharing("replays").median_abs(), 10.5);          // today 9.8%
  EXPECT_LE(sharing("replays").worst_abs, 15.0);             // today 10.2%
}

// Memory: within 10% everywhere (the target). HSDP keeps half the model's
// parameters, gradients and momentum a rank where ZeRO-3 keeps a quarter:
// its estimate is 24.1 MiB above ZeRO-3's, 3 x (1/2 - 1/4) x 33.6 MB.
TEST_F(CpuShardedHsdp, Memory) {
  EXPECT_EQ(memory_.errors.size(), 5u);
  EXPECT_LE(memory_.worst_abs, 10.0);    // today 8.4% (ZeRO-3 f1)
  EXPECT_LE(memory_.median_abs(), 5.0);  // today 4.0%
  std::int64_t hsdp = 0, zero3 = 0;
  for (const DatasetCase& c : none_->cases) {
    if (c.kind != DatasetCaseKind::kReplay) continue;
    if (is_hsdp(c.entry)) {
      EXPECT_LE(std::abs(c.memory_error_percent), 5.0) << c.entry;  // today -3.5%, -4.0%
      hsdp = c.predicted_memory_bytes;
    } else if (c.entry.find("-zero3-") != std::string::npos) {
      zero3 = c.predicted_memory_bytes;
    }
  }
  const double state = 3.0 * (0.5 - 0.25) * 8'407'050.0 * 4;  // the mlp's parameters, fp32
  EXPECT_NEAR(static_cast<double>(hsdp - zero3), state, 0.02 * state);
}

// The shard and replica groups' collectives run over 2 of the 4 ranks, and
// the replay times them by the 4-rank sweep's fits through the ring's
// alpha-beta terms (docs/testbed.md, "HSDP"): no 2-rank sweep is in this
// dataset. Another dataset has one of the same network and CPU share
// (traces/datasets/cpu-sharded-mini-2, network 1gbit-w2-cpu0p5: gloo's
// all-reduce, all-gather and reduce at 2 ranks, 1 Gbit/s, half a core,
// measured on another day). Against it, every size from 1 MiB (the loop's
// are 2 MiB all-reduces, 4 MiB all-gathers and 2 MiB reduces): median 4.7%,
// worst 33% (today's). Different days of this machine differ by 13-18% (the
// rounds' medians, above), so no more is claimed than that.
TEST_F(CpuShardedHsdp, TwoRankCollectivesFromTheFourRankSweep) {
  const fs::path scenario = kDataset / "configs/mlp-w4-1gbit-hsdp-g2-f1-cpu0p5/scenario.yaml";
  const Scenario two = load_scenario(scenario, {"cluster.nodes=2"});
  const fs::path sweep =
      fs::path(SSGD_SOURCE_DIR) / "traces/datasets/cpu-sharded-mini-2/network/1gbit-w2-cpu0p5";
  std::vector<double> errors;
  std::printf(
      "\n| op | bytes | predicted from 4 ranks (us) | measured at 2 ranks (us) | error |\n"
      "|---|---:|---:|---:|---:|\n");
  for (const char* file : {"allreduce.osu", "allgather.osu", "reduce.osu"}) {
    trace::MeasurementOptions o;
    for (const trace::Measurement& m : trace::read_measurements(sweep / file, o)) {
      ASSERT_EQ(m.ranks, 2) << file;
      if (m.bytes < 1048576) continue;
      CollectivesFlags flags;
      flags.op = m.op;
      flags.sizes = {static_cast<std::int64_t>(m.bytes)};
      const CollectivesResult r = run_collectives(two, flags);
      ASSERT_EQ(r.ranks, 2);
      ASSERT_EQ(r.rows.size(), 1u);
      const double predicted = static_cast<double>(r.rows.front().time.ns());
      const double measured = static_cast<double>(m.time.ns());
      const double error = 100 * (predicted / measured - 1);
      errors.push_back(std::abs(error));
      std::printf("| %s | %.0f | %.0f | %.0f | %+.1f%% |\n", r.op.c_str(), m.bytes, predicted / 1e3,
                  measured / 1e3, error);
    }
  }
  ASSERT_EQ(errors.size(), 12u);
  std::sort(errors.begin(), errors.end());
  const double median = (errors[5] + errors[6]) / 2;
  std::printf("median |error| %.1f%%, worst %.1f%%\n", median, errors.back());
  EXPECT_LE(median, 7.0);          // today 4.7%
  EXPECT_LE(errors.back(), 40.0);  // today 33.3% (the 1 MiB all-gather)
}

}  // namespace
}  // namespace ssgd::sim
