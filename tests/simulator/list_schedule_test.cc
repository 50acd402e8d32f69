// A list schedule (run_windowed_list) gives the event run's figures to the
// nanosecond, or refuses: on random S-SGD DAGs of every shape, with
// durations drawn coarse (so that tasks tie, and some take no time) or
// fine, every task's start and end, the makespan, the event count and the
// critical path are the event run's whenever it accepts; and what its
// observer sees keeps the order it promises.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "dag/profile_dag_builder.h"
#include "simulator/engine/deadlock_error.h"
#include "simulator/engine/windowed_schedule.h"
#include "tests/support/builder_source.h"

namespace ssgd::sim {
namespace {

// Records each task's start and end, and checks the order the list
// schedule promises: each rank's tasks in time order, a task's end right
// after its start, the collectives one after another in time order.
class Recorder : public TaskObserver {
 public:
  explicit Recorder(std::size_t n) : start(n, Time(-1)), end(n, Time(-1)) {}
  void started(dag::TaskId id, const dag::Task& task, Time now) override {
    start.at(id) = now;
    Time& seen = task.rank == dag::kAllRanks ? comm_seen_ : rank_seen_[task.rank];
    if (ordered && now < seen) ++out_of_order;
    open_ = id;
  }
  void ended(dag::TaskId id, const dag::Task& task, Time now) override {
    end.at(id) = now;
    if (ordered && open_ != id) ++out_of_order;
    (task.rank == dag::kAllRanks ? comm_seen_ : rank_seen_[task.rank]) = now;
  }
  std::vector<Time> start, end;
  bool ordered = false;  // check the list schedule's order
  int out_of_order = 0;

 private:
  std::map<std::int32_t, Time> rank_seen_;
  Time comm_seen_;
  dag::TaskId open_ = dag::kNoTask;
};

struct Case {
  trace::LayerProfile profile;
  dag::DagShape shape;
  dag::CommPlan plan;
};

// A random S-SGD DAG: 1 to 5 layers, 1 to 6 workers, 1 to 5 iterations,
// WFBP, BSP or merged buckets, global or per-group update, prefetch 0 to 2.
Case random_case(std::mt19937_64& rng) {
  auto pick = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Case c;
  const int layers = pick(1, 5);
  for (int l = 0; l < layers; ++l) {
    c.profile.layers.push_back({l, fmt::format("l{}", l), Duration(1'000 + 300 * l),
                                Duration(2'000 + 170 * l), 1'000'000 + 250'000 * l, std::nullopt, std::nullopt, std::nullopt});
  }
  c.shape.workers = pick(1, 6);
  c.shape.iterations = pick(1, 5);
  c.shape.io = Duration(pick(0, 2) * 1'000);
  c.shape.h2d = Duration(pick(0, 1) * 700);
  c.shape.update = Duration(pick(0, 2) * 1'000);
  c.shape.update_per_group = pick(0, 3) == 0;
  c.shape.prefetch_depth = pick(0, 4) == 0 ? pick(1, 2) : 0;
  const int kind = pick(0, 2);
  if (kind == 2 && layers >= 2) {
    dag::CommGroup back{{}, 3'000'000, std::nullopt}, front{{}, 2'000'000, std::nullopt};
    for (int l = layers - 1; l >= 0; --l) (l >= layers / 2 ? back : front).layers.push_back(l);
    c.plan.groups = {back};
    if (!front.layers.empty()) c.plan.groups.push_back(front);
  } else {
    for (int l = layers - 1; l >= 0; --l) {
      c.plan.groups.push_back(
          {{l}, c.profile.layers[static_cast<std::size_t>(l)].grad_bytes, std::nullopt});
    }
    c.plan.wait_for_full_backward = kind == 1;
  }
  return c;
}

// Durations a hash of the task's id and `salt` draws: coarse (0 to 4 us in
// whole microseconds: many ties, some tasks of no time) or fine.
void draw(std::span<dag::Task> tasks, dag::TaskId first, std::uint64_t salt, bool coarse) {
  for (std::size_t k = 0; k < tasks.size(); ++k) {
    std::uint64_t h = (first + k + 1) * 0x9E3779B97F4A7C15ull ^ salt;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    tasks[k].duration = coarse ? Duration(static_cast<std::int64_t>(h % 5) * 1'000)
                               : Duration(500 + static_cast<std::int64_t>(h % 1'000'003));
  }
}

IterationSource source_of(dag::ProfileDagBuilder& builder, std::uint64_t salt, bool coarse) {
  return testing::source_of(builder, [salt, coarse](dag::TaskBatch& batch) {
    draw(batch.tasks, batch.first, salt, coarse);
  });
}

// The list schedule's figures are the event run's.
void expect_same(const Recorder& seen, const WindowedSchedule& got, const Recorder& events_seen,
                 const WindowedSchedule& expected) {
  EXPECT_EQ(seen.out_of_order, 0);
  EXPECT_EQ(seen.start, events_seen.start);
  EXPECT_EQ(seen.end, events_seen.end);
  EXPECT_EQ(got.makespan, expected.makespan);
  EXPECT_EQ(got.events, expected.events);
  EXPECT_EQ(got.tasks, expected.tasks);
  EXPECT_EQ(got.edges, expected.edges);
  EXPECT_EQ(got.critical_path.task_count, expected.critical_path.task_count);
  EXPECT_EQ(got.critical_path.length, expected.critical_path.length);
  EXPECT_EQ(got.critical_path.time_by_kind, expected.critical_path.time_by_kind);
  EXPECT_EQ(got.critical_path.gaps, expected.critical_path.gaps);
}

TEST(ListSchedule, GivesTheEventRunsFiguresOrRefuses) {
  std::mt19937_64 rng(20261126);
  int accepted = 0, refused = 0;
  std::map<std::string, int> reasons;
  for (int k = 0; k < 400; ++k) {
    const Case c = random_case(rng);
    const bool coarse = k % 2 == 0;
    const std::uint64_t salt = rng();
    SCOPED_TRACE(fmt::format(
        "case {}: {} workers, {} iterations, {} layers, {} groups, "
        "prefetch {}, per-group update {}, {}",
        k, c.shape.workers, c.shape.iterations, c.profile.layers.size(), c.plan.groups.size(),
        c.shape.prefetch_depth, c.shape.update_per_group, coarse ? "coarse" : "fine"));
    dag::ProfileDagBuilder builder(c.profile, c.shape, c.plan);
    const std::size_t n =
        builder.tasks_per_iteration() * static_cast<std::size_t>(c.shape.iterations);
    const IterationSource source = source_of(builder, salt, coarse);
    Recorder events_seen(n);
    Engine engine;
    const WindowedSchedule expected = run_windowed(engine, source, {}, events_seen);

    dag::ProfileDagBuilder again(c.profile, c.shape, c.plan);
    const IterationSource list_source = source_of(again, salt, coarse);
    Recorder seen(n);
    seen.ordered = true;
    std::string why;
    Engine list_engine;
    const auto got = run_windowed_list(list_engine, list_source, {}, seen, &why);
    if (!got) {
      ++refused;
      ++reasons[why + (coarse ? " (coarse)" : " (fine)")];
      continue;
    }
    ++accepted;
    expect_same(seen, *got, events_seen, expected);
  }
  for (const auto& [why, count] : reasons) std::printf("refused %d: %s\n", count, why.c_str());
  std::printf("accepted %d, refused %d\n", accepted, refused);
  // Both ways are exercised: a test of the comparison, and of the checks.
  EXPECT_GT(accepted, 100);
  EXPECT_GT(refused, 50);
}

// Runs collectives on the engine as the flow network does: after a first
// step (a latency of 1 us) it schedules their end, twice their time later,
// ends them from an event of its own and leaves an event at that instant
// after (as the flow network shares its links out again); with `late`, one
// a microsecond later too, which a list schedule must refuse. Their end
// events are scheduled after they start, not as they start.
class EngineExecutor : public TaskExecutor {
 public:
  EngineExecutor(Engine& engine, bool late) : engine_(engine), late_(late) {
    step_ = engine_.register_handler([](Engine&, std::uint64_t) {});
    inject_ = engine_.register_handler([this](Engine& e, std::uint64_t k) {
      e.schedule_after(duration_[k] * 2, end_, k);
    });
    end_ = engine_.register_handler([this](Engine& e, std::uint64_t k) {
      auto done = std::move(finished_[k]);
      finished_.erase(k);
      e.schedule(e.now(), step_, 0);
      if (late_) e.schedule_after(Duration(1'000), step_, 0);
      done();
    });
  }
  [[nodiscard]] bool handles(const dag::Task& task) const override {
    return task.kind == dag::TaskKind::kComm;
  }
  void start(dag::TaskId, const dag::Task& task, std::function<void()> finished) override {
    const std::uint64_t k = next_++;
    finished_.emplace(k, std::move(finished));
    duration_.emplace(k, task.duration);
    engine_.schedule_after(Duration(1'000), inject_, k);
  }

 private:
  Engine& engine_;
  bool late_;
  HandlerId step_ = 0, inject_ = 0, end_ = 0;
  std::uint64_t next_ = 0;
  std::map<std::uint64_t, std::function<void()>> finished_;
  std::map<std::uint64_t, Duration> duration_;
};

TEST(ListSchedule, RunsAnExecutorsTasksOnTheEngine) {
  std::mt19937_64 rng(99);
  int accepted = 0;
  for (int k = 0; k < 400; ++k) {
    const Case c = random_case(rng);
    const std::uint64_t salt = rng();
    const bool late = k % 10 == 0;
    const bool coarse = k % 2 == 1;  // collectives that end as rank tasks do
    SCOPED_TRACE(fmt::format("case {}{}", k, late ? ", late" : ""));
    dag::ProfileDagBuilder builder(c.profile, c.shape, c.plan);
    const std::size_t n =
        builder.tasks_per_iteration() * static_cast<std::size_t>(c.shape.iterations);
    Engine engine;
    EngineExecutor executor(engine, late);
    ScheduleOptions opts;
    opts.executor = &executor;
    Recorder events_seen(n);
    const WindowedSchedule expected =
        run_windowed(engine, source_of(builder, salt, coarse), opts, events_seen);

    dag::ProfileDagBuilder again(c.profile, c.shape, c.plan);
    Engine list_engine;
    EngineExecutor list_executor(list_engine, late);
    opts.executor = &list_executor;
    Recorder seen(n);
    seen.ordered = true;
    std::string why;
    const auto got =
        run_windowed_list(list_engine, source_of(again, salt, coarse), opts, seen, &why);
    const bool collectives = builder.tasks_per_iteration() >
                             static_cast<std::size_t>(builder.ranks()) * builder.tasks_per_rank();
    if (late && collectives) {
      EXPECT_FALSE(got.has_value());
    }
    if (!got) continue;
    ++accepted;
    expect_same(seen, *got, events_seen, expected);
  }
  EXPECT_GT(accepted, 50);
}

// Random graphs of no particular shape: 2 to 4 iterations of 3 to 12
// tasks, each after one or more of the tasks before it (and the first after
// the last iteration's last task, which reaches forward), on 1 to 4 resources
// shared at random, of 1 to 3 ranks or collectives.
struct RandomSource {
  IterationSource source;
  std::vector<dag::Task> shape;                         // one iteration's tasks
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;  // local, within it
  std::uint64_t salt = 0;
  bool coarse = false;
};

RandomSource random_graph(std::mt19937_64& rng, bool coarse) {
  auto pick = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  RandomSource g;
  g.coarse = coarse;
  g.salt = rng();
  const int n = pick(3, 12);
  const int resources = pick(1, 4);
  for (int k = 0; k < n; ++k) {
    dag::Task t;
    t.resource = static_cast<dag::ResourceId>(pick(0, resources - 1));
    t.rank = pick(0, 3) == 0 ? dag::kAllRanks : pick(0, 2);
    t.kind = t.rank == dag::kAllRanks ? dag::TaskKind::kComm : dag::TaskKind::kForward;
    g.shape.push_back(t);
    const std::size_t before = g.edges.size();
    for (int j = 0; j < k; ++j) {
      if (pick(0, 2) == 0) g.edges.emplace_back(j, k);
    }
    // Only the first iteration may hold a task without predecessors.
    if (k > 0 && g.edges.size() == before) g.edges.emplace_back(pick(0, k - 1), k);
  }
  g.source.resources.resize(static_cast<std::size_t>(resources));
  g.source.tasks_per_iteration = static_cast<std::size_t>(n);
  g.source.iterations = pick(2, 4);
  g.source.reaches_forward = [n](const dag::Task& t) { return t.layer == n - 1; };
  return g;
}

void bind(RandomSource& g) {
  g.source.build = [&g](dag::TaskBatch& batch) {
    const auto n = static_cast<dag::TaskId>(g.shape.size());
    const dag::TaskId first = batch.first;
    const auto i = static_cast<std::int32_t>(first / n);
    for (std::size_t k = 0; k < g.shape.size(); ++k) {
      dag::Task t = g.shape[k];
      t.iteration = i;
      t.layer = static_cast<std::int32_t>(k);
      batch.add_task(t);
    }
    draw(batch.tasks, first, g.salt, g.coarse);
    for (const auto& [a, b] : g.edges) batch.add_edge(first + a, first + b);
    if (first > 0) batch.add_edge(first - 1, first);  // the last task reaches forward
  };
}

TEST(ListSchedule, GivesTheEventRunsFiguresOnRandomGraphsOrRefuses) {
  std::mt19937_64 rng(7);
  int accepted = 0, refused = 0;
  for (int k = 0; k < 2'000; ++k) {
    const bool coarse = k % 2 == 0;
    RandomSource g = random_graph(rng, coarse);
    bind(g);
    SCOPED_TRACE(fmt::format("graph {}: {} tasks, {} edges, {} resources, {}", k, g.shape.size(),
                             g.edges.size(), g.source.resources.size(),
                             coarse ? "coarse" : "fine"));
    const std::size_t n =
        g.shape.size() * static_cast<std::size_t>(g.source.iterations);
    Recorder events_seen(n);
    Engine engine;
    WindowedSchedule expected;
    try {
      expected = run_windowed(engine, g.source, {}, events_seen);
    } catch (const DeadlockError&) {
      FAIL() << "a graph whose edges go forward cannot deadlock";
    }
    RandomSource again = g;
    bind(again);
    Recorder seen(n);
    seen.ordered = true;
    Engine list_engine;
    const auto got = run_windowed_list(list_engine, again.source, {}, seen);
    if (!got) {
      ++refused;
      continue;
    }
    ++accepted;
    expect_same(seen, *got, events_seen, expected);
  }
  std::printf("random graphs: accepted %d, refused %d\n", accepted, refused);
  EXPECT_GT(accepted, 150);
  EXPECT_GT(refused, 150);
}

// A graph that can never finish is refused: the event run says why.
TEST(ListSchedule, RefusesAGraphThatNeverFinishes) {
  IterationSource source;
  source.resources = {dag::Resource{}, dag::Resource{}};
  source.tasks_per_iteration = 3;
  source.iterations = 1;
  source.build = [](dag::TaskBatch& batch) {
    dag::Task t;
    t.duration = Duration(10);
    const auto a = batch.add_task(t);
    t.resource = 1;
    const auto b = batch.add_task(t);
    const auto c = batch.add_task(t);
    batch.add_edge(a, b);
    batch.add_edge(c, b);
    batch.add_edge(b, c);
  };
  Recorder seen(3);
  std::string why;
  Engine list_engine;
  EXPECT_FALSE(run_windowed_list(list_engine, source, {}, seen, &why));
  EXPECT_EQ(why, "tasks are left that never start");
  Engine engine;
  Recorder events_seen(3);
  EXPECT_THROW(run_windowed(engine, source, {}, events_seen), DeadlockError);
}

// What a build throws, and a source that breaks its rules, reach the caller
// as they do from run_windowed().
TEST(ListSchedule, ThrowsWhatTheSourceThrows) {
  trace::LayerProfile p;
  p.layers.push_back({0, "l0", Duration(1'000), Duration(2'000), 1'000, std::nullopt, std::nullopt, std::nullopt});
  dag::CommPlan plan;
  plan.groups.push_back({{0}, 1'000, std::nullopt});
  dag::DagShape shape;
  shape.workers = 3;
  shape.iterations = 4;
  {
    dag::ProfileDagBuilder builder(p, shape, plan);
    IterationSource source = source_of(builder, 1, false);
    source.build = [&builder](dag::TaskBatch& b) {
      builder.add_iteration(b);
      draw(b.tasks, b.first, 1, false);
      if (b.tasks.front().iteration == 2) throw std::runtime_error("no room");
    };
    Recorder seen(builder.tasks_per_iteration() * 4);
    std::string why;
    Engine list_engine;
    EXPECT_THROW(run_windowed_list(list_engine, source, {}, seen, &why), std::runtime_error) << why;
  }
  {
    dag::ProfileDagBuilder builder(p, shape, plan);
    IterationSource source = source_of(builder, 1, false);
    ++source.tasks_per_iteration;
    Recorder seen(100);
    Engine list_engine;
    EXPECT_THROW(run_windowed_list(list_engine, source, {}, seen), std::logic_error);
  }
}

}  // namespace
}  // namespace ssgd::sim
