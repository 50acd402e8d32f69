#include "dag/time_breakdown.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

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


// OnlineBreakdown, fed the events of a schedule in time order (ties in any
// order), gives average_breakdown() over the windows replay() measures, to
// the nanosecond: random ranks with overlapping io and compute, zero-length
// tasks, collectives overlapping or started together, several updates an
// iteration, weights.
TEST(TimeBreakdown, OnlineEqualsTheSweepOverTheWholeSchedule) {
  std::uint64_t state = 12345;
  auto rnd = [&state](std::int64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::int64_t>((state >> 33) % static_cast<std::uint64_t>(n));
  };
  int lagged = 0;  // rounds also measured in a list schedule's order
  for (int round = 0; round < 400; ++round) {
    const std::int64_t ranks = 1 + rnd(4);
    const std::int64_t iterations = 1 + rnd(4);
    const std::int64_t updates = 1 + rnd(3);
    TaskGraph g;
    const auto compute = g.add_resource({ResourceKind::kCompute, 0});
    std::vector<Time> start, end;
    auto add = [&](TaskKind kind, std::int32_t rank, std::int32_t iteration, std::int64_t from,
                   std::int64_t length) {
      Task t;
      t.kind = kind;
      t.rank = rank;
      t.iteration = iteration;
      t.resource = compute;
      g.add_task(t);
      start.push_back(Time(from));
      end.push_back(Time(from + length));
    };
    for (std::int32_t i = 0; i < iterations; ++i) {
      for (std::int32_t r = 0; r < ranks; ++r) {
        const std::int64_t base = 1000 * i + rnd(100);
        add(TaskKind::kIo, r, i, base, rnd(80));
        add(TaskKind::kH2d, r, i, base + rnd(100), rnd(3) == 0 ? 0 : rnd(60));
        add(TaskKind::kForward, r, i, base + 50 + rnd(100), rnd(300));
        add(TaskKind::kBackward, r, i, base + 400 + rnd(100), rnd(300));
        for (std::int64_t u = 0; u < updates; ++u) {
          add(TaskKind::kUpdate, r, i, base + 800 + rnd(150), rnd(4) == 0 ? 0 : rnd(50));
        }
      }
      for (int c = 0; c < 3; ++c) {
        const std::int64_t from = 1000 * i + 300 + rnd(600);
        const std::int64_t length = rnd(5) == 0 ? 0 : rnd(200);
        add(TaskKind::kComm, kAllRanks, i, from, length);
        if (rnd(3) == 0) add(TaskKind::kComm, kAllRanks, i, from, length);  // started together
      }
    }
    g.finalize();
    std::vector<std::int64_t> weight;
    for (std::int64_t r = 0; r < ranks; ++r) weight.push_back(1 + rnd(3));

    // The windows as replay() takes them: from the last update of the first
    // iteration (time zero for one iteration) to the last update of the last.
    std::vector<std::vector<Time>> update_end(static_cast<std::size_t>(iterations),
                                              std::vector<Time>(static_cast<std::size_t>(ranks)));
    for (TaskId t = 0; t < g.task_count(); ++t) {
      const Task& task = g.task(t);
      if (task.kind != TaskKind::kUpdate) continue;
      auto& e = update_end[static_cast<std::size_t>(task.iteration)][static_cast<std::size_t>(task.rank)];
      e = max(e, end[t]);
    }
    const std::vector<Time> from = iterations > 1
                                       ? update_end[0]
                                       : std::vector<Time>(static_cast<std::size_t>(ranks));
    const std::vector<TaskId> by(g.task_count(), kNoTask);
    const TimeBreakdown expected =
        average_breakdown(g, {start, end, by}, from, update_end.back(),
                          iterations > 1 ? iterations - 1 : 1, weight);

    // The same events in time order, ties shuffled.
    struct Event {
      Time at;
      std::int64_t tie;
      TaskId task;
      bool ends;
    };
    std::vector<Event> events;
    for (TaskId t = 0; t < g.task_count(); ++t) {
      events.push_back({start[t], rnd(1000), t, false});
      events.push_back({end[t], rnd(1000), t, true});
    }
    std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
      if (a.at != b.at) return a.at < b.at;
      if (a.task == b.task) return !a.ends;  // a zero-length task starts before it ends
      return a.tie < b.tie;
    });
    OnlineBreakdown online(ranks, iterations, updates, iterations > 1 ? 0 : -1, weight);
    for (const Event& e : events) {
      if (e.ends) {
        online.ended(g.task(e.task), e.at);
      } else {
        online.started(g.task(e.task), e.at);
      }
    }
    const TimeBreakdown got = online.result();
    SCOPED_TRACE(round);
    EXPECT_EQ(got.compute, expected.compute);
    EXPECT_EQ(got.io, expected.io);
    EXPECT_EQ(got.exposed_comm, expected.exposed_comm);
    EXPECT_EQ(got.idle, expected.idle);

    // A list schedule's order (collectives_may_lag): each rank's events in
    // time order, the collectives in time order, each started and ended at
    // once, and the two interleaved at random, so that a rank's events
    // often come before collectives that start earlier. Only where the
    // collectives do not overlap, as such a run has them.
    std::vector<std::vector<Event>> per_rank(static_cast<std::size_t>(ranks));
    std::vector<Event> comm;
    for (const Event& e : events) {
      const Task& task = g.task(e.task);
      if (task.rank == kAllRanks) {
        if (!e.ends) comm.push_back(e);
      } else {
        per_rank[static_cast<std::size_t>(task.rank)].push_back(e);
      }
    }
    bool apart = true;
    for (std::size_t k = 1; k < comm.size(); ++k) {
      apart = apart && comm[k].at >= end[comm[k - 1].task];
    }
    if (!apart) continue;
    ++lagged;
    OnlineBreakdown lag(ranks, iterations, updates, iterations > 1 ? 0 : -1, weight);
    lag.collectives_may_lag();
    std::vector<std::size_t> next(per_rank.size(), 0);
    std::size_t next_comm = 0, left = comm.size();
    for (const auto& r : per_rank) left += r.size();
    while (left > 0) {
      const auto pick = static_cast<std::size_t>(rnd(ranks + 1));
      if (pick == per_rank.size()) {
        if (next_comm == comm.size()) continue;
        const TaskId t = comm[next_comm++].task;
        lag.started(g.task(t), start[t]);
        lag.ended(g.task(t), end[t]);
      } else {
        if (next[pick] == per_rank[pick].size()) continue;
        const Event& e = per_rank[pick][next[pick]++];
        if (e.ends) {
          lag.ended(g.task(e.task), e.at);
        } else {
          lag.started(g.task(e.task), e.at);
        }
      }
      --left;
    }
    const TimeBreakdown lagging = lag.result();
    EXPECT_EQ(lagging.compute, expected.compute);
    EXPECT_EQ(lagging.io, expected.io);
    EXPECT_EQ(lagging.exposed_comm, expected.exposed_comm);
    EXPECT_EQ(lagging.idle, expected.idle);
  }
  EXPECT_GE(lagged, 10);
}

TEST(TimeBreakdown, OnlineRefusesBadShapesAndAnOpenWindow) {
  EXPECT_THROW(OnlineBreakdown(0, 1, 1, -1), std::invalid_argument);
  EXPECT_THROW(OnlineBreakdown(1, 1, 1, 0), std::invalid_argument);  // no steady iteration
  const std::vector<std::int64_t> weights{1, 0};
  EXPECT_THROW(OnlineBreakdown(2, 2, 1, 0, weights), std::invalid_argument);
  OnlineBreakdown open(1, 2, 1, 0);
  EXPECT_THROW((void)open.result(), std::logic_error);
}

}  // namespace
}  // namespace ssgd::dag
