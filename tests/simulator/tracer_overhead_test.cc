// A capture made with a tracing window (tracer/core/trace_window.h): the
// profile tells its traced steps from its untraced ones
// (walk/trace_profile.h), and workload.tracer_overhead: remove takes the
// difference out of the host's time (simulator/perturb/tracer_overhead.h).
// The trace is written here, its numbers worked out by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/error.h"
#include "simulator/input/scenario_inputs.h"
#include "walk/trace_profile.h"
#include "simulator/perturb/tracer_overhead.h"
#include "simulator/replay/replay.h"
#include "simulator/scenario/scenario.h"
#include "tests/support/test_files.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

namespace ssgd::sim {
namespace {

namespace fs = std::filesystem;
namespace v1 = trace::v1;
using ::testing::HasSubstr;

v1::Event marker(const std::string& name, std::int64_t start, std::int64_t end,
                 const std::string& domain = "") {
  v1::Event e;
  auto* m = e.mutable_marker();
  m->set_name(name);
  m->set_domain(domain);
  m->set_start_ns(start);
  m->set_end_ns(end);
  return e;
}

v1::Event work(const std::string& name, std::int32_t device, std::int64_t start,
               std::int64_t end) {
  v1::Event e;
  auto* k = e.mutable_kernel();
  k->set_name(name);
  k->set_device(device);
  k->set_stream(device < 0 ? 1 : 7);
  k->set_start_ns(start);
  k->set_end_ns(end);
  return e;
}

// Six steps back to back; the window is on for steps 2 and 3. Untraced steps
// take 1000 ns, traced ones 1300 (their marks: a host operator of 500 ns in
// layer l0's forward, a GPU kernel of 800 ns in its backward). The forward
// is 1300 ns of host time: the operator's 500 and the 800 its thread spent
// since its previous operator (the interpreter's time, walk/trace_walk.h).
class TracerOverheadTest : public ssgd::testing::TempDirTest {
 protected:
  trace::LayerProfile windowed_profile() {
    std::vector<v1::Event> ev;
    const std::string w = "ssgd-window";
    std::int64_t next = 0;  // steps back to back: no idle time between them
    for (int n = 0; n < 6; ++n) {
      const std::int64_t t = next;
      const bool traced = n == 2 || n == 3;
      next += traced ? 1300 : 1000;
      if (n == 2) ev.push_back(marker("window/open", t, t, w));
      ev.push_back(marker("step/" + std::to_string(n), t, t + (traced ? 1300 : 1000), w));
      if (traced) {
        ev.push_back(marker("iteration/" + std::to_string(n), t, t + 1300));
        ev.push_back(marker("forward/l0", t, t + 500));
        ev.push_back(work("aten::mm", -1, t, t + 500));
        ev.push_back(marker("backward/l0", t + 500, t + 1300));
        ev.push_back(work("k", 0, t + 500, t + 1300));
      }
      if (n == 3) ev.push_back(marker("window/close", t + 1300, t + 1300, w));
    }
    const fs::path path = dir_ / "windowed.ssgdt";
    v1::CaptureMetadata meta;
    meta.set_tool("tracer_overhead_test");
    trace::TraceWriter writer(path, meta);
    for (const auto& e : ev) writer.append(e);
    writer.close();
    auto reader = trace::TraceReader::open(path);
    walk::TraceProfileResult r = walk::profile_from_trace(reader, "windowed.ssgdt");
    warnings_ = r.warnings;
    return r.profile;
  }
  std::vector<std::string> warnings_;
};

TEST_F(TracerOverheadTest, TheProfileTellsTracedFromUntracedSteps) {
  const trace::LayerProfile p = windowed_profile();
  ASSERT_TRUE(p.tracing_window.has_value());
  EXPECT_EQ(p.tracing_window->traced, 2);
  EXPECT_EQ(p.tracing_window->untraced, 4);
  EXPECT_EQ(p.tracing_window->traced_median, Duration(1300));
  EXPECT_EQ(p.tracing_window->untraced_median, Duration(1000));
  ASSERT_EQ(p.layers.size(), 1u);
  EXPECT_EQ(p.layers[0].forward, Duration(1300));
  EXPECT_EQ(p.layers[0].backward, Duration(800));
  bool said = false;
  for (const auto& w : warnings_) said = said || w.find("tracing window: 2 step(s) traced") == 0;
  EXPECT_TRUE(said);
}

// 300 ns a step of window cost, out of 1300 ns of host time: the forward
// keeps 1000; the GPU's kernel is untouched.
TEST_F(TracerOverheadTest, RemoveTakesTheDifferenceOutOfTheHostsTime) {
  const trace::LayerProfile p = windowed_profile();
  trace::LayerProfile out;
  const TracerOverhead o = plan_tracer_overhead(p, true, &out);
  ASSERT_TRUE(o.removed);
  EXPECT_EQ(o.removed_per_iteration, Duration(300));
  EXPECT_EQ(out.layers[0].forward, Duration(1000));
  EXPECT_EQ(out.layers[0].backward, Duration(800));
  EXPECT_EQ(out.layers[0].forward_split->total(), 1000);
  EXPECT_TRUE(o.note.empty());

  const Scenario keep = load_scenario(std::nullopt, {"iterations=4"});
  const Scenario remove =
      load_scenario(std::nullopt, {"iterations=4", "workload.tracer_overhead=remove"});
  const ReplayResult as_traced = replay(p, keep);
  const ReplayResult untraced = replay(p, remove);
  EXPECT_TRUE(as_traced.tracer_overhead.window);
  EXPECT_FALSE(as_traced.tracer_overhead.removed);
  EXPECT_EQ(as_traced.iteration_time - untraced.iteration_time, Duration(300));
}

TEST_F(TracerOverheadTest, MoreThanTheHostHoldsIsCappedWithANote) {
  trace::LayerProfile p = windowed_profile();
  p.tracing_window->traced_median = Duration(3000);  // 2000 ns of cost, 1300 of host time
  trace::LayerProfile out;
  const TracerOverhead o = plan_tracer_overhead(p, true, &out);
  EXPECT_EQ(o.removed_per_iteration, Duration(1300));
  EXPECT_THAT(o.note, HasSubstr("only that removed"));
}

// A capture of 2 micro-batches a step: its rows are one micro-batch's, and
// the step's 300 ns of window cost come out of both: 300 of 2 x 1000 ns of
// compute, so each row keeps 85% (70% if the rows were the whole step).
TEST_F(TracerOverheadTest, AStepsCostIsSharedByItsMicroBatches) {
  trace::LayerProfile p;
  p.source = "micro.csv";
  p.layers.push_back(
      {0, "l0", Duration(400), Duration(600), 1000, std::nullopt, std::nullopt, std::nullopt});
  p.tracing_window = windowed_profile().tracing_window;
  p.micro_batches = 2;
  trace::LayerProfile out;
  const TracerOverhead o = plan_tracer_overhead(p, true, &out);
  ASSERT_TRUE(o.removed);
  EXPECT_EQ(out.layers[0].forward, Duration(340));
  EXPECT_EQ(out.layers[0].backward, Duration(510));
  EXPECT_EQ(o.removed_per_iteration, Duration(300));
  p.micro_batches.reset();
  EXPECT_EQ(plan_tracer_overhead(p, true, &out).removed_per_iteration, Duration(300));
  EXPECT_EQ(out.layers[0].forward, Duration(280));
}

TEST(TracerOverhead, RemoveWithoutAWindowIsRefusedAtItsKey) {
  trace::LayerProfile p;
  p.source = "plain.csv";
  p.layers.push_back({0, "l0", Duration(100), Duration(200), 1000, std::nullopt, std::nullopt,
                      std::nullopt});
  trace::LayerProfile out;
  EXPECT_FALSE(plan_tracer_overhead(p, false, &out).window);
  try {
    (void)plan_tracer_overhead(p, true, &out);
    FAIL() << "expected a refusal";
  } catch (const ParameterError& e) {
    EXPECT_EQ(e.key(), "workload.tracer_overhead");
    EXPECT_THAT(std::string(e.what()), HasSubstr("plain.csv was not captured with a tracing window"));
  }
  EXPECT_THROW(load_scenario(std::nullopt, {"workload.tracer_overhead=sometimes"}), InputError);
}

}  // namespace
}  // namespace ssgd::sim
