#include "dag/time_breakdown.h"

#include <gtest/gtest.h>

namespace ssgd::dag {
namespace {

TEST(TimeBreakdown, ClassesArePrioritisedAndSumToTheWindow) {
  TaskGraph g;
  const auto compute = g.add_resource({ResourceKind::kCompute, 0});
  const auto io = g.add_resource({ResourceKind::kIo, 0});
  const auto net = g.add_resource({ResourceKind::kNetwork, kAllRanks});
  auto add = [&](TaskKind k, ResourceId r, std::int32_t rank) {
    Task t;
    t.kind = k;
    t.resource = r;
    t.rank = rank;
    return g.add_task(t);
  };
  add(TaskKind::kIo, io, 0);            // [0, 10)
  add(TaskKind::kForward, compute, 0);  // [10, 40)
  add(TaskKind::kComm, net, kAllRanks); // [30, 70): 10 hidden under compute, 30 exposed
  add(TaskKind::kUpdate, compute, 0);   // [80, 90)
  g.finalize();
  std::vector<Time> start{Time(0), Time(10), Time(30), Time(80)};
  std::vector<Time> end{Time(10), Time(40), Time(70), Time(90)};
  std::vector<TaskId> by(4, kNoTask);
  std::vector<Time> from{Time(0)}, to{Time(100)};
  const auto b = average_breakdown(g, {start, end, by}, from, to, 1);
  EXPECT_EQ(b.io, Duration(10));
  EXPECT_EQ(b.compute, Duration(40));
  EXPECT_EQ(b.exposed_comm, Duration(30));
  EXPECT_EQ(b.idle, Duration(20));
  EXPECT_EQ(b.total(), Duration(100));

  // Averaged per iteration: the same window counted as two iterations halves every part.
  const auto half = average_breakdown(g, {start, end, by}, from, to, 2);
  EXPECT_EQ(half.compute, Duration(20));
}

}  // namespace
}  // namespace ssgd::dag
