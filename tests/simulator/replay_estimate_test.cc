// The estimate a replay is checked against before anything is built
// (simulator/replay/replay_estimate.h): its task count is the builder's for
// the policies that do not merge gradients, an upper bound for those that
// do; a run that cannot fit is a ParameterError naming the key that drives
// it, located by replay() where the key was given.
#include "simulator/replay/replay_estimate.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <optional>
#include <string>

#include "common/error.h"
#include "simulator/replay/replay.h"

namespace ssgd::sim {
namespace {

using ::testing::HasSubstr;

trace::LayerProfile profile() {
  trace::LayerProfile p;
  p.batch_per_gpu = 32;
  for (int l = 0; l < 5; ++l) {
    p.layers.push_back({l, fmt::format("l{}", l), Duration(1'000'000), Duration(2'000'000),
                        4'000'000, std::nullopt, std::nullopt, std::nullopt});
  }
  return p;
}

// Sets SSGD_AVAILABLE_MEMORY for one test.
class AvailableMemory {
 public:
  explicit AvailableMemory(const char* value) { ::setenv("SSGD_AVAILABLE_MEMORY", value, 1); }
  ~AvailableMemory() { ::unsetenv("SSGD_AVAILABLE_MEMORY"); }
};

TEST(ReplayEstimate, CountsTheTasksTheReplayBuilds) {
  for (const auto overlap : {OverlapPolicy::kWfbp, OverlapPolicy::kBsp, OverlapPolicy::kPriority}) {
    for (const bool fold : {true, false}) {
      for (const std::int64_t nodes : {1, 3}) {
        Scenario s;
        s.nodes = nodes;
        s.gpus_per_node = 2;
        s.iterations = 4;
        s.overlap_policy = overlap;
        s.policy_params.partition_bytes = 1'500'000;  // priority: 3 pieces a layer
        ReplayOptions options;
        options.fold_ranks = fold;
        options.single_worker_baseline = false;
        const ReplayEstimate e = estimate_replay(profile(), s, options);
        const ReplayResult r = replay(profile(), s, options);
        EXPECT_EQ(e.ranks_built, r.ranks_simulated) << to_string(overlap) << " fold " << fold;
        EXPECT_EQ(e.tasks, static_cast<double>(r.tasks)) << to_string(overlap) << " fold " << fold;
        if (overlap == OverlapPolicy::kPriority) {
          // A prioritized network also wakes to decide what to start next.
          EXPECT_GE(2 * e.events, static_cast<double>(r.events));
        } else {
          EXPECT_EQ(e.events, static_cast<double>(r.events)) << to_string(overlap) << " " << fold;
        }
        EXPECT_EQ(e.workers, 2 * nodes);
      }
    }
  }
}

TEST(ReplayEstimate, MergingPoliciesAreBoundedAbove) {
  Scenario s;
  s.nodes = 4;
  s.overlap_policy = OverlapPolicy::kMgWfbp;
  ReplayOptions options;
  options.single_worker_baseline = false;
  const ReplayEstimate e = estimate_replay(profile(), s, options);
  EXPECT_GE(e.tasks, static_cast<double>(replay(profile(), s, options).tasks));
}

TEST(ReplayEstimate, RefusesWhatCannotFitNamingTheKeyUnlessAllowed) {
  const AvailableMemory memory("1GiB");
  EXPECT_EQ(available_memory_bytes(), 1LL << 30);
  Scenario s;
  s.nodes = 1'048'576;
  s.gpus_per_node = 1024;
  ReplayOptions options;
  const ReplayEstimate e = estimate_replay(profile(), s, options);
  EXPECT_TRUE(e.folded);
  EXPECT_EQ(e.key, "cluster.nodes");
  EXPECT_GT(e.bytes, 500e9);  // 900 B and more a rank, for 2^30 ranks
  ASSERT_TRUE(too_large(e).has_value());
  EXPECT_THAT(*too_large(e), HasSubstr("more than the 1.0 GiB this machine has available"));
  try {
    check_fits(e, false);
    ADD_FAILURE() << "not refused";
  } catch (const ParameterError& error) {
    EXPECT_EQ(error.key(), "cluster.nodes");
    EXPECT_THAT(error.what(), HasSubstr("or give --allow-large to run anyway"));
  }
  EXPECT_NO_THROW(check_fits(e, true));
  // replay() refuses it before building anything, at the key.
  try {
    replay(profile(), s, options);
    ADD_FAILURE() << "not refused";
  } catch (const InputError& error) {
    EXPECT_EQ(error.where().field, "cluster.nodes");
  }
  // Unfolded, the tasks drive it, and the key is the largest factor.
  s.nodes = 65'536;
  s.gpus_per_node = 1;
  options.fold_ranks = false;
  EXPECT_EQ(estimate_replay(profile(), s, options).key, "cluster.nodes");
  s.nodes = 1;
  s.iterations = 1'000'000;
  EXPECT_EQ(estimate_replay(profile(), s, options).key, "iterations");
}

TEST(ReplayEstimate, PriorityPiecesAreNamedByThePartitionSize) {
  const AvailableMemory memory("1GiB");
  Scenario s;
  s.nodes = 2;
  s.overlap_policy = OverlapPolicy::kPriority;
  s.policy_params.partition_bytes = 1;  // 4,000,000 pieces a layer
  const ReplayEstimate e = estimate_replay(profile(), s, {});
  EXPECT_EQ(e.key, "policy.partition_size");
  try {
    check_fits(e, false);
    ADD_FAILURE() << "not refused";
  } catch (const ParameterError& error) {
    EXPECT_THAT(error.what(), HasSubstr("policy.partition_size drives it: raise it"));
  }
}

TEST(ReplayEstimate, ABadOverrideIsAnInputError) {
  const AvailableMemory memory("lots");
  EXPECT_THROW(available_memory_bytes(), InputError);
}

}  // namespace
}  // namespace ssgd::sim
