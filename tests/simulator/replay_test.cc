#include "simulator/replay.h"

#include <gtest/gtest.h>

#include "simulator/report.h"

namespace ssgd::sim {
namespace {

trace::LayerProfile profile() {
  trace::LayerProfile p;
  p.batch_per_gpu = 32;
  for (int l = 0; l < 4; ++l) {
    p.layers.push_back({l, "l" + std::to_string(l), Duration(1'000'000), Duration(2'000'000),
                        4'000'000, std::nullopt});
  }
  return p;
}

TEST(Replay, OneWorkerIsComputeOnly) {
  Scenario s;
  s.iterations = 3;
  const auto r = replay(profile(), s);
  EXPECT_EQ(r.iteration_time, Duration(12'000'000));
  EXPECT_EQ(r.breakdown.compute, Duration(12'000'000));
  EXPECT_EQ(r.breakdown.exposed_comm, Duration::zero());
  EXPECT_DOUBLE_EQ(r.scaling_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(r.throughput_samples_per_s, 32 / 0.012);
  EXPECT_EQ(r.collectives_per_iteration, 0);
}

TEST(Replay, MoreWorkersAreSlowerPerIterationAndReportIsConsistent) {
  Scenario s;
  s.nodes = 4;
  s.gpus_per_node = 2;
  s.iterations = 4;
  s.overlap = OverlapPolicy::kBsp;
  const auto bsp = replay(profile(), s);
  s.overlap = OverlapPolicy::kWfbp;
  const auto wfbp = replay(profile(), s);
  EXPECT_GT(bsp.iteration_time, wfbp.iteration_time);
  EXPECT_LT(wfbp.scaling_efficiency, 1.0);
  EXPECT_NEAR(wfbp.speedup, 8 * wfbp.scaling_efficiency, 1e-12);
  EXPECT_EQ(bsp.breakdown.exposed_comm, bsp.comm_per_iteration);
  EXPECT_EQ(wfbp.collectives_per_iteration, 4);
  EXPECT_EQ(*wfbp.closed_form, wfbp.iteration_time);

  const auto j = report_json(wfbp, s, {"x.csv", "layer-profile-csv", "", "", ""});
  for (const char* key : {"iteration_time_ns", "throughput_samples_per_s", "scaling_efficiency"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* key : {"compute_ns", "exposed_comm_ns", "io_ns", "idle_ns"}) {
    EXPECT_TRUE(j["breakdown"].contains(key)) << key;
  }
  EXPECT_EQ(j["iteration_time_ns"].get<std::int64_t>(), wfbp.iteration_time.ns());
}

TEST(Replay, MeasuredCommIsReplayedAsGiven) {
  auto p = profile();
  for (auto& row : p.layers) row.comm = Duration(5'000'000);
  Scenario s;
  s.nodes = 2;
  s.overlap = OverlapPolicy::kBsp;
  s.iterations = 2;
  const auto r = replay(p, s);
  EXPECT_TRUE(r.comm_replayed);
  EXPECT_EQ(r.comm_per_iteration, Duration(20'000'000));
  EXPECT_EQ(r.iteration_time, Duration(12'000'000 + 20'000'000));
}

TEST(Replay, IoAndUpdateAreOnThePath) {
  Scenario s;
  s.io_time = Duration(500);
  s.h2d_time = Duration(250);
  s.update_time = Duration(100);
  s.iterations = 2;
  const auto r = replay(profile(), s);
  EXPECT_EQ(r.iteration_time, Duration(12'000'000 + 850));
  EXPECT_EQ(r.breakdown.io, Duration(750));
}

}  // namespace
}  // namespace ssgd::sim
