// A simulated run written as an ssgd trace (presentation/report/simulated_trace.h) and
// read back through profile_from_trace gives the layer times the run
// simulated, and replaying it under the same scenario gives the same
// iteration time, to the nanosecond: every steady iteration of a
// deterministic replay without per-rank perturbations is identical, so
// the profile's averages over ranks and iterations are exact integers, and
// the collectives, replayed as measured, take the times the model gave them.
#include "presentation/report/simulated_trace.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "walk/trace_profile.h"
#include "simulator/replay/replay.h"
#include "tests/support/test_files.h"
#include "traces/trace_reader.h"

namespace ssgd::sim {
namespace {

namespace fs = std::filesystem;

class SimulatedTraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ssgd_simulated_trace_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    profile_.model = "threenet";
    profile_.layers.push_back({0, "conv1", Duration(150'000), Duration(310'000), 4 << 20, std::nullopt, std::nullopt, std::nullopt});
    profile_.layers.push_back({1, "conv2", Duration(420'000), Duration(870'000), 16 << 20, std::nullopt, std::nullopt, std::nullopt});
    profile_.layers.push_back({2, "fc", Duration(90'000), Duration(200'000), 32 << 20, std::nullopt, std::nullopt, std::nullopt});
    scenario_.nodes = 2;
    scenario_.gpus_per_node = 2;
    scenario_.iterations = 4;
    scenario_.io_time = Duration(50'000);
    scenario_.h2d_time = Duration(30'000);
    scenario_.update_time = Duration(70'000);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, bool folded, std::int64_t max_ranks = 0) {
    ReplayOptions o;
    o.keep_schedule = true;
    o.keep_folded_schedule = folded;
    o.single_worker_baseline = false;
    result_ = replay(profile_, scenario_, o);
    report::SimulatedTraceOptions t;
    t.gpus_per_node = scenario_.gpus_per_node;
    t.provenance = "analytical: simulated by simulated_trace_test";
    t.max_ranks = max_ranks;
    const fs::path path = dir_ / name;
    report::write_simulated_trace(result_, t, path);
    return path;
  }

  fs::path dir_;
  trace::LayerProfile profile_;
  Scenario scenario_;
  ReplayResult result_;
};

TEST_F(SimulatedTraceTest, ReadsBackAsTheSimulatedProfileAndReplaysToTheSameIterationTime) {
  const fs::path path = write("sim.ssgdt", false);
  ASSERT_EQ(result_.ranks_simulated, 4);
  auto reader = trace::TraceReader::open(path);
  EXPECT_EQ(reader.metadata().hosts(0).clock().kind(), trace::v1::ClockDomain::SIMULATED);
  EXPECT_EQ(reader.metadata().world_size(), 4);
  EXPECT_EQ(reader.metadata().hosts_size(), 2);
  const auto back = walk::profile_from_trace(reader, path.string());
  EXPECT_EQ(back.ranks, 4);
  EXPECT_EQ(back.iterations_seen, 4);
  ASSERT_EQ(back.profile.layers.size(), 3u);
  for (std::size_t l = 0; l < 3; ++l) {
    const auto& got = back.profile.layers[l];
    const auto& want = profile_.layers[l];
    EXPECT_EQ(got.name, want.name);
    EXPECT_EQ(got.forward, want.forward) << want.name;
    EXPECT_EQ(got.backward, want.backward) << want.name;
    EXPECT_EQ(got.grad_bytes, want.grad_bytes) << want.name;
    ASSERT_TRUE(got.comm.has_value());
    EXPECT_GT(got.comm->ns(), 0) << want.name;
  }
  // The update kernels come after the last backward range: 4 ranks x 3
  // steady iterations, and the profile's update is the simulated one.
  EXPECT_EQ(back.kernels_outside_ranges, 12);
  EXPECT_EQ(back.kernels_update, 12);
  EXPECT_EQ(back.profile.update, scenario_.update_time);

  ReplayOptions o;
  o.single_worker_baseline = false;
  const ReplayResult again = replay(back.profile, scenario_, o);
  EXPECT_TRUE(again.comm_replayed);
  EXPECT_EQ(again.iteration_time, result_.iteration_time);
  EXPECT_EQ(again.iteration_times, result_.iteration_times);
}

TEST_F(SimulatedTraceTest, FoldedRunWritesTheSameFileAsTheFullOne) {
  const fs::path full = write("full.ssgdt", false);
  const fs::path folded = write("folded.ssgdt", true);
  EXPECT_EQ(result_.ranks_simulated, 1);
  EXPECT_EQ(ssgd::testing::read_file_bytes(full), ssgd::testing::read_file_bytes(folded));
}

TEST_F(SimulatedTraceTest, TraceRanksLimitsTheRanksWritten) {
  const fs::path path = write("two.ssgdt", true, 2);
  auto reader = trace::TraceReader::open(path);
  trace::v1::Event ev;
  std::int32_t max_rank = -1;
  std::uint64_t collectives = 0;
  while (reader.next(ev)) {
    max_rank = std::max(max_rank, ev.rank());
    if (ev.has_collective()) {
      ++collectives;
      EXPECT_EQ(ev.collective().nranks(), 4);
      EXPECT_LT(ev.collective().sequence_number(), 12u);  // 3 per iteration, 4 iterations
    }
  }
  EXPECT_EQ(max_rank, 1);
  EXPECT_EQ(collectives, 2u * 4u * 3u);
  EXPECT_EQ(reader.metadata().world_size(), 4);
  EXPECT_EQ(reader.metadata().hosts_size(), 1);
}

}  // namespace
}  // namespace ssgd::sim
