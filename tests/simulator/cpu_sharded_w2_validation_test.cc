// Issue 34's sharded loops where the measurement is quiet: the bundled
// dataset traces/datasets/cpu-sharded-w2 (tools/testbed/grids/cpu-sharded-w2.toml,
// docs/testbed.md "Sharded training"): the mlp trained on CPU over gloo
// between network namespaces, 2 ranks of one core each, on the unshaped
// network and at 1 Gbit/s, by PyTorch DDP (25 MiB buckets) and by ZeRO-2 and
// ZeRO-3 written by hand (tools/testbed/sharded.py), ZeRO-3 with forward
// prefetch 0 and 1; and its repeat minutes later, cpu-sharded-w2-2 (medians
// within 2.3% of the first's). Their iterations spread by 2-10% (p90 - p10
// over the median, median 5.4% and 5.1%), where the half-core grids' spread
// by 20-30%.
//   replay    each configuration under its own scenario
//   what-if   from the capture of a configuration that differs in the
//             strategy, the prefetch or the link rate
//   memory    each case's per-GPU memory estimate against the rank's peak
//             resident set above its baseline (measured.memory_bytes)
// The test prints the tables of docs/validation.md, section 12 ("Two ranks
// of a core each"), and holds each group to today's figures: the replay
// targets (3% and 8%) met in the first run, the worst in the repeat; memory
// (10%) met; the what-if targets (5% and 15%) met at the median by the
// link-rate and prefetch what-ifs, not by the strategy ones, which the
// interference model fitted on the other run brings to 5-7% and 14-18%.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "simulator/calibration/interference_fit.h"
#include "tests/support/dataset_validation.h"

namespace ssgd::sim {
namespace {

namespace fs = std::filesystem;
const fs::path kDatasets = fs::path(SSGD_SOURCE_DIR) / "traces/datasets";

using Group = ssgd::testing::ErrorGroup;

// One run of the grid, replayed: its groups and its replays' memory errors.
struct GridRun {
  ssgd::testing::ReplayedDataset data;
  Group memory;
  [[nodiscard]] const Group& group(const std::string& name) const { return data.groups.at(name); }
};

GridRun* replayed(const char* name,
                  std::function<void(Scenario&, const trace::DatasetEntry&)> adjust = {}) {
  auto* r =
      new GridRun{ssgd::testing::replay_bundled_dataset(kDatasets / name, std::move(adjust)), {}};
  ssgd::testing::group_sharded_cases(r->data);
  r->memory = ssgd::testing::replay_memory_errors(r->data);
  return r;
}

// The host's interference factors of each network (`ssgd calibrate
// --interference` on the four captures of that network of the run `name`,
// against its gloo sweep), and an adjust that applies to each entry those of
// its own network. A link-rate what-if's capture ran on the other network:
// its own share is taken out by the target's factors too.
struct NetworkFactors {
  ssgd::testing::HostFactors unshaped, gbit;
};
NetworkFactors fit_networks(const char* name) {
  const fs::path dir = kDatasets / name;
  const auto fit = [&](const std::string& rate) {
    std::vector<std::string> ids;
    for (const char* c : {"b25", "zero2", "zero3-f0", "zero3-f1"}) {
      ids.push_back("mlp-w2-" + rate + "-" + c);
    }
    return ssgd::testing::fit_host_factors(dir, ids, "network/" + rate + "-w2/calibration.yaml");
  };
  return {fit("unshaped"), fit("1gbit")};
}
std::function<void(Scenario&, const trace::DatasetEntry&)> with_network_contention(
    NetworkFactors f) {
  return [f](Scenario& s, const trace::DatasetEntry& e) {
    const bool gbit = e.config.at("rate").get<std::string>() == "1gbit";
    ssgd::testing::with_host_contention(gbit ? f.gbit : f.unshaped)(s, e);
  };
}

// interference.host.cpu_per_byte (the model demand) as `ssgd calibrate
// --interference` fits it on all eight captures of the run `name`.
double fit_cpu_per_byte(const char* name) {
  std::vector<fs::path> traces;
  for (const auto& e : fs::directory_iterator(kDatasets / name / "configs")) {
    traces.push_back(e.path() / "trace.ssgdt");
  }
  std::sort(traces.begin(), traces.end());
  const InterferenceFit fit = fit_interference(traces);
  return fit.cpu_per_byte ? fit.cpu_per_byte->median : 0.0;
}

std::function<void(Scenario&, const trace::DatasetEntry&)> with_demand(double cpu_per_byte) {
  return [cpu_per_byte](Scenario& s, const trace::DatasetEntry&) {
    s.interference.model = InterferenceModel::kDemand;
    s.interference.host_cpu_per_byte = cpu_per_byte;
  };
}

// The grid and its repeat minutes later (cpu-sharded-w2-2), held alike; and
// each replayed with the interference factors, and with the CPU a byte,
// fitted on the other run.
class CpuShardedW2 : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    first_ = replayed("cpu-sharded-w2");
    repeat_ = replayed("cpu-sharded-w2-2");
    first_fit_ = fit_networks("cpu-sharded-w2");
    repeat_fit_ = fit_networks("cpu-sharded-w2-2");
    first_fitted_ = replayed("cpu-sharded-w2", with_network_contention(repeat_fit_));
    repeat_fitted_ = replayed("cpu-sharded-w2-2", with_network_contention(first_fit_));
    first_c_ = fit_cpu_per_byte("cpu-sharded-w2");
    repeat_c_ = fit_cpu_per_byte("cpu-sharded-w2-2");
    first_demand_ = replayed("cpu-sharded-w2", with_demand(repeat_c_));
    repeat_demand_ = replayed("cpu-sharded-w2-2", with_demand(first_c_));
  }
  static void TearDownTestSuite() {
    for (GridRun* r :
         {first_, repeat_, first_fitted_, repeat_fitted_, first_demand_, repeat_demand_}) {
      delete r;
    }
  }
  static inline GridRun* first_ = nullptr;
  static inline GridRun* repeat_ = nullptr;
  static inline NetworkFactors first_fit_, repeat_fit_;
  static inline GridRun* first_fitted_ = nullptr;   // with the repeat's factors
  static inline GridRun* repeat_fitted_ = nullptr;  // with the first run's
  static inline double first_c_ = 0, repeat_c_ = 0;  // ns a byte
  static inline GridRun* first_demand_ = nullptr;    // the model demand, the repeat's c
  static inline GridRun* repeat_demand_ = nullptr;   // the first run's c
};

TEST_F(CpuShardedW2, DatasetsAreIntact) {
  for (const GridRun* r : {first_, repeat_}) {
    EXPECT_EQ(r->data.problems, 0u);
    EXPECT_EQ(r->data.manifest.entries.size(), 8u);
    EXPECT_EQ(r->group("replays").errors.size(), 8u);
    EXPECT_EQ(r->group("what-ifs").errors.size(), 32u);
  }
}

TEST_F(CpuShardedW2, PrintTables) {
  for (const GridRun* r : {first_, repeat_}) {
    std::printf("\n### %s\n", r->data.manifest.name.c_str());
    ssgd::testing::print_validation_tables(r->data);
    ssgd::testing::print_memory_table(r->data, r->memory);
  }
}

// The targets, median 3% or less and worst 8% or less: met in the first run,
// the worst in the repeat (its median 3.8%). The waits a ZeRO-3 capture's
// backward pre-hooks held (22 ms at 1 Gbit/s) are no longer counted as
// compute (docs/kineto.md): before that, 1.1% and 2.9%, 4.9% and 7.1%.
TEST_F(CpuShardedW2, Replays) {
  const Group& first = first_->group("replays");
  EXPECT_LE(first.median_abs(), 3.0);  // today 2.1%
  EXPECT_LE(first.worst_abs, 8.0);     // today 5.8% (unshaped ZeRO-3 f0)
  const Group& repeat = repeat_->group("replays");
  EXPECT_LE(repeat.median_abs(), 4.0);  // today 3.8%
  EXPECT_LE(repeat.worst_abs, 8.0);     // today 7.8% (unshaped ZeRO-3 f0)
}

// Another link rate and another prefetch: met at the median (5%). Another
// strategy: not met. A sharded capture holds compute slowed by the loop's
// gloo threads on the rank's one core (its gathers and reduces overlap the
// compute), and DDP's by its own all-reduces' threads, each a different
// share: DDP predicted from ZeRO-3 comes out 11-35% slow, ZeRO-3 from DDP up
// to 25% fast (section 12).
TEST_F(CpuShardedW2, WhatIfs) {
  for (const GridRun* r : {first_, repeat_}) {
    SCOPED_TRACE(r->data.manifest.name);
    EXPECT_LE(r->group("what-if: link rate").median_abs(), 5.0);  // today 1.6%, 4.4%
    EXPECT_LE(r->group("what-if: link rate").worst_abs, 12.0);    // today 3.9%, 10.6%
    EXPECT_LE(r->group("what-if: prefetch").median_abs(), 5.0);   // today 3.4%, 3.7%
    EXPECT_LE(r->group("what-if: prefetch").worst_abs, 12.0);     // today 10.1%, 10.8%
    EXPECT_LE(r->group("what-if: strategy").median_abs(), 14.0);  // today 11.4%, 12.0%
    EXPECT_LE(r->group("what-if: strategy").worst_abs, 38.0);     // today 25.6%, 35.3%
    EXPECT_LE(r->group("what-ifs").median_abs(), 9.0);            // today 7.5%, 7.9%
  }
}

// With interference.model: contention, each network's host factors fitted
// on the other run's captures of that network (docs/validation.md, section
// 12, "Two ranks of a core each"). The strategy what-ifs close from 11-12%
// and 26-35% to 4-7% and 14-17%; at 1 Gbit/s ZeRO-2 comes out 10-14% slow
// from every capture (its reductions, beside the backward, slowed by the
// fitted 25-27% that the link-bound sweep does not have), the other 1 Gbit/s
// cases within 8.6%; the link-rate what-ifs of the repeat, 23% worst, are
// where a factor per network overcounts (section 12).
TEST_F(CpuShardedW2, WithInterferenceFittedOnTheOtherRun) {
  std::printf(
      "\nfactors (compute, comm): cpu-sharded-w2 unshaped %.3f %.3f, 1gbit %.3f %.3f; "
      "cpu-sharded-w2-2 unshaped %.3f %.3f, 1gbit %.3f %.3f\n",
      first_fit_.unshaped.compute, first_fit_.unshaped.comm, first_fit_.gbit.compute,
      first_fit_.gbit.comm, repeat_fit_.unshaped.compute, repeat_fit_.unshaped.comm,
      repeat_fit_.gbit.compute, repeat_fit_.gbit.comm);
  // The fits agree across the runs: the machine's, not one run's.
  EXPECT_NEAR(first_fit_.gbit.compute, repeat_fit_.gbit.compute, 0.1);
  EXPECT_NEAR(first_fit_.unshaped.compute, repeat_fit_.unshaped.compute, 0.1);
  for (const GridRun* r : {first_fitted_, repeat_fitted_}) {
    SCOPED_TRACE(r->data.manifest.name);
    std::printf("\n### %s, with the other run's factors\n", r->data.manifest.name.c_str());
    ssgd::testing::print_validation_tables(r->data);
    for (const DatasetCase& c : r->data.cases) {
      if (r->data.config(c.entry).at("rate") == "1gbit" &&
          r->data.config(c.from).at("rate") == "1gbit") {
        const bool zero2 = r->data.config(c.entry).at("strategy") == "zero2";
        EXPECT_LE(std::abs(c.error_percent), zero2 ? 15.0 : 9.0) << c.name();  // 14.0%, 8.6%
      }
    }
    EXPECT_LE(r->group("what-if: strategy").median_abs(), 8.0);  // today 3.8%, 6.8%
    EXPECT_LE(r->group("what-if: strategy").worst_abs, 18.0);    // today 13.5%, 16.9%
    EXPECT_LE(r->group("what-ifs").median_abs(), 8.5);           // today 3.8%, 7.6%
    EXPECT_LE(r->group("replays").worst_abs, 12.5);              // today 10.4%, 11.4%
  }
}

// The model demand with one constant for both networks, fitted on the other
// run's eight captures (1.119 and 1.016 ns a byte): every what-if of both
// runs within 15% (the target), link-rate ones included, which a factor per
// network cannot give (20% and 26% above); the replays' worst, the unshaped
// ZeRO-3 ones, 8-11% fast (docs/validation.md, section 12).
TEST_F(CpuShardedW2, WithTheCpuByDemandFittedOnTheOtherRun) {
  std::printf("\ninterference.host.cpu_per_byte: cpu-sharded-w2 %.3f, cpu-sharded-w2-2 %.3f ns\n",
              first_c_, repeat_c_);
  EXPECT_NEAR(first_c_, repeat_c_, 0.15);  // the machine's, not one run's
  EXPECT_GT(first_c_, 0.7);
  EXPECT_LT(first_c_, 1.3);
  for (const GridRun* r : {first_demand_, repeat_demand_}) {
    SCOPED_TRACE(r->data.manifest.name);
    std::printf("\n### %s, demand with the other run's constant\n",
                r->data.manifest.name.c_str());
    ssgd::testing::print_validation_tables(r->data);
    EXPECT_LE(r->group("what-ifs").worst_abs, 15.0);             // today 12.5%, 14.6%
    EXPECT_LE(r->group("what-ifs").median_abs(), 5.5);           // today 4.2%, 5.4%
    EXPECT_LE(r->group("what-if: link rate").worst_abs, 11.5);   // today 4.3%, 10.4%
    EXPECT_LE(r->group("what-if: strategy").median_abs(), 6.0);  // today 5.6%, 5.5%
    EXPECT_LE(r->group("replays").worst_abs, 12.5);              // today 8.6%, 11.3%
  }
}

// Within 10% in every replay of both runs (the target).
TEST_F(CpuShardedW2, Memory) {
  for (const GridRun* r : {first_, repeat_}) {
    SCOPED_TRACE(r->data.manifest.name);
    EXPECT_EQ(r->memory.errors.size(), 8u);
    EXPECT_LE(r->memory.worst_abs, 10.0);    // today 6.8% (unshaped ZeRO-2), 3.9%
    EXPECT_LE(r->memory.median_abs(), 4.0);  // today 3.0%, 3.4%
  }
}

}  // namespace
}  // namespace ssgd::sim
