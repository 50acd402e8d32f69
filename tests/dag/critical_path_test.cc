#include "dag/critical_path.h"

#include <gtest/gtest.h>

namespace ssgd::dag {
namespace {

// a(10) -> c(5); b(30) -> c. Longest path: b, c = 35.
TaskGraph diamond() {
  TaskGraph g;
  const auto r0 = g.add_resource({ResourceKind::kCompute, 0});
  const auto r1 = g.add_resource({ResourceKind::kNetwork, kAllRanks});
  Task a;
  a.resource = r0;
  a.duration = Duration(10);
  Task b;
  b.resource = r1;
  b.kind = TaskKind::kComm;
  b.duration = Duration(30);
  Task c;
  c.resource = r0;
  c.kind = TaskKind::kUpdate;
  c.duration = Duration(5);
  g.add_task(a);
  g.add_task(b);
  g.add_task(c);
  g.add_edge(0, 2);
  g.add_edge(1, 2);
  g.finalize();
  return g;
}

TEST(CriticalPath, LongestPathFollowsTheLongerBranch) {
  const auto g = diamond();
  const auto p = longest_path(g);
  EXPECT_EQ(p.tasks, (std::vector<TaskId>{1, 2}));
  EXPECT_EQ(p.length, Duration(35));
  EXPECT_EQ(p.time_by_kind[static_cast<int>(TaskKind::kComm)], Duration(30));
  EXPECT_EQ(p.time_by_kind[static_cast<int>(TaskKind::kUpdate)], Duration(5));
}

TEST(CriticalPath, ScheduledPathFollowsStartedBy) {
  const auto g = diamond();
  std::vector<Time> start{Time(0), Time(0), Time(40)};
  std::vector<Time> end{Time(10), Time(30), Time(45)};
  std::vector<TaskId> by{kNoTask, kNoTask, 1};
  const auto p = scheduled_critical_path(g, {start, end, by});
  EXPECT_EQ(p.tasks, (std::vector<TaskId>{1, 2}));
  EXPECT_EQ(p.length, Duration(45));
  EXPECT_EQ(p.gaps, Duration(10));  // 30..40 nothing on the path ran
}

}  // namespace
}  // namespace ssgd::dag
