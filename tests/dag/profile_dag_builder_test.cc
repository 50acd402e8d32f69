#include "dag/profile_dag_builder.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace ssgd::dag {
namespace {

trace::LayerProfile three_layers() {
  trace::LayerProfile p;
  for (int l = 0; l < 3; ++l) {
    trace::LayerRow row;
    row.layer = l;
    row.name = "l" + std::to_string(l);
    row.forward = Duration(100);
    row.backward = Duration(200);
    row.grad_bytes = l == 1 ? 0 : 1000;
    p.layers.push_back(row);
  }
  return p;
}

CommPlan per_layer_plan(bool bsp) {
  CommPlan plan;
  plan.wait_for_full_backward = bsp;
  plan.groups.push_back({{2}, 1000, std::nullopt});
  plan.groups.push_back({{0}, 1000, std::nullopt});
  return plan;
}

std::size_t count(const TaskGraph& g, TaskKind k) {
  return static_cast<std::size_t>(std::count_if(g.tasks().begin(), g.tasks().end(),
                                                [k](const Task& t) { return t.kind == k; }));
}

TEST(ProfileDagBuilder, TaskCountsPerWorkerAndIteration) {
  const auto g = build_profile_dag(three_layers(), {4, 2, {}, {}, {}}, per_layer_plan(false));
  EXPECT_EQ(count(g, TaskKind::kForward), 4u * 2 * 3);
  EXPECT_EQ(count(g, TaskKind::kBackward), 4u * 2 * 3);
  EXPECT_EQ(count(g, TaskKind::kIo), 8u);
  EXPECT_EQ(count(g, TaskKind::kH2d), 8u);
  EXPECT_EQ(count(g, TaskKind::kUpdate), 8u);
  EXPECT_EQ(count(g, TaskKind::kComm), 2u * 2);
  // 3 resources per worker and one network.
  EXPECT_EQ(g.resources().size(), 4u * 3 + 1);
}

TEST(ProfileDagBuilder, WfbpTriggersOnOwnLayerBspOnLastBackward) {
  for (bool bsp : {false, true}) {
    const auto g = build_profile_dag(three_layers(), {2, 1, {}, {}, {}}, per_layer_plan(bsp));
    for (TaskId t = 0; t < g.task_count(); ++t) {
      const Task& c = g.task(t);
      if (c.kind != TaskKind::kComm) continue;
      for (TaskId p : g.predecessors(t)) {
        const Task& pred = g.task(p);
        if (pred.kind == TaskKind::kBackward) {
          EXPECT_EQ(pred.layer, bsp ? 0 : c.layer) << g.describe(t);
        } else {
          EXPECT_EQ(pred.kind, TaskKind::kComm);
        }
      }
    }
  }
}

TEST(ProfileDagBuilder, OneWorkerHasNoCommunication) {
  const auto g = build_profile_dag(three_layers(), {1, 3, {}, {}, {}}, per_layer_plan(false));
  EXPECT_EQ(count(g, TaskKind::kComm), 0u);
}

TEST(ProfileDagBuilder, RejectsBadShapes) {
  EXPECT_THROW(build_profile_dag(three_layers(), {0, 1, {}, {}, {}}, {}), std::invalid_argument);
  EXPECT_THROW(build_profile_dag(three_layers(), {1, 0, {}, {}, {}}, {}), std::invalid_argument);
  EXPECT_THROW(build_profile_dag({}, {1, 1, {}, {}, {}}, {}), std::invalid_argument);
  CommPlan bad;
  bad.groups.push_back({{7}, 1, std::nullopt});
  EXPECT_THROW(build_profile_dag(three_layers(), {2, 1, {}, {}, {}}, bad), std::invalid_argument);
}

TEST(ProfileDagBuilder, ReplayedCommKeepsItsDuration) {
  CommPlan plan;
  plan.groups.push_back({{0}, 1000, Duration(777)});
  const auto g = build_profile_dag(three_layers(), {2, 1, {}, {}, {}}, plan);
  for (const Task& t : g.tasks()) {
    if (t.kind == TaskKind::kComm) {
      EXPECT_EQ(t.duration, Duration(777));
      EXPECT_FALSE(t.duration_modelled);
    }
  }
}

}  // namespace
}  // namespace ssgd::dag
