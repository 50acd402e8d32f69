// Issue 34's emulated-cluster what-ifs between sharding strategies, with the
// interference model of issue 37 on (docs/validation.md, section 12, "With
// interference"), and the repeated runs of the sharded grids ("The same grids
// run again"). Each rank of the sharded testbed grids has half a core for
// its training thread and gloo's two workers, so compute and communication
// that overlap slow each other; a capture holds its own strategy's share of
// that, and a what-if to another strategy needs the target's.
//
// Four datasets, two runs of two grids on one machine:
//   cpu-sharded-mini, cpu-sharded-accum       (the first run of each grid)
//   cpu-sharded-mini-2, cpu-sharded-accum-2   (both again later that day)
// each replayed three ways:
//   none                the model off (the first runs' own tests,
//                       cpu_sharded*_validation_test.cc, hold theirs; this
//                       one the repeats')
//   processor sharing   interference.host.compute = host.comm = 1, from first
//                       principles: the training thread and a busy gloo
//                       worker on one CPU budget each run at half speed, so
//                       overlapped work takes twice as long (docs/validation.md
//                       says where that does not hold); nothing fitted
//   fitted              the factors `ssgd calibrate --interference` fits on
//                       the other grid of the same run (mini's 2-rank
//                       captures for accum, accum's captures for mini),
//                       against that dataset's own gloo sweep; never on the
//                       captures replayed or their measured times
// The test prints every group and holds today's figures.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tests/support/dataset_validation.h"

namespace ssgd::sim {
namespace {

namespace fs = std::filesystem;
using Group = ssgd::testing::ErrorGroup;
using ssgd::testing::HostFactors;
using ssgd::testing::ReplayedDataset;

fs::path dataset(const std::string& name) {
  return fs::path(SSGD_SOURCE_DIR) / "traces/datasets" / name;
}

const std::vector<std::string> kMiniTwoRanks = {
    "mlp-w2-1gbit-b25-cpu0p5", "mlp-w2-1gbit-zero2-cpu0p5", "mlp-w2-1gbit-zero3-f0-cpu0p5",
    "mlp-w2-1gbit-zero3-f1-cpu0p5"};
const std::vector<std::string> kAccum = {
    "mlp-w2-1gbit-b25-cpu0p5",      "mlp-w2-1gbit-b25-k2-cpu0p5",
    "mlp-w2-1gbit-zero2-cpu0p5",    "mlp-w2-1gbit-zero2-k2-cpu0p5",
    "mlp-w2-1gbit-zero3-f1-cpu0p5", "mlp-w2-1gbit-zero3-f1-k2-cpu0p5"};
const char* kCalibration = "network/1gbit-w2-cpu0p5/calibration.yaml";

class CpuShardedInterference : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fitted_ = new std::map<std::string, HostFactors>{
        {"cpu-sharded-mini",
         ssgd::testing::fit_host_factors(dataset("cpu-sharded-accum"), kAccum, kCalibration)},
        {"cpu-sharded-accum",
         ssgd::testing::fit_host_factors(dataset("cpu-sharded-mini"), kMiniTwoRanks, kCalibration)},
        {"cpu-sharded-mini-2",
         ssgd::testing::fit_host_factors(dataset("cpu-sharded-accum-2"), kAccum, kCalibration)},
        {"cpu-sharded-accum-2", ssgd::testing::fit_host_factors(dataset("cpu-sharded-mini-2"),
                                                                kMiniTwoRanks, kCalibration)},
    };
    runs_ = new std::map<std::string, ReplayedDataset>;
    memory_ = new std::map<std::string, Group>;
    std::printf("\n| dataset | factors | host.compute | host.comm |\n|---|---|---|---|\n");
    for (const auto& [name, fit] : *fitted_) {
      const HostFactors sharing{1.0, 1.0};
      for (const auto& [how, f] : {std::pair{std::string("processor sharing"), sharing},
                                   std::pair{std::string("fitted"), fit}}) {
        std::printf("| %s | %s | %.3f | %.3f |\n", name.c_str(), how.c_str(), f.compute, f.comm);
        ReplayedDataset d = ssgd::testing::replay_bundled_dataset(
            dataset(name), ssgd::testing::with_host_contention(f));
        ssgd::testing::group_sharded_cases(d);
        (*memory_)[name + " / " + how] = ssgd::testing::replay_memory_errors(d);
        runs_->emplace(name + " / " + how, std::move(d));
      }
      if (name.ends_with("-2")) {  // the repeats, with the model off
        ReplayedDataset d = ssgd::testing::replay_bundled_dataset(dataset(name));
        ssgd::testing::group_sharded_cases(d);
        (*memory_)[name + " / none"] = ssgd::testing::replay_memory_errors(d);
        runs_->emplace(name + " / none", std::move(d));
      }
    }
  }
  static void TearDownTestSuite() {
    delete runs_;
    delete fitted_;
    delete memory_;
  }
  static const Group& group(const std::string& run, const std::string& name) {
    return runs_->at(run).groups.at(name);
  }

  static inline std::map<std::string, HostFactors>* fitted_ = nullptr;
  static inline std::map<std::string, ReplayedDataset>* runs_ = nullptr;
  static inline std::map<std::string, Group>* memory_ = nullptr;  // each run's replays
};

TEST_F(CpuShardedInterference, PrintGroups) {
  std::printf(
      "\n| dataset / factors | group | cases | median abs error | worst abs error | worst case |\n"
      "|---|---|---|---|---|---|\n");
  for (const auto& [run, d] : *runs_) {
    EXPECT_EQ(d.problems, 0u) << run;
    for (const auto& [name, g] : d.groups) {
      if (name == "replay") continue;  // the same as "replays"
      std::printf("| %s | %s | %zu | %.1f%% | %.1f%% | %s |\n", run.c_str(), name.c_str(),
                  g.errors.size(), g.median_abs(), g.worst_abs, g.worst.c_str());
    }
    const Group& m = memory_->at(run);
    std::printf("| %s | memory (replays) | %zu | %.1f%% | %.1f%% | %s |\n", run.c_str(),
                m.errors.size(), m.median_abs(), m.worst_abs, m.worst.c_str());
  }
}

// The repeats (traces/datasets/cpu-sharded-mini-2, cpu-sharded-accum-2),
// run later the same day when the machine ran 1-29% slower and noisier, with
// gloo's all-gather and reduce swept alone as well so that the replay times
// them by the sweep and not by the link's rate: the figures move by about
// the noise and keep the first runs' pattern.
TEST_F(CpuShardedInterference, TheRepeatsAsTheFirstRuns) {
  const auto& mini = runs_->at("cpu-sharded-mini-2 / none").groups;
  EXPECT_EQ(mini.at("replays").errors.size(), 8u);
  EXPECT_LE(mini.at("replays").median_abs(), 7.0);  // today 5.1% (first run 8.6%)
  EXPECT_LE(mini.at("replays").worst_abs, 14.5);    // 13.4% (12.3%)
  EXPECT_EQ(mini.at("what-ifs").errors.size(), 28u);
  EXPECT_LE(mini.at("what-ifs").median_abs(), 15.5);  // 13.2% (11.7%)
  EXPECT_LE(mini.at("what-ifs").worst_abs, 39.0);     // 27.8% (29.3%)
  EXPECT_EQ(memory_->at("cpu-sharded-mini-2 / none").errors.size(), 8u);
  EXPECT_LE(memory_->at("cpu-sharded-mini-2 / none").median_abs(), 9.0);  // 7.6% (5.7%)
  EXPECT_LE(memory_->at("cpu-sharded-mini-2 / none").worst_abs, 14.0);    // 12.2% (11.9%)

  const auto& accum = runs_->at("cpu-sharded-accum-2 / none").groups;
  EXPECT_EQ(accum.at("replays").errors.size(), 6u);
  EXPECT_LE(accum.at("replays").median_abs(), 5.5);  // 4.6% (4.0%)
  EXPECT_LE(accum.at("replays").worst_abs, 13.0);    // 11.0% (7.0%)
  EXPECT_EQ(accum.at("what-if: 1 -> 2 micro-batches").errors.size(), 3u);
  EXPECT_LE(accum.at("what-if: 1 -> 2 micro-batches").worst_abs, 8.0);  // 2.7% (6.5%)
  EXPECT_EQ(accum.at("what-if: strategy").errors.size(), 12u);
  EXPECT_LE(accum.at("what-if: strategy").worst_abs, 30.0);  // 27.5% (29.9%)
  EXPECT_EQ(memory_->at("cpu-sharded-accum-2 / none").errors.size(), 6u);
  EXPECT_LE(memory_->at("cpu-sharded-accum-2 / none").worst_abs, 10.0);  // 8.6% (9.1%)
}

// The fits: the operators beside gloo's collectives ran 37-57% slower than
// alone, below processor sharing's 100% (gloo's workers wait on the link part
// of the time, and then take no CPU); gloo's collectives beside compute,
// against the sweep of the same network, 50-99% slower. The first run's sweep
// held the all-reduce only (the fit sees DDP's few all-reduces), the
// repeat's the all-gathers too. Until 2026-11-29 the fit took a trace's
// all-gather size (the gathered buffer) for one rank's share and timed it n
// times too large, which left the repeat's comm factor at 0 and 0.024.
TEST_F(CpuShardedInterference, TheFits) {
  for (const auto& [name, f] : *fitted_) {
    EXPECT_GT(f.compute, 0.3) << name;  // today 0.374 to 0.565
    EXPECT_LT(f.compute, 1.0) << name;
    EXPECT_GT(f.comm, 0.4) << name;  // today 0.495 to 0.989
    EXPECT_LT(f.comm, 1.2) << name;
  }
  EXPECT_GT(fitted_->at("cpu-sharded-mini-2").comm, 0.6);   // today 0.796
  EXPECT_GT(fitted_->at("cpu-sharded-accum-2").comm, 0.8);  // today 0.989
}

// Processor sharing, nothing fitted: the accumulation grid meets every target
// in its first run (replays 1.6% and 6.1%, what-ifs 1.8% and 6.2%; without:
// 4.0% and 7.0%, 14.1% and 29.9%) and its what-ifs' in the repeat (4.0% and
// 11.2%; replays 3.4% and 9.3%); the mini grid's what-ifs close from 11.7%
// and 29.3% to 5.4% and 21.1% (repeat: 13.2% and 27.8% to 8.7% and 26.3%),
// what is left mostly 2 -> 4 ranks.
TEST_F(CpuShardedInterference, ProcessorSharing) {
  const auto held = [](const std::string& run, double replay_median, double replay_worst,
                       double whatif_median, double whatif_worst) {
    EXPECT_LE(group(run, "replays").median_abs(), replay_median) << run;
    EXPECT_LE(group(run, "replays").worst_abs, replay_worst) << run;
    EXPECT_LE(group(run, "what-ifs").median_abs(), whatif_median) << run;
    EXPECT_LE(group(run, "what-ifs").worst_abs, whatif_worst) << run;
  };
  held("cpu-sharded-accum / processor sharing", 3.0, 8.0, 5.0, 15.0);     // the targets
  held("cpu-sharded-accum-2 / processor sharing", 3.5, 11.0, 5.0, 15.0);  // what-ifs: the targets
  held("cpu-sharded-mini / processor sharing", 4.5, 12.0, 6.0, 23.0);     // 2.3, 11.1, 5.4, 21.1
  held("cpu-sharded-mini-2 / processor sharing", 9.0, 15.0, 11.0, 32.0);  // 7.2, 10.0, 8.7, 26.3
  EXPECT_LE(group("cpu-sharded-mini / processor sharing", "what-if: strategy").median_abs(), 6.0);
}

// The memory estimate follows the simulated schedule (the gradients waiting
// for their reductions, docs/sharding.md). With processor sharing the
// reductions lag the backward as far as they did on the testbed, and
// ZeRO-2 at 4 ranks, 11.9% and 12.2% low without the model, comes out -1.7%
// and -7.1%: every configuration of the first runs within 10% (worst -9.2%),
// the repeat's mini 7 of 8 (ZeRO-2 at 2 ranks -10.7%).
TEST_F(CpuShardedInterference, MemoryWithProcessorSharing) {
  const auto worst = [](const std::string& run) {
    return memory_->at(run + " / processor sharing").worst_abs;
  };
  EXPECT_LE(worst("cpu-sharded-mini"), 10.0);     // today 9.2% (without: 11.9%)
  EXPECT_LE(worst("cpu-sharded-accum"), 10.0);    // 9.1%
  EXPECT_LE(worst("cpu-sharded-mini-2"), 11.5);   // 10.7% (without: 12.2%)
  EXPECT_LE(worst("cpu-sharded-accum-2"), 10.0);  // 8.6%
  for (const auto& [run, d] : *runs_) {
    if (!run.ends_with("processor sharing")) continue;
    for (const DatasetCase& c : d.cases) {
      if (c.kind == DatasetCaseKind::kReplay && c.entry == "mlp-w4-1gbit-zero2-cpu0p5") {
        EXPECT_LE(std::abs(c.memory_error_percent), 8.0) << run;  // -1.7%, -7.1%
      }
    }
  }
}

// Fitted on the other grid of the same run: the what-ifs close about as far
// as with processor sharing (mini 5.3% and 17.0%, accum 3.6% and 9.7%,
// mini-2 9.1% and 18.5%, accum-2 4.7% and 10.8%); with the repeat's comm
// factor mis-fitted at 0 (above), mini-2 and accum-2 had 9.4% and 23.8%,
// 8.4% and 21.6%.
TEST_F(CpuShardedInterference, FittedOnTheOtherGrid) {
  const auto held = [](const std::string& run, double whatif_median, double whatif_worst) {
    EXPECT_LE(group(run, "what-ifs").median_abs(), whatif_median) << run;
    EXPECT_LE(group(run, "what-ifs").worst_abs, whatif_worst) << run;
  };
  held("cpu-sharded-mini / fitted", 8.5, 19.0);
  held("cpu-sharded-accum / fitted", 5.0, 15.0);
  held("cpu-sharded-mini-2 / fitted", 11.0, 21.0);
  held("cpu-sharded-accum-2 / fitted", 6.0, 14.0);
}

}  // namespace
}  // namespace ssgd::sim
