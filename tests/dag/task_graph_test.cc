#include "dag/task_graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ssgd::dag {
namespace {

using ::testing::HasSubstr;

TaskGraph chain(int n) {
  TaskGraph g;
  const auto r = g.add_resource({ResourceKind::kCompute, 0});
  for (int i = 0; i < n; ++i) {
    Task t;
    t.resource = r;
    t.layer = i;
    t.duration = Duration(10 * (i + 1));
    g.add_task(t);
    if (i > 0) g.add_edge(static_cast<TaskId>(i - 1), static_cast<TaskId>(i));
  }
  return g;
}

TEST(TaskGraph, SuccessorsPredecessorsAndOrder) {
  TaskGraph g = chain(4);
  g.add_edge(0, 3);
  g.finalize();
  EXPECT_EQ(g.task_count(), 4u);
  EXPECT_EQ(g.edge_count(), 4u);
  EXPECT_THAT(std::vector<TaskId>(g.successors(0).begin(), g.successors(0).end()),
              ::testing::UnorderedElementsAre(1u, 3u));
  EXPECT_THAT(std::vector<TaskId>(g.predecessors(3).begin(), g.predecessors(3).end()),
              ::testing::UnorderedElementsAre(0u, 2u));
  EXPECT_EQ(g.in_degree(0), 0u);
  EXPECT_EQ(g.topological_order(), (std::vector<TaskId>{0, 1, 2, 3}));
}

TEST(TaskGraph, CycleIsReportedWithItsTasks) {
  TaskGraph g = chain(3);
  g.add_edge(2, 1);
  try {
    g.finalize();
    FAIL() << "a cycle was accepted";
  } catch (const DagError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cycle of 2 tasks"));
    EXPECT_THAT(e.what(), HasSubstr("layer 1"));
    EXPECT_THAT(e.what(), HasSubstr("layer 2"));
  }
}

TEST(TaskGraph, DanglingEdgeIsRejected) {
  TaskGraph g = chain(2);
  g.add_edge(1, 7);
  try {
    g.finalize();
    FAIL() << "a dangling edge was accepted";
  } catch (const DagError& e) {
    EXPECT_THAT(e.what(), HasSubstr("dangling edge"));
    EXPECT_THAT(e.what(), HasSubstr("task 7 does not exist"));
  }
}

TEST(TaskGraph, SelfLoopAndBadResourceAreRejected) {
  TaskGraph a = chain(2);
  a.add_edge(1, 1);
  EXPECT_THROW(a.finalize(), DagError);
  TaskGraph b;
  Task t;
  t.resource = 5;
  b.add_task(t);
  EXPECT_THROW(b.finalize(), DagError);
}

TEST(TaskGraph, DescribeNamesLayer) {
  TaskGraph g = chain(2);
  g.set_layer_names({"conv1", "fc"});
  g.finalize();
  EXPECT_EQ(g.describe(1), "forward(rank 0, iteration 0, layer 1 'fc')");
}

}  // namespace
}  // namespace ssgd::dag
