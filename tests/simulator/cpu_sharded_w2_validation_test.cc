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
// and memory targets (3% and 8%; 10%) met, the what-if targets (5% and 15%)
// met by the link-rate and prefetch what-ifs, not by the strategy ones.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

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

GridRun* replayed(const char* name) {
  auto* r = new GridRun{ssgd::testing::replay_bundled_dataset(kDatasets / name), {}};
  ssgd::testing::group_sharded_cases(r->data);
  r->memory = ssgd::testing::replay_memory_errors(r->data);
  return r;
}

// The grid and its repeat minutes later (cpu-sharded-w2-2), held alike.
class CpuShardedW2 : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    first_ = replayed("cpu-sharded-w2");
    repeat_ = replayed("cpu-sharded-w2-2");
  }
  static void TearDownTestSuite() {
    delete first_;
    delete repeat_;
  }
  static inline GridRun* first_ = nullptr;
  static inline GridRun* repeat_ = nullptr;
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

// Met in both runs: median 3% or less, worst 8% or less.
TEST_F(CpuShardedW2, ReplaysMeetTheTargets) {
  for (const GridRun* r : {first_, repeat_}) {
    SCOPED_TRACE(r->data.manifest.name);
    const Group& g = r->group("replays");
    EXPECT_LE(g.median_abs(), 3.0);  // today 1.1% and 2.9%
    EXPECT_LE(g.worst_abs, 8.0);     // today 4.9% and 7.1% (unshaped ZeRO-3 f0 in both)
  }
}

// Another link rate and another prefetch: met at the median (5%). Another
// strategy: not met. A sharded capture holds compute slowed by the loop's
// gloo threads on the rank's one core (its gathers and reduces overlap the
// compute), and DDP's by its own all-reduces' threads, each a different
// share: DDP predicted from ZeRO-3 at 1 Gbit/s comes out 32-37% slow,
// ZeRO-3 from DDP up to 25% fast (section 12).
TEST_F(CpuShardedW2, WhatIfs) {
  for (const GridRun* r : {first_, repeat_}) {
    SCOPED_TRACE(r->data.manifest.name);
    EXPECT_LE(r->group("what-if: link rate").median_abs(), 5.0);  // today 3.1%, 4.4%
    EXPECT_LE(r->group("what-if: link rate").worst_abs, 22.0);    // today 18.2%, 16.7%
    EXPECT_LE(r->group("what-if: prefetch").median_abs(), 5.0);   // today 2.6%, 1.9%
    EXPECT_LE(r->group("what-if: prefetch").worst_abs, 12.0);     // today 9.2%, 10.1%
    EXPECT_LE(r->group("what-if: strategy").median_abs(), 18.0);  // today 12.5%, 15.7%
    EXPECT_LE(r->group("what-if: strategy").worst_abs, 40.0);     // today 36.6%, 37.3%
    EXPECT_LE(r->group("what-ifs").median_abs(), 10.0);           // today 8.6%, 9.1%
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
