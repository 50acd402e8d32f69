#include "simulator/engine/engine.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "dag/profile_dag_builder.h"
#include "simulator/engine/deadlock_error.h"
#include "simulator/engine/schedule.h"

namespace ssgd::sim {
namespace {

TEST(Engine, RunsEventsInTimeThenInsertionOrder) {
  Engine e;
  std::vector<std::uint64_t> seen;
  const auto h = e.register_handler([&](Engine&, std::uint64_t p) { seen.push_back(p); });
  e.schedule(Time(20), h, 1);
  e.schedule(Time(10), h, 2);
  e.schedule(Time(20), h, 3);
  e.schedule(Time(10), h, 4);
  e.run();
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{2, 4, 1, 3}));
  EXPECT_EQ(e.now(), Time(20));
  EXPECT_EQ(e.events_processed(), 4u);
}

TEST(Engine, ManyRandomEventsComeOutSorted) {
  Engine e;
  std::mt19937_64 rng(7);
  std::vector<std::pair<std::int64_t, std::uint64_t>> seen;
  const auto h = e.register_handler([&](Engine& en, std::uint64_t p) { seen.emplace_back(en.now().ns(), p); });
  for (std::uint64_t i = 0; i < 20000; ++i) {
    e.schedule(Time(static_cast<std::int64_t>(rng() % 1000)), h, i);
  }
  e.run();
  ASSERT_EQ(seen.size(), 20000u);
  for (std::size_t i = 1; i < seen.size(); ++i) {
    ASSERT_TRUE(seen[i - 1].first < seen[i].first ||
                (seen[i - 1].first == seen[i].first && seen[i - 1].second < seen[i].second));
  }
}

TEST(Engine, CancelledEventsDoNotRunAndSlotsAreReused) {
  Engine e;
  int runs = 0;
  const auto h = e.register_handler([&](Engine&, std::uint64_t) { ++runs; });
  auto a = e.schedule(Time(5), h, 0);
  e.schedule(Time(6), h, 0);
  e.cancel(a);
  e.cancel(a);  // twice is harmless
  e.run();
  EXPECT_EQ(runs, 1);
  auto b = e.schedule(Time(7), h, 0);
  e.run();
  e.cancel(b);  // after it ran: a no-op
  EXPECT_EQ(runs, 2);
}

TEST(Engine, HandlersScheduleMoreAndStopIsAnEvent) {
  Engine e;
  HandlerId h = 0;
  h = e.register_handler([&](Engine& en, std::uint64_t n) {
    if (n > 0) en.schedule_after(Duration(10), h, n - 1);
  });
  e.schedule(Time(0), h, 100);
  e.stop_at(Time(55));
  e.run();
  EXPECT_EQ(e.now(), Time(55));
  EXPECT_GT(e.pending(), 0u);
  EXPECT_THROW(e.schedule(Time(1), h, 0), std::logic_error);
}

TEST(Schedule, ResourceSerialisesReadyTasksInReadyOrder) {
  dag::TaskGraph g;
  const auto r = g.add_resource({dag::ResourceKind::kNetwork, dag::kAllRanks});
  for (int i = 0; i < 3; ++i) {
    dag::Task t;
    t.resource = r;
    t.duration = Duration(10);
    g.add_task(t);
  }
  g.finalize();
  const Schedule s = run_schedule(g);
  EXPECT_EQ(s.start, (std::vector<Time>{Time(0), Time(10), Time(20)}));
  EXPECT_EQ(s.started_by[2], 1u);
  EXPECT_EQ(s.makespan, Time(30));
}

TEST(Schedule, SameInputGivesIdenticalSchedule) {
  trace::LayerProfile p;
  std::mt19937_64 rng(3);
  for (int l = 0; l < 20; ++l) {
    p.layers.push_back({l, fmt::format("l{}", l), Duration(static_cast<std::int64_t>(rng() % 5000)),
                        Duration(static_cast<std::int64_t>(rng() % 9000)),
                        static_cast<std::int64_t>(rng() % 100000), Duration(static_cast<std::int64_t>(rng() % 7000)), std::nullopt, std::nullopt});
  }
  dag::CommPlan plan;
  for (int l = 19; l >= 0; --l) plan.groups.push_back({{l}, p.layers[l].grad_bytes, p.layers[l].comm});
  const auto g = dag::build_profile_dag(p, {8, 4, {}, {}, {}}, plan);
  const auto a = run_schedule(g);
  const auto b = run_schedule(g);
  EXPECT_EQ(a.start, b.start);
  EXPECT_EQ(a.end, b.end);
  EXPECT_EQ(a.started_by, b.started_by);
}

}  // namespace
}  // namespace ssgd::sim
