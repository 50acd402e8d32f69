// Golden tests of the scheduling knobs that change the DAG across
// iterations: priority scheduling with tensor partitioning (P3,
// ByteScheduler), the per-layer update, and I/O prefetch. On the
// four-layer profile of tests/support/four_layer_profile.h, two workers,
// the exact start and end of every collective and the iteration ends,
// worked out by hand below.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dag/profile_dag_builder.h"
#include "simulator/engine/schedule.h"
#include "simulator/input/scenario_inputs.h"
#include "simulator/policy/overlap_policy.h"
#include "simulator/replay/closed_form.h"
#include "simulator/replay/job_graph.h"
#include "simulator/replay/replay.h"
#include "simulator/scenario/scenario.h"
#include "tests/support/four_layer_profile.h"

namespace ssgd::sim {
namespace {

using ssgd::testing::four_layer_allreduce_time;
using ssgd::testing::four_layer_profile;
using ssgd::testing::kMs;

struct Collective {
  std::int32_t iteration, layer;
  std::int64_t bytes, start_ms, end_ms;
  bool operator==(const Collective&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Collective& c) {
  return os << fmt::format("{{it {} layer {} {} B {}..{} ms}}", c.iteration, c.layer, c.bytes,
                           c.start_ms, c.end_ms);
}

struct Outcome {
  std::vector<Collective> comm;                // in task order: iteration, then plan order
  std::vector<std::int64_t> end_ms;            // per iteration: its last update
  std::vector<std::int64_t> forward_start_ms;  // rank 0, last iteration, per layer
};

Outcome run(const Scenario& s, std::int64_t iterations, Duration io = {}, Duration h2d = {},
            Duration update = {}) {
  const auto p = four_layer_profile();
  const dag::CommPlan plan =
      make_comm_plan(s.overlap_policy, s.policy_params, p, four_layer_allreduce_time);
  dag::DagShape shape{2, iterations, io, h2d, update};
  shape.update_per_group =
      effective_update(s.overlap_policy, s.policy_params) == UpdateMode::kPerLayer;
  shape.prefetch_depth = s.policy_params.prefetch_depth;
  dag::TaskGraph g = dag::build_profile_dag(p, shape, plan);
  for (dag::TaskId t = 0; t < g.task_count(); ++t) {
    auto& task = g.mutable_task(t);
    if (task.kind == dag::TaskKind::kComm) task.duration = four_layer_allreduce_time(task.bytes);
  }
  ScheduleOptions opts;
  opts.batch_duration = [](const dag::Task& merged) {
    return four_layer_allreduce_time(merged.bytes);
  };
  const Schedule sched = run_schedule(g, opts);
  Outcome out;
  for (dag::TaskId t = 0; t < g.task_count(); ++t) {
    const auto& task = g.task(t);
    EXPECT_EQ(sched.start[t].ns() % kMs, 0) << g.describe(t);
    EXPECT_EQ(sched.end[t].ns() % kMs, 0) << g.describe(t);
    if (task.kind == dag::TaskKind::kComm) {
      out.comm.push_back({task.iteration, task.layer, task.bytes, sched.start[t].ns() / kMs,
                          sched.end[t].ns() / kMs});
    }
    if (task.kind == dag::TaskKind::kForward && task.rank == 0 &&
        task.iteration == iterations - 1) {
      out.forward_start_ms.push_back(sched.start[t].ns() / kMs);
    }
  }
  for (const Time e : iteration_ends(g, sched, iterations, 2).end)
    out.end_ms.push_back(e.ns() / kMs);
  return out;
}

Scenario priority(std::int64_t partition, std::int64_t credit) {
  Scenario s;
  s.overlap_policy = OverlapPolicy::kPriority;
  s.policy_params.partition_bytes = partition;
  s.policy_params.credit_bytes = credit;
  s.policy_params.partition_overhead =
      Duration::zero();  // SchedulerCostsComeBeforeTheBytes has them
  return s;
}

TEST(PriorityPolicy, PartitionsAreNearlyEqualAndFrontLayersGoFirst) {
  // 4 MB in partitions of 1.5 MB: 3 of 1,333,334 / 1,333,333 / 1,333,333.
  const auto plan = make_comm_plan(OverlapPolicy::kPriority, priority(1'500'000, 0).policy_params,
                                   four_layer_profile(), four_layer_allreduce_time);
  EXPECT_TRUE(plan.prioritized);
  std::vector<std::int64_t> bytes;
  for (const auto& g : plan.groups) bytes.push_back(g.bytes);
  EXPECT_EQ(bytes, (std::vector<std::int64_t>{1'333'334, 1'333'333, 1'333'333, 1'000'000, 1'000'000,
                                              1'000'000, 1'000'000}));
  EXPECT_EQ(plan.groups.front().layers, std::vector<std::int32_t>{3});
  EXPECT_EQ(plan.groups.back().layers, std::vector<std::int32_t>{0});
}

TEST(PriorityPolicy, OnePartitionAtATimeFrontLayersPreemptBackLayers) {
  // Partitions of 2 MB, credit 0. Iteration 0: forward 0..4, backward
  // b3 4..5, b2 5..7, b1 7..10, b0 10..14.
  //   5: layer 3's two partitions are ready; the first runs 5..10.
  //   10: layer 1 (ready at 10) overtakes layer 3's second partition and
  //       layer 2 (ready at 7): 10..14.
  //   14: layer 0 (ready at 14) goes next: 14..19; then layer 2 19..23, and
  //       layer 3's second partition last, 23..28.
  // The per-layer update (the default under priority) lets iteration 1's
  // forward run layer 0 at 19, layer 1 at 20, layer 2 once its update is
  // done at 23, layer 3 at 28. Its backward, 29..39, then repeats the
  // pattern 25 ms later: 30..35, 35..39, 39..44, 44..48, 48..53.
  const Outcome r = run(priority(2'000'000, 0), 2);
  EXPECT_EQ(r.comm, (std::vector<Collective>{{0, 3, 2'000'000, 5, 10},
                                             {0, 3, 2'000'000, 23, 28},
                                             {0, 2, 1'000'000, 19, 23},
                                             {0, 1, 1'000'000, 10, 14},
                                             {0, 0, 2'000'000, 14, 19},
                                             {1, 3, 2'000'000, 30, 35},
                                             {1, 3, 2'000'000, 48, 53},
                                             {1, 2, 1'000'000, 44, 48},
                                             {1, 1, 1'000'000, 35, 39},
                                             {1, 0, 2'000'000, 39, 44}}));
  EXPECT_EQ(r.forward_start_ms, (std::vector<std::int64_t>{19, 20, 23, 28}));
  EXPECT_EQ(r.end_ms, (std::vector<std::int64_t>{28, 53}));
}

TEST(PriorityPolicy, CreditStartsReadyPartitionsTogether) {
  // Partitions of 2 MB, credit 4 MB. At 5 both of layer 3's partitions
  // start together, as one 4 MB all-reduce: 5..12. At 12 layers 1 and 2
  // are ready (2 MB together, under the credit): 12..17. Layer 0 at 17..22.
  // Iteration 1's forward waits for layer 0's update only: 22..26; its
  // backward 26..36; all-reduces 27..34, 34..39, 39..44.
  const Outcome r = run(priority(2'000'000, 4'000'000), 2);
  EXPECT_EQ(r.comm, (std::vector<Collective>{{0, 3, 2'000'000, 5, 12},
                                             {0, 3, 2'000'000, 5, 12},
                                             {0, 2, 1'000'000, 12, 17},
                                             {0, 1, 1'000'000, 12, 17},
                                             {0, 0, 2'000'000, 17, 22},
                                             {1, 3, 2'000'000, 27, 34},
                                             {1, 3, 2'000'000, 27, 34},
                                             {1, 2, 1'000'000, 34, 39},
                                             {1, 1, 1'000'000, 34, 39},
                                             {1, 0, 2'000'000, 39, 44}}));
  EXPECT_EQ(r.forward_start_ms, (std::vector<std::int64_t>{22, 23, 24, 25}));
  EXPECT_EQ(r.end_ms, (std::vector<std::int64_t>{22, 44}));
  // The credit may be overshot by the last partition started: 1 byte of
  // credit still lets two partitions go together (2 MB, then 1 byte left).
  EXPECT_EQ(run(priority(2'000'000, 2'000'001), 2).comm, r.comm);
}

TEST(PriorityPolicy, SchedulerCostsComeBeforeTheBytes) {
  // As CreditStartsReadyPartitionsTogether, with 1 ms of host time per
  // partition, added to the backward that releases it (b3 3 ms with its two
  // partitions: 4..7, b2 7..10, b1 10..14, b0 14..19), and 1 ms per round on
  // the network: layer 3's partitions 7..15 (1 + 7); at 15 layers 1 and 2,
  // 2 MB: 15..21 (1 + 5); layer 0 (ready at 19) 21..27.
  Scenario s = priority(2'000'000, 4'000'000);
  s.policy_params.partition_overhead = Duration(1'000'000);
  s.policy_params.schedule_overhead = Duration(1'000'000);
  const Outcome r = run(s, 1);
  EXPECT_EQ(r.comm, (std::vector<Collective>{{0, 3, 2'000'000, 7, 15},
                                             {0, 3, 2'000'000, 7, 15},
                                             {0, 2, 1'000'000, 15, 21},
                                             {0, 1, 1'000'000, 15, 21},
                                             {0, 0, 2'000'000, 21, 27}}));
  // Without credit every partition is a round of its own: 1 ms, then 5 ms for 2 MB.
  Scenario one = priority(2'000'000, 0);
  one.policy_params.partition_overhead = Duration(1'000'000);
  one.policy_params.schedule_overhead = Duration(1'000'000);
  const Outcome o = run(one, 1);
  EXPECT_EQ(o.comm.front().start_ms, 7);
  EXPECT_EQ(o.comm.front().end_ms, 13);
}

TEST(PriorityPolicy, WithAGlobalUpdateTheStepEndsAfterEveryPartition) {
  Scenario s = priority(2'000'000, 4'000'000);
  s.policy_params.update = UpdateMode::kGlobal;
  const Outcome r = run(s, 2);
  // The same first iteration; the second starts after layer 0's all-reduce at 22.
  EXPECT_EQ(r.end_ms.front(), 22);
  EXPECT_EQ(r.forward_start_ms, (std::vector<std::int64_t>{22, 23, 24, 25}));
}

// One GPU communicates with no one, so a priority run's one-GPU baseline
// pays no partition or scheduling cost: it is every other policy's, and the
// scheduler's costs show in the efficiency instead.
TEST(PriorityPolicy, TheOneGpuBaselineIsEveryPolicys) {
  const auto p = four_layer_profile();
  const auto baseline = [&p](const char* policy) {
    const Scenario s = load_scenario(std::nullopt, {std::string("policy.overlap=") + policy,
                                                   "cluster.nodes=2", "iterations=3",
                                                   "policy.partition_overhead=2ms"});
    const ReplayResult r = replay(p, s, ReplayOptions{});
    EXPECT_TRUE(r.single_worker_iteration_time.has_value());
    return r;
  };
  const ReplayResult wfbp = baseline("wfbp");
  const ReplayResult prio = baseline("priority");
  EXPECT_EQ(prio.single_worker_iteration_time, wfbp.single_worker_iteration_time);
  EXPECT_GT(prio.iteration_time, wfbp.iteration_time);  // 2 ms a partition on the backward
  EXPECT_LT(prio.scaling_efficiency, wfbp.scaling_efficiency);
}

TEST(UpdatePolicy, PerLayerUpdateLetsTheNextForwardStartEarly) {
  // WFBP, 8 ms of update split by bytes: layer 3 4 ms, 2 and 1 1 ms each,
  // 0 2 ms. All-reduces 5..12, 12..16, 16..20, 20..25. Each group's update
  // runs on the GPU once its all-reduce is done and the GPU is free: u3
  // 14..18 (after b0), u2 18..19, u1 20..21, u0 25..27. Iteration 1's
  // forward waits for u0: 27..31; backward 31..41, all-reduces from 32 to
  // 52, updates 41..45, 45..46, 47..48, 52..54.
  Scenario s;
  s.overlap_policy = OverlapPolicy::kWfbp;
  s.policy_params.update = UpdateMode::kPerLayer;
  const Outcome r = run(s, 2, {}, {}, Duration(8 * kMs));
  EXPECT_EQ(r.end_ms, (std::vector<std::int64_t>{27, 54}));
  EXPECT_EQ(r.forward_start_ms, (std::vector<std::int64_t>{27, 28, 29, 30}));
  // The global update: 8 ms after the last all-reduce, 25..33; then 33 more.
  s.policy_params.update = UpdateMode::kGlobal;
  EXPECT_EQ(run(s, 2, {}, {}, Duration(8 * kMs)).end_ms, (std::vector<std::int64_t>{33, 66}));
}

TEST(PrefetchPolicy, IterationTimesMatchTheClosedForm) {
  // WFBP without I/O takes W = 25 ms a step. With 30 ms of reading and 1 ms
  // of copying per batch:
  //   depth 0: 30 + 1 + 25 = 56 ms an iteration;
  //   depth 1: the read of batch i+1 starts when batch i is copied, so
  //            1 + max(30, 25) = 31 ms;
  //   depth 2: the reader runs back to back, max(30, 1 + 25) = 30 ms.
  // With 3 ms of reading, depth 1 and 2 both give 1 + 25 = 26 ms.
  Scenario s;
  s.overlap_policy = OverlapPolicy::kWfbp;
  const std::vector<std::vector<std::int64_t>> expected_ends = {
      {56, 112, 168}, {56, 87, 118}, {56, 86, 116}};
  LayerTimes t;
  for (const auto& row : four_layer_profile().layers) {
    t.forward.push_back(row.forward);
    t.backward.push_back(row.backward);
    t.comm.push_back(four_layer_allreduce_time(row.grad_bytes));
  }
  t.io = Duration(30 * kMs);
  t.h2d = Duration(kMs);
  for (std::int64_t depth = 0; depth <= 2; ++depth) {
    s.policy_params.prefetch_depth = depth;
    const Outcome r = run(s, 3, t.io, t.h2d);
    EXPECT_EQ(r.end_ms, expected_ends[static_cast<std::size_t>(depth)]) << "depth " << depth;
    const auto closed = scenario_closed_form(s, t);
    ASSERT_TRUE(closed);
    EXPECT_EQ(closed->ns(), (r.end_ms[2] - r.end_ms[1]) * kMs) << "depth " << depth;
  }
  t.io = Duration(3 * kMs);
  for (std::int64_t depth = 1; depth <= 2; ++depth) {
    s.policy_params.prefetch_depth = depth;
    const Outcome r = run(s, 3, t.io, t.h2d);
    EXPECT_EQ(r.end_ms[2] - r.end_ms[1], 26) << "depth " << depth;
    EXPECT_EQ(scenario_closed_form(s, t), Duration(26 * kMs)) << "depth " << depth;
  }
}

TEST(PrefetchPolicy, NoClosedFormUnderPriorityOrAPerLayerUpdate) {
  LayerTimes t;
  t.forward = t.backward = t.comm = {Duration(kMs)};
  EXPECT_FALSE(scenario_closed_form(priority(1, 0), t));
  Scenario s;
  s.policy_params.update = UpdateMode::kPerLayer;
  EXPECT_FALSE(scenario_closed_form(s, t));
  s.policy_params.update = UpdateMode::kGlobal;
  EXPECT_TRUE(scenario_closed_form(s, t));
}

TEST(PrefetchPolicy, NegativeDepthIsRefused) {
  dag::DagShape shape{1, 1, {}, {}, {}};
  shape.prefetch_depth = -1;
  EXPECT_THROW((void)dag::build_profile_dag(four_layer_profile(), shape, {}),
               std::invalid_argument);
}

}  // namespace
}  // namespace ssgd::sim
