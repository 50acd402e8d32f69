// A graph built and released an iteration window at a time runs exactly as
// the whole graph does: every task's start and end, the batches, the
// critical path and the event count, under every shape of the S-SGD DAG
// (policies' plans, per-group updates, prefetching, priority with credit and
// round costs), with durations that differ task by task, whether or not
// the source gives its layout hint.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "dag/critical_path.h"
#include "dag/profile_dag_builder.h"
#include "simulator/engine/deadlock_error.h"
#include "simulator/engine/schedule.h"
#include "simulator/engine/windowed_schedule.h"
#include "tests/support/builder_source.h"

namespace ssgd::sim {
namespace {

trace::LayerProfile profile(int layers) {
  trace::LayerProfile p;
  for (int l = 0; l < layers; ++l) {
    p.layers.push_back({l, fmt::format("l{}", l), Duration(1'000 + 300 * l),
                        Duration(2'000 + 170 * l), 1'000'000 + 250'000 * l, std::nullopt, std::nullopt, std::nullopt});
  }
  return p;
}

// Durations that differ by task, the same however the task is built: a
// hash of its id scales it by 0.5 to 1.5 (collectives keep ties by being
// rounded to microseconds).
void vary(std::span<dag::Task> tasks, dag::TaskId first) {
  for (std::size_t k = 0; k < tasks.size(); ++k) {
    std::uint64_t h = (first + k + 1) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    auto& t = tasks[k];
    if (t.kind == dag::TaskKind::kComm) {
      t.duration = Duration(5'000 + static_cast<std::int64_t>(t.bytes / 1'000) / 1'000 * 1'000);
    } else {
      t.duration = Duration(t.duration.ns() / 2 +
                            static_cast<std::int64_t>(h % 1'000) * t.duration.ns() / 1'000);
    }
  }
}

using testing::source_of;

// One collective for all `layers` layers, of 1,000 bytes.
dag::CommPlan one_group(std::int32_t layers) {
  dag::CommPlan plan;
  dag::CommGroup g{{}, 1'000, std::nullopt};
  for (std::int32_t l = layers - 1; l >= 0; --l) g.layers.push_back(l);
  plan.groups.push_back(g);
  return plan;
}

// Shape with default durations (zero io, h2d and update).
dag::DagShape small_shape(std::int64_t workers, std::int64_t iterations) {
  dag::DagShape shape;
  shape.workers = workers;
  shape.iterations = iterations;
  return shape;
}

class Recorder : public TaskObserver {
 public:
  explicit Recorder(std::size_t n) : start(n, Time(-1)), end(n, Time(-1)) {}
  void started(dag::TaskId id, const dag::Task&, Time now) override {
    EXPECT_EQ(start[id], Time(-1)) << "started twice: " << id;
    start[id] = now;
  }
  void ended(dag::TaskId id, const dag::Task&, Time now) override {
    EXPECT_EQ(end[id], Time(-1)) << "ended twice: " << id;
    end[id] = now;
  }
  std::vector<Time> start, end;
};

struct Shape {
  const char* name;
  dag::DagShape shape;
  dag::CommPlan plan;
};

std::vector<Shape> shapes(const trace::LayerProfile& p) {
  const auto L = static_cast<std::int32_t>(p.layers.size());
  dag::CommPlan per_layer;  // WFBP: a collective a layer, last layer first
  for (std::int32_t l = L - 1; l >= 0; --l) {
    per_layer.groups.push_back(
        {{l}, p.layers[static_cast<std::size_t>(l)].grad_bytes, std::nullopt});
  }
  dag::CommPlan bsp = per_layer;
  bsp.wait_for_full_backward = true;
  dag::CommPlan merged;  // two buckets, one measured
  merged.groups.push_back({{L - 1, L - 2, L - 3}, 3'000'000, std::nullopt});
  merged.groups.push_back({{2, 1, 0}, 2'000'000, Duration(7'777)});
  dag::CommPlan priority = per_layer;
  priority.prioritized = true;
  priority.credit_bytes = 2'600'000;
  priority.round_overhead = Duration(900);
  priority.group_overhead = Duration(300);
  dag::CommPlan one_at_a_time = per_layer;
  one_at_a_time.prioritized = true;

  auto shape = [](std::int64_t workers, std::int64_t iterations) {
    dag::DagShape s;
    s.workers = workers;
    s.iterations = iterations;
    s.io = Duration(1'500);
    s.h2d = Duration(700);
    s.update = Duration(2'000);
    return s;
  };
  std::vector<Shape> out;
  out.push_back({"wfbp", shape(4, 7), per_layer});
  out.push_back({"bsp", shape(3, 6), bsp});
  out.push_back({"merged buckets", shape(5, 5), merged});
  auto prefetch = shape(4, 9);
  prefetch.prefetch_depth = 3;
  out.push_back({"prefetch 3", prefetch, per_layer});
  auto prefetch1 = shape(2, 5);
  prefetch1.prefetch_depth = 1;
  out.push_back({"prefetch 1, per-group update", prefetch1, per_layer});
  out.back().shape.update_per_group = true;
  auto pg = shape(4, 6);
  pg.update_per_group = true;
  out.push_back({"priority, credit, round costs, per-group update", pg, priority});
  out.push_back({"priority one at a time, global update", shape(3, 6), one_at_a_time});
  auto folded = shape(1, 4);
  folded.folded = true;
  out.push_back({"folded", folded, per_layer});
  out.push_back({"one worker", shape(1, 3), per_layer});
  out.push_back({"one iteration", shape(4, 1), per_layer});
  return out;
}

TEST(WindowedSchedule, RunsAsTheWholeGraphToTheNanosecond) {
  const auto p = profile(6);
  for (const auto& c : shapes(p)) {
    for (const bool in_order : {false, true}) {
      SCOPED_TRACE(fmt::format("{}{}", c.name, in_order ? ", no layout hint" : ""));
      dag::TaskGraph whole = dag::build_profile_dag(p, c.shape, c.plan);
      vary(whole.mutable_tasks(), 0);
      ScheduleOptions opts;
      opts.batch_duration = [](const dag::Task& merged) { return Duration(merged.bytes / 1'000); };
      const Schedule expected = run_schedule(whole, opts);

      dag::ProfileDagBuilder builder(p, c.shape, c.plan);
      const IterationSource source = source_of(
          builder, [](dag::TaskBatch& batch) { vary(batch.tasks, batch.first); }, in_order);
      Recorder seen(whole.task_count());
      Engine engine;
      const WindowedSchedule got = run_windowed(engine, source, opts, seen);

      EXPECT_EQ(seen.start, expected.start);
      EXPECT_EQ(seen.end, expected.end);
      EXPECT_EQ(got.makespan, expected.makespan);
      EXPECT_EQ(got.events, expected.events);
      EXPECT_EQ(got.batches, expected.batches);
      EXPECT_EQ(got.tasks, whole.task_count());
      EXPECT_EQ(got.edges, whole.edge_count());
      const dag::CriticalPath path = dag::scheduled_critical_path(whole, expected.view());
      EXPECT_EQ(got.critical_path.task_count, path.tasks.size());
      EXPECT_TRUE(got.critical_path.tasks.empty());
      EXPECT_EQ(got.critical_path.length, path.length);
      EXPECT_EQ(got.critical_path.time_by_kind, path.time_by_kind);
      EXPECT_EQ(got.critical_path.gaps, path.gaps);
      // A window, not the run: the one finishing, the one running and those
      // a loader reads ahead.
      EXPECT_LE(got.peak_iterations_held,
                std::min<std::int64_t>(c.shape.iterations, builder.reach() + 2));

      // The same without the event engine, where the graph allows it.
      dag::ProfileDagBuilder again(p, c.shape, c.plan);
      const IterationSource list_source = source_of(
          again, [](dag::TaskBatch& batch) { vary(batch.tasks, batch.first); }, in_order);
      Recorder list_seen(whole.task_count());
      std::string refused;
      Engine list_engine;
      const auto list = run_windowed_list(list_engine, list_source, opts, list_seen, &refused);
      // Refused only where a resource's order, or a prioritized one, decides.
      const std::string name = c.name;
      const bool orders = name.find("prefetch") != std::string::npos ||
                          name.find("priority") != std::string::npos;
      EXPECT_EQ(list.has_value(), !orders) << refused;
      if (!list) continue;
      EXPECT_EQ(list_seen.start, expected.start);
      EXPECT_EQ(list_seen.end, expected.end);
      EXPECT_EQ(list->makespan, expected.makespan);
      EXPECT_EQ(list->events, expected.events);
      EXPECT_TRUE(list->batches.empty());
      EXPECT_EQ(list->tasks, whole.task_count());
      EXPECT_EQ(list->edges, whole.edge_count());
      EXPECT_EQ(list->critical_path.task_count, path.tasks.size());
      EXPECT_EQ(list->critical_path.length, path.length);
      EXPECT_EQ(list->critical_path.time_by_kind, path.time_by_kind);
      EXPECT_EQ(list->critical_path.gaps, path.gaps);
    }
  }
}

TEST(WindowedSchedule, HoldsAWindowOfALongRun) {
  const auto p = profile(4);
  dag::CommPlan plan;
  for (std::int32_t l = 3; l >= 0; --l) plan.groups.push_back({{l}, 1'000'000, std::nullopt});
  dag::DagShape shape;
  shape.workers = 8;
  shape.iterations = 200;
  dag::ProfileDagBuilder builder(p, shape, plan);
  const IterationSource source = source_of(builder, [](dag::TaskBatch& b) {
    for (auto& t : b.tasks) {
      if (t.kind == dag::TaskKind::kComm) t.duration = Duration(3'000);
    }
  });
  Recorder seen(builder.tasks_per_iteration() * 200);
  Engine engine;
  const WindowedSchedule got = run_windowed(engine, source, {}, seen);
  EXPECT_EQ(got.tasks, builder.tasks_per_iteration() * 200);
  // The next iteration is built when the first update of this one ends.
  EXPECT_EQ(got.peak_iterations_held, 2);
  EXPECT_GT(got.makespan, Time::zero());
}

// Iterations are built ahead on a thread of their own: what a build throws
// there reaches the caller of run_windowed, whichever iteration it is.
TEST(WindowedSchedule, ABuildThatFailsAheadFailsTheRun) {
  const auto p = profile(3);
  const dag::CommPlan plan = one_group(3);
  const dag::DagShape shape = small_shape(3, 6);
  for (const std::int32_t failing : {1, 4, 5}) {
    SCOPED_TRACE(failing);
    dag::ProfileDagBuilder builder(p, shape, plan);
    const IterationSource source = source_of(builder, [failing](dag::TaskBatch& b) {
      if (b.tasks.front().iteration == failing) throw std::runtime_error("no room");
    });
    Recorder seen(builder.tasks_per_iteration() * 6);
    Engine engine;
    EXPECT_THROW(run_windowed(engine, source, {}, seen), std::runtime_error);
  }
}

TEST(WindowedSchedule, ASourceThatBreaksItsRulesIsALogicError) {
  const auto p = profile(3);
  const dag::CommPlan plan = one_group(3);
  const dag::DagShape shape = small_shape(2, 4);
  {
    // Wrong task count.
    dag::ProfileDagBuilder builder(p, shape, plan);
    IterationSource source = source_of(builder);
    ++source.tasks_per_iteration;
    Recorder seen(100);
    Engine engine;
    EXPECT_THROW(run_windowed(engine, source, {}, seen), std::logic_error);
  }
  {
    // Edges reach two iterations forward, but the source says one.
    dag::DagShape deep = shape;
    deep.prefetch_depth = 2;
    dag::ProfileDagBuilder builder(p, deep, plan);
    IterationSource source = source_of(builder);
    source.reach = 1;
    Recorder seen(builder.tasks_per_iteration() * 4);
    Engine engine;
    EXPECT_THROW(run_windowed(engine, source, {}, seen), std::logic_error);
  }
  {
    // An edge leaves an iteration from a task the source says stays in it.
    dag::ProfileDagBuilder builder(p, shape, plan);
    IterationSource source = source_of(builder);
    source.reaches_forward = [](const dag::Task& t) { return t.kind == dag::TaskKind::kIo; };
    Recorder seen(builder.tasks_per_iteration() * 4);
    Engine engine;
    EXPECT_THROW(run_windowed(engine, source, {}, seen), std::logic_error);
  }
  {
    // A layout hint with more tasks than an iteration has.
    dag::ProfileDagBuilder builder(p, shape, plan);
    IterationSource source = source_of(builder);
    ++source.tasks_per_rank;
    Recorder seen(builder.tasks_per_iteration() * 4);
    Engine engine;
    EXPECT_THROW(run_windowed(engine, source, {}, seen), std::logic_error);
  }
}

}  // namespace
}  // namespace ssgd::sim
