// Golden tests of the overlap policies: on a four-layer profile with a
// stated all-reduce cost, each policy's groups and the exact start and end
// of every collective, worked out by hand in the comments. Then MG-WFBP's
// two properties under alpha-beta on random profiles.
#include "simulator/policy/overlap_policy.h"

#include <algorithm>
#include <random>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dag/profile_dag_builder.h"
#include "simulator/engine/schedule.h"
#include "simulator/replay/closed_form.h"
#include "tests/support/four_layer_profile.h"

namespace ssgd::sim {
namespace {

using ssgd::testing::four_layer_allreduce_time;
using ssgd::testing::four_layer_profile;
using ssgd::testing::kMs;

struct Collective {
  std::vector<std::int32_t> layers;
  std::int64_t start_ms, end_ms;  // from the start of the iteration
  bool operator==(const Collective&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Collective& c) {
  return os << fmt::format("{{layers {}, {}..{} ms}}", fmt::join(c.layers, ","), c.start_ms,
                           c.end_ms);
}

// The plan of `policy`, run on two workers for one iteration.
std::vector<Collective> timeline(const Scenario& s) {
  const auto p = four_layer_profile();
  const dag::CommPlan plan =
      make_comm_plan(s.overlap_policy, s.policy_params, p, four_layer_allreduce_time);
  dag::TaskGraph g = dag::build_profile_dag(p, {2, 1, {}, {}, {}}, plan);
  for (dag::TaskId t = 0; t < g.task_count(); ++t) {
    auto& task = g.mutable_task(t);
    if (task.kind == dag::TaskKind::kComm) task.duration = four_layer_allreduce_time(task.bytes);
  }
  const Schedule sched = run_schedule(g);
  std::vector<Collective> out;
  for (dag::TaskId t = 0; t < g.task_count(); ++t) {
    const auto& task = g.task(t);
    if (task.kind != dag::TaskKind::kComm) continue;
    out.push_back({plan.groups[static_cast<std::size_t>(task.group)].layers,
                   sched.start[t].ns() / kMs, sched.end[t].ns() / kMs});
    EXPECT_EQ(sched.start[t].ns() % kMs, 0);
    EXPECT_EQ(sched.end[t].ns() % kMs, 0);
  }
  return out;
}

Scenario with(OverlapPolicy policy) {
  Scenario s;
  s.overlap_policy = policy;
  return s;
}

TEST(PolicyGolden, Bsp) {
  // Backward ends at 4 + 10 = 14 ms; then 7 + 4 + 4 + 5 ms one after another.
  EXPECT_EQ(timeline(with(OverlapPolicy::kBsp)),
            (std::vector<Collective>{{{3}, 14, 21}, {{2}, 21, 25}, {{1}, 25, 29}, {{0}, 29, 34}}));
}

TEST(PolicyGolden, Wfbp) {
  // c3 at its ready time 5; c2 (ready 7) waits for c3 until 12; c1 (ready
  // 10) until 16; c0 (ready 14) until 20.
  EXPECT_EQ(timeline(with(OverlapPolicy::kWfbp)),
            (std::vector<Collective>{{{3}, 5, 12}, {{2}, 12, 16}, {{1}, 16, 20}, {{0}, 20, 25}}));
}

TEST(PolicyGolden, MgWfbp) {
  // Group {3} would run 1..8 ms into backward. Gradient 2 is ready at 3 < 8
  // (A), and waiting 3 - 1 = 2 ms < the 3 ms saved (B): merged, 5 MB from 3
  // to 3 + 8 = 11. Gradient 1, ready at 6: 6 - 3 = 3 ms is not < 3: a new
  // group from 11, which gradient 0 (ready at 10, before 11) joins: 3 MB,
  // 11..17. Plus 4 ms of forward.
  EXPECT_EQ(timeline(with(OverlapPolicy::kMgWfbp)),
            (std::vector<Collective>{{{3, 2}, 7, 15}, {{1, 0}, 15, 21}}));
  // Told a merge saves nothing (merge_startup 0), the rule takes in only a
  // gradient that is ready before its group can start: gradient 1 (ready
  // 6 ms into backward) joins {2}, which waits for {3} until 8. The cost
  // here still has its 3 ms start-up, so that merge still pays.
  Scenario s = with(OverlapPolicy::kMgWfbp);
  s.policy_params.merge_startup = Duration::zero();
  EXPECT_EQ(timeline(s), (std::vector<Collective>{{{3}, 5, 12}, {{2, 1}, 12, 17}, {{0}, 17, 22}}));
}

TEST(PolicyGolden, DdpBuckets) {
  // First bucket cap 2 MB: gradient 3 (4 MB) fills it alone. Cap 3 MB next:
  // 1 + 1 = 2 MB < 3, + 2 MB = 4 MB >= 3 closes it: {2, 1, 0}, ready at 14.
  Scenario s = with(OverlapPolicy::kDdp);
  s.policy_params.first_bucket_bytes = 2'000'000;
  s.policy_params.bucket_cap_bytes = 3'000'000;
  EXPECT_EQ(timeline(s), (std::vector<Collective>{{{3}, 5, 12}, {{2, 1, 0}, 14, 21}}));
  // The defaults (1 MiB, 25 MiB): gradient 3 alone, then the other three.
  EXPECT_EQ(timeline(with(OverlapPolicy::kDdp)),
            (std::vector<Collective>{{{3}, 5, 12}, {{2, 1, 0}, 14, 21}}));
  // A cap of one byte: one bucket per gradient, which is WFBP.
  s.policy_params.first_bucket_bytes = s.policy_params.bucket_cap_bytes = 1;
  EXPECT_EQ(timeline(s), timeline(with(OverlapPolicy::kWfbp)));
}

TEST(PolicyGolden, HorovodFusion) {
  // Ticks every 5 ms from the start of backward. At 5: gradients 3 and 2
  // (ready 1 and 3), 4 + 1 = 5 MB <= 5 MB: one buffer, from gradient 2's
  // ready time 7 to 15. At 10: gradients 1 and 0 (6 and 10): 3 MB, 15..21.
  Scenario s = with(OverlapPolicy::kHorovod);
  s.policy_params.cycle_time = Duration(5 * kMs);
  s.policy_params.fusion_threshold_bytes = 5'000'000;
  EXPECT_EQ(timeline(s), (std::vector<Collective>{{{3, 2}, 7, 15}, {{1, 0}, 15, 21}}));
  // A 4.5 MB buffer cannot take gradient 2 after gradient 3: checked before adding.
  s.policy_params.fusion_threshold_bytes = 4'500'000;
  EXPECT_EQ(timeline(s), (std::vector<Collective>{{{3}, 5, 12}, {{2}, 12, 16}, {{1, 0}, 16, 22}}));
  // A 1 ms cycle sees every gradient on its own tick: WFBP.
  s.policy_params.cycle_time = Duration(kMs);
  s.policy_params.fusion_threshold_bytes = 128 << 20;
  EXPECT_EQ(timeline(s), timeline(with(OverlapPolicy::kWfbp)));
}

TEST(PolicyGolden, Single) {
  // Everything after backward (14 ms): 8 MB, 11 ms.
  EXPECT_EQ(timeline(with(OverlapPolicy::kSingle)),
            (std::vector<Collective>{{{3, 2, 1, 0}, 14, 25}}));
}

// Iteration time of `plan` under WFBP's recurrence, the all-reduce cost
// T(M) = a + b M.
Duration plan_time(const trace::LayerProfile& p, const dag::CommPlan& plan, Duration a, double b) {
  LayerTimes t;
  t.comm.assign(p.layers.size(), Duration::zero());
  for (const auto& row : p.layers) {
    t.forward.push_back(row.forward);
    t.backward.push_back(row.backward);
  }
  for (const auto& g : plan.groups) {
    t.comm[static_cast<std::size_t>(*std::min_element(g.layers.begin(), g.layers.end()))] +=
        a + Duration(static_cast<std::int64_t>(b * static_cast<double>(g.bytes)));
  }
  return wfbp_iteration_time(t);
}

// MG-WFBP under alpha-beta: never slower than WFBP, and equal to it when the
// start-up cost is zero (Shi et al., INFOCOM 2019).
TEST(MgWfbp, NeverSlowerThanWfbpAndEqualWithoutStartup) {
  std::mt19937_64 rng(2019);
  int faster = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    trace::LayerProfile p;
    const int layers = 1 + static_cast<int>(rng() % 40);
    for (int l = 0; l < layers; ++l) {
      p.layers.push_back(
          {l, fmt::format("l{}", l), Duration(static_cast<std::int64_t>(rng() % 3'000'000)),
           Duration(static_cast<std::int64_t>(rng() % 5'000'000)),
           rng() % 5 == 0 ? 0 : static_cast<std::int64_t>(rng() % 40'000'000), std::nullopt, std::nullopt, std::nullopt});
    }
    const Duration a(trial % 4 == 0 ? 0 : static_cast<std::int64_t>(rng() % 3'000'000));
    const double b = 1e-3 * static_cast<double>(1 + rng() % 2000);  // ns per byte
    const AllReduceTime time = [a, b](std::int64_t bytes) {
      return bytes == 0 ? Duration::zero()
                        : a + Duration(static_cast<std::int64_t>(b * static_cast<double>(bytes)));
    };
    Scenario s = with(OverlapPolicy::kMgWfbp);
    s.policy_params.merge_startup = a;  // the exact saving: T is rounded to whole ns
    const Duration mg =
        plan_time(p, make_comm_plan(s.overlap_policy, s.policy_params, p, time), a, b);
    const Duration wfbp = plan_time(
        p, make_comm_plan(OverlapPolicy::kWfbp, with(OverlapPolicy::kWfbp).policy_params, p, time),
        a, b);
    ASSERT_LE(mg, wfbp + Duration(layers)) << "trial " << trial;  // within rounding
    if (a == Duration::zero()) {
      ASSERT_NEAR(static_cast<double>(mg.ns()), static_cast<double>(wfbp.ns()), layers)
          << "trial " << trial;
    }
    faster += mg + Duration(layers) < wfbp;
  }
  EXPECT_GT(faster, 200);  // it is not WFBP in disguise
}

TEST(Policies, EveryPolicyHasANameDescriptionAndSource) {
  for (const auto& p : overlap_policies()) {
    EXPECT_FALSE(p.name.empty());
    EXPECT_FALSE(p.description.empty()) << p.name;
    EXPECT_FALSE(p.source.empty()) << p.name;
    EXPECT_STREQ(to_string(p.policy), std::string(p.name).c_str());
  }
  EXPECT_EQ(overlap_policies().size(), 7u);
}

}  // namespace
}  // namespace ssgd::sim
