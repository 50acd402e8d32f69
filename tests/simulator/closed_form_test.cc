// The simulator's first correctness test: for random layer profiles the
// simulated iteration time of every policy equals the closed form of the
// S-SGD DAG model (DESIGN.md) exactly, in integer nanoseconds: BSP's sum
// for bsp and single, WFBP's recurrence over the plan's groups for the rest.
#include "simulator/replay/closed_form.h"

#include <gtest/gtest.h>

#include <random>

#include "simulator/network/comm_model.h"
#include "simulator/replay/replay.h"
#include "simulator/scenario/scenario_network.h"

namespace ssgd::sim {
namespace {

trace::LayerProfile random_profile(std::mt19937_64& rng, bool with_comm) {
  trace::LayerProfile p;
  const int layers = 1 + static_cast<int>(rng() % 60);
  for (int l = 0; l < layers; ++l) {
    trace::LayerRow row;
    row.layer = l;
    row.name = "layer" + std::to_string(l);
    row.forward = Duration(static_cast<std::int64_t>(rng() % 2'000'000));
    row.backward = Duration(static_cast<std::int64_t>(rng() % 4'000'000));
    row.grad_bytes = rng() % 4 == 0 ? 0 : static_cast<std::int64_t>(rng() % 50'000'000);
    if (with_comm) row.comm = Duration(static_cast<std::int64_t>(rng() % 6'000'000));
    p.layers.push_back(row);
  }
  return p;
}

Scenario random_scenario(std::mt19937_64& rng, OverlapPolicy policy) {
  static const char* intra[] = {"pcie3_x16", "nvlink2", "pcie5_x16"};
  static const char* inter[] = {"10gbe", "100gbe", "ib_edr100", "ib_ndr400"};
  Scenario s;
  s.nodes = 1 + static_cast<std::int64_t>(rng() % 8);
  s.gpus_per_node = 1 + static_cast<std::int64_t>(rng() % 4);
  s.intra_node.preset = intra[rng() % 3];
  s.inter_node.preset = inter[rng() % 4];
  s.iterations = 1 + static_cast<std::int64_t>(rng() % 5);
  s.overlap_policy = policy;
  s.io_time = Duration(static_cast<std::int64_t>(rng() % 1'000'000));
  s.h2d_time = Duration(static_cast<std::int64_t>(rng() % 500'000));
  s.update_time = Duration(static_cast<std::int64_t>(rng() % 800'000));
  return s;
}

class ClosedForm : public ::testing::TestWithParam<OverlapPolicy> {};

TEST_P(ClosedForm, RandomProfilesMatchExactly) {
  std::mt19937_64 rng(11 + static_cast<int>(GetParam()));
  for (int trial = 0; trial < 150; ++trial) {
    const bool with_comm = trial % 3 == 0;
    auto profile = random_profile(rng, with_comm);
    auto scenario = random_scenario(rng, GetParam());
    // Small buckets and buffers, so the fusion policies make many groups.
    scenario.policy_params.bucket_cap_bytes = 1 + static_cast<std::int64_t>(rng() % 80'000'000);
    scenario.policy_params.first_bucket_bytes = 1 + static_cast<std::int64_t>(rng() % 20'000'000);
    scenario.policy_params.fusion_threshold_bytes =
        1 + static_cast<std::int64_t>(rng() % 80'000'000);
    scenario.policy_params.cycle_time = Duration(static_cast<std::int64_t>(rng() % 3'000'000));
    // Half the profiles carry a measured update (as one from a trace does);
    // it is the update time unless the scenario sets workload.update_time.
    if (trial % 2 == 1) profile.update = Duration(static_cast<std::int64_t>(rng() % 800'000));
    scenario.update_time_given = trial % 4 == 3;
    const Scenario replayed = scenario_for_profile(scenario, profile);
    ASSERT_EQ(replayed.update_time, trial % 4 == 1 ? *profile.update : scenario.update_time);
    ReplayOptions opts;
    opts.single_worker_baseline = false;
    const auto result = replay(profile, scenario, opts);
    ASSERT_EQ(result.update_time, replayed.update_time) << "trial " << trial;
    const CommModel comm = scenario_comm_model(scenario);
    const auto expected = closed_form_iteration_time(GetParam(), layer_times(profile, replayed, comm));
    ASSERT_EQ(result.closed_form, expected) << "trial " << trial;
    ASSERT_EQ(result.iteration_time, expected)
        << "trial " << trial << ": " << profile.layers.size() << " layers, " << scenario.workers()
        << " workers, comm " << (with_comm ? "replayed" : "modelled");
    for (auto d : result.iteration_times) ASSERT_EQ(d, expected) << "trial " << trial;
    ASSERT_EQ(result.breakdown.total(), expected) << "trial " << trial;
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, ClosedForm,
                         ::testing::Values(OverlapPolicy::kBsp, OverlapPolicy::kWfbp,
                                           OverlapPolicy::kMgWfbp, OverlapPolicy::kDdp,
                                           OverlapPolicy::kHorovod, OverlapPolicy::kSingle),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

// With I/O prefetch every iteration after the first takes the closed form's
// time: t_h2d + max(t_io, W) at depth 1, max(t_io, t_h2d + W) deeper.
TEST(ClosedForm, PrefetchRandomProfilesMatchInSteadyState) {
  std::mt19937_64 rng(2024);
  for (int trial = 0; trial < 150; ++trial) {
    const auto profile = random_profile(rng, false);
    auto scenario = random_scenario(rng, trial % 2 == 0 ? OverlapPolicy::kWfbp : OverlapPolicy::kBsp);
    scenario.iterations = 2 + static_cast<std::int64_t>(rng() % 4);
    scenario.policy_params.prefetch_depth = 1 + static_cast<std::int64_t>(rng() % 3);
    // Reading is the bottleneck in about half the trials.
    scenario.io_time = Duration(static_cast<std::int64_t>(rng() % 150'000'000));
    ReplayOptions opts;
    opts.single_worker_baseline = false;
    const auto result = replay(profile, scenario, opts);
    const CommModel comm = scenario_comm_model(scenario);
    const auto expected = scenario_closed_form(scenario, layer_times(profile, scenario, comm));
    ASSERT_TRUE(expected);
    ASSERT_EQ(result.iteration_time, *expected)
        << "trial " << trial << ", depth " << scenario.policy_params.prefetch_depth;
    ASSERT_EQ(result.closed_form, expected);
    for (std::size_t i = 1; i < result.iteration_times.size(); ++i) {
      ASSERT_EQ(result.iteration_times[i], *expected) << "trial " << trial << ", iteration " << i;
    }
  }
}

TEST(ClosedForm, HandComputedWfbpExample) {
  // Three layers; backward 3, 2, 1 (layers 1..3), comm 4 each. Backward runs
  // layer 3 (t=0..1), 2 (1..3), 1 (3..6). Comm: c3 at 1..5, c2 at 5..9,
  // c1 at 9..13. Exposed after backward: 13 - 6 = 7.
  LayerTimes t;
  t.forward = {Duration(1), Duration(1), Duration(1)};
  t.backward = {Duration(3), Duration(2), Duration(1)};
  t.comm = {Duration(4), Duration(4), Duration(4)};
  EXPECT_EQ(wfbp_iteration_time(t), Duration(3 + 6 + 7));
  EXPECT_EQ(bsp_iteration_time(t), Duration(3 + 6 + 12));
}

}  // namespace
}  // namespace ssgd::sim
