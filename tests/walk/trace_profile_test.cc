// profile_from_trace: a layer profile from a trace's marker ranges. The
// expected numbers for tests/data/traces/marked.txtpb are worked out by hand
// in that file's header comment; the error cases are small traces written
// here with TraceWriter.
#include "walk/trace_profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/test_files.h"
#include "common/error.h"
#include "traces/trace_dump.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

namespace ssgd::walk {
namespace {

namespace fs = std::filesystem;
namespace v1 = ssgd::trace::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const fs::path kMarked = fs::path(SSGD_SOURCE_DIR) / "tests/data/traces/marked.txtpb";

class TraceProfileTest : public ssgd::testing::TempDirTest {
 protected:

  TraceProfileResult profile_marked() {
    const fs::path packed = dir_ / "marked.ssgdt";
    trace::pack_text_trace(kMarked, packed);
    auto reader = trace::TraceReader::open(packed);
    return profile_from_trace(reader, "marked.ssgdt");
  }

  // Writes a one-rank trace of `events` and returns its path.
  fs::path write_trace(const std::string& name, const std::vector<v1::Event>& events,
                       const std::string& tool = "trace_profile_test") {
    const fs::path path = dir_ / name;
    v1::CaptureMetadata meta;
    meta.set_tool(tool);
    meta.set_provenance("synthetic");
    trace::TraceWriter writer(path, meta);
    for (const auto& e : events) writer.append(e);
    writer.close();
    return path;
  }

  // The InputError message profile_from_trace gives for `events`, or "" if none.
  std::string profile_error(const std::vector<v1::Event>& events) {
    const fs::path path = write_trace("bad.ssgdt", events);
    auto reader = trace::TraceReader::open(path);
    try {
      profile_from_trace(reader, "bad.ssgdt");
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }

};

v1::Event marker(const std::string& name, std::int64_t start, std::int64_t end) {
  v1::Event e;
  e.mutable_marker()->set_name(name);
  e.mutable_marker()->set_start_ns(start);
  e.mutable_marker()->set_end_ns(end);
  return e;
}

v1::Event kernel(std::int64_t start, std::int64_t end) {
  v1::Event e;
  e.mutable_kernel()->set_name("k");
  e.mutable_kernel()->set_start_ns(start);
  e.mutable_kernel()->set_end_ns(end);
  return e;
}

TEST_F(TraceProfileTest, LayersInForwardOrder) {
  const auto r = profile_marked();
  std::vector<std::string> names;
  std::vector<std::int64_t> indices;
  for (const auto& row : r.profile.layers) {
    names.push_back(row.name);
    indices.push_back(row.layer);
  }
  EXPECT_THAT(names, ElementsAre("conv1", "conv2", "fc"));
  EXPECT_THAT(indices, ElementsAre(0, 1, 2));
}

TEST_F(TraceProfileTest, ComputeTimesAreSteadyStateAverages) {
  const auto r = profile_marked();
  ASSERT_EQ(r.profile.layers.size(), 3u);
  const auto& conv1 = r.profile.layers[0];
  const auto& conv2 = r.profile.layers[1];
  const auto& fc = r.profile.layers[2];
  // Each kernel with the idle time before it that the host caused (the
  // file's header works them out): conv1 holds its late-launched second
  // kernel, which ran during forward/conv2's time, and its first kernel the
  // idle time since its iteration began: (360+890 + 460+790) / 2.
  EXPECT_EQ(conv1.forward.ns(), 1250);
  EXPECT_EQ(conv2.forward.ns(), 410);   // 400 + 10 ns of scheduling gap
  EXPECT_EQ(fc.forward.ns(), 700);
  EXPECT_EQ(fc.backward.ns(), 1200);
  // Launched while fc's all-reduce ran on its own stream: the host's gap.
  EXPECT_EQ(conv2.backward.ns(), 1400);
  EXPECT_EQ(conv1.backward.ns(), 780);
}

TEST_F(TraceProfileTest, CollectivesGiveCommAndGradBytes) {
  const auto r = profile_marked();
  ASSERT_EQ(r.profile.layers.size(), 3u);
  ASSERT_TRUE(r.profile.has_comm());
  const auto& conv1 = r.profile.layers[0];
  const auto& conv2 = r.profile.layers[1];
  const auto& fc = r.profile.layers[2];
  ASSERT_TRUE(conv1.comm && conv2.comm && fc.comm);
  EXPECT_EQ(fc.comm->ns(), 1100);
  EXPECT_EQ(fc.grad_bytes, 40960);
  EXPECT_EQ(conv1.comm->ns(), 500);
  EXPECT_EQ(conv1.grad_bytes, 4096);
  EXPECT_EQ(conv2.comm->ns(), 0);
  EXPECT_EQ(conv2.grad_bytes, 0);
}

// Link events (no time, no work) change nothing the profile holds.
TEST_F(TraceProfileTest, LinkEventsAreIgnored) {
  const fs::path packed = dir_ / "marked.ssgdt";
  trace::pack_text_trace(kMarked, packed);
  std::vector<v1::Event> events;
  {
    auto reader = trace::TraceReader::open(packed);
    v1::Event link;
    link.mutable_link()->set_src_device(0);
    link.mutable_link()->set_dst_device(-1);
    link.mutable_link()->set_kind(v1::Link::PCIE);
    events.push_back(link);
    v1::Event e;
    while (reader.next(e)) events.push_back(e);
    events.push_back(link);
  }
  auto with_links = trace::TraceReader::open(write_trace("links.ssgdt", events));
  const auto r = profile_from_trace(with_links, "links.ssgdt");
  const auto plain = profile_marked();
  ASSERT_EQ(r.profile.layers.size(), plain.profile.layers.size());
  for (std::size_t i = 0; i < r.profile.layers.size(); ++i) {
    EXPECT_EQ(r.profile.layers[i].forward.ns(), plain.profile.layers[i].forward.ns()) << i;
    EXPECT_EQ(r.profile.layers[i].backward.ns(), plain.profile.layers[i].backward.ns()) << i;
    EXPECT_EQ(r.profile.layers[i].grad_bytes, plain.profile.layers[i].grad_bytes) << i;
  }
  EXPECT_EQ(r.iterations_seen, plain.iterations_seen);
  EXPECT_EQ(r.warnings, plain.warnings);
}

TEST_F(TraceProfileTest, CountsAndWarnings) {
  const auto r = profile_marked();
  EXPECT_EQ(r.ranks, 1);
  EXPECT_EQ(r.iterations_seen, 3);
  EXPECT_EQ(r.iterations_used, 2);
  EXPECT_EQ(r.kernels_in_ranges, 14);      // 7 per steady iteration
  EXPECT_EQ(r.kernels_outside_ranges, 2);  // sgd_update, once per steady iteration,
  EXPECT_EQ(r.kernels_update, 2);          // after the last backward range: the update
  EXPECT_EQ(r.collectives, 4);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
  ASSERT_TRUE(r.profile.update);
  EXPECT_EQ(r.profile.update->ns(), 950);  // 500, and 450 of idle after conv1's all-reduce
  EXPECT_EQ(r.profile.model, "tinynet");
  EXPECT_EQ(r.profile.source, "marked.ssgdt");
  EXPECT_THAT(r.profile.provenance, HasSubstr("1 rank(s), 2 steady iteration(s) averaged"));
}

TEST_F(TraceProfileTest, NoCollectivesWarns) {
  const fs::path path = write_trace(
      "nocomm.ssgdt", {marker("iteration/0", 100, 1000), marker("forward/a", 100, 500),
                       marker("backward/a", 500, 900), kernel(200, 300), kernel(600, 800)});
  auto reader = trace::TraceReader::open(path);
  const auto r = profile_from_trace(reader, "nocomm.ssgdt");
  ASSERT_EQ(r.profile.layers.size(), 1u);
  // A single iteration is used as it is (nothing to drop as warm-up).
  EXPECT_EQ(r.iterations_used, 1);
  EXPECT_EQ(r.profile.layers[0].forward.ns(), 100);
  EXPECT_EQ(r.profile.layers[0].backward.ns(), 200);
  EXPECT_FALSE(r.profile.has_comm());
  // Its kernels have no launch calls either: the replay cannot see the host.
  EXPECT_THAT(r.warnings, ElementsAre(HasSubstr("rank 0: 2 GPU kernel(s) and no launch call"),
                                      HasSubstr("no collectives")));
  // A replay's own trace (ssgd simulate --trace) has no launch calls by
  // construction: nothing to say about them.
  const fs::path simulated =
      write_trace("simulated.ssgdt",
                  {marker("iteration/0", 100, 1000), marker("forward/a", 100, 500),
                   marker("backward/a", 500, 900), kernel(200, 300), kernel(600, 800)},
                  "ssgd simulate");
  auto sim_reader = trace::TraceReader::open(simulated);
  EXPECT_THAT(profile_from_trace(sim_reader, "simulated.ssgdt").warnings,
              ElementsAre(HasSubstr("no collectives")));
}

v1::Event named_kernel(const std::string& name, std::int64_t start, std::int64_t end) {
  v1::Event e = kernel(start, end);
  e.mutable_kernel()->set_name(name);
  return e;
}

v1::Event all_reduce(std::int64_t start, std::int64_t end, std::int64_t bytes) {
  v1::Event e;
  e.mutable_collective()->set_op(v1::Collective::ALL_REDUCE);
  e.mutable_collective()->set_start_ns(start);
  e.mutable_collective()->set_end_ns(end);
  e.mutable_collective()->set_size_bytes(bytes);
  return e;
}

// ssgd's tracer writes an NCCL collective twice: the kernel CUPTI saw and the
// Collective the NCCL plugin saw. The kernel is communication, not compute.
TEST_F(TraceProfileTest, NcclKernelsBesideCollectiveRecordsAreNotCompute) {
  const fs::path path = write_trace(
      "nccl.ssgdt",
      {marker("iteration/0", 100, 2000), marker("forward/a", 100, 500),
       marker("backward/a", 500, 1500), kernel(200, 300), kernel(600, 800),
       named_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 900, 1400),
       all_reduce(900, 1400, 4096)});
  auto reader = trace::TraceReader::open(path);
  const auto r = profile_from_trace(reader, "nccl.ssgdt");
  ASSERT_EQ(r.profile.layers.size(), 1u);
  EXPECT_EQ(r.profile.layers[0].backward.ns(), 200);  // not 700: the NCCL kernel is left out
  ASSERT_TRUE(r.profile.layers[0].comm);
  EXPECT_EQ(r.profile.layers[0].comm->ns(), 500);
  EXPECT_EQ(r.profile.layers[0].grad_bytes, 4096);
  EXPECT_EQ(r.collectives, 1);
  EXPECT_EQ(r.nccl_kernels_dropped, 1);
  EXPECT_EQ(r.kernels_in_ranges, 2);
}

// Without the plugin's records (NCCL_PROFILER_PLUGIN not honoured), the NCCL
// kernels are the only record of the communication: they become collectives
// of unknown size, with a warning.
TEST_F(TraceProfileTest, NcclKernelsWithoutCollectiveRecordsBecomeCommunication) {
  const fs::path path = write_trace(
      "nccl_only.ssgdt",
      {marker("iteration/0", 100, 2000), marker("forward/a", 100, 500),
       marker("backward/a", 500, 1500), kernel(200, 300), kernel(600, 800),
       named_kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 900, 1400)});
  auto reader = trace::TraceReader::open(path);
  const auto r = profile_from_trace(reader, "nccl_only.ssgdt");
  ASSERT_EQ(r.profile.layers.size(), 1u);
  EXPECT_EQ(r.profile.layers[0].backward.ns(), 200);
  ASSERT_TRUE(r.profile.layers[0].comm);
  EXPECT_EQ(r.profile.layers[0].comm->ns(), 500);
  EXPECT_EQ(r.profile.layers[0].grad_bytes, 0);
  EXPECT_EQ(r.collectives, 1);
  EXPECT_EQ(r.nccl_kernels_dropped, 0);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_THAT(r.warnings[0], HasSubstr("no NCCL collective records"));
}

// The marked trace with its iteration markers left out (and, for the second
// rule, its sgd_update kernels too): the fallback finds the same three
// iterations, so the profile is the same as with the markers.
TEST_F(TraceProfileTest, WithoutIterationMarkersIterationsSplitAtOptimizerStepsOrCollectives) {
  const fs::path packed = dir_ / "marked.ssgdt";
  trace::pack_text_trace(kMarked, packed);
  auto strip = [&](const std::string& name, bool drop_optimizer) {
    auto in = trace::TraceReader::open(packed);
    std::vector<v1::Event> events;
    v1::Event e;
    while (in.next(e)) {
      if (e.has_marker() && e.marker().name().starts_with("iteration/")) continue;
      if (drop_optimizer && e.has_kernel() && e.kernel().name() == "sgd_update") continue;
      events.push_back(e);
    }
    auto reader = trace::TraceReader::open(write_trace(name, events));
    return profile_from_trace(reader, name);
  };
  const auto marked = profile_marked();
  for (const bool drop_optimizer : {false, true}) {
    SCOPED_TRACE(drop_optimizer ? "collective boundaries" : "optimizer steps");
    const auto r = strip(drop_optimizer ? "nosgd.ssgdt" : "noiter.ssgdt", drop_optimizer);
    EXPECT_EQ(r.iterations_seen, 3);
    EXPECT_EQ(r.iterations_used, 2);
    ASSERT_EQ(r.profile.layers.size(), marked.profile.layers.size());
    for (std::size_t l = 0; l < r.profile.layers.size(); ++l) {
      if (l == 0) {
        // Split iterations begin just after the previous one's last launch,
        // not 10 us later as the marked ones do, so the first kernel holds
        // the idle time since the update (2810 and 2910 ns, not 360 and 460)
        // or, without sgd_update, since the last all-reduce (550 and 950 ns
        // more again).
        EXPECT_EQ(r.profile.layers[0].forward.ns(), drop_optimizer ? 4450 : 3700);
        continue;
      }
      EXPECT_EQ(r.profile.layers[l].forward, marked.profile.layers[l].forward) << l;
      EXPECT_EQ(r.profile.layers[l].backward, marked.profile.layers[l].backward) << l;
      EXPECT_EQ(r.profile.layers[l].comm, marked.profile.layers[l].comm) << l;
      EXPECT_EQ(r.profile.layers[l].grad_bytes, marked.profile.layers[l].grad_bytes) << l;
    }
    ASSERT_FALSE(r.warnings.empty());
    EXPECT_THAT(r.warnings[0], HasSubstr("rank 0 has no iteration/<N> markers"));
    EXPECT_THAT(r.warnings[0], HasSubstr(drop_optimizer ? "every 2 collective(s)" : "optimizer step"));
    EXPECT_THAT(r.warnings[0], HasSubstr("(3 found)"));
    // The two used iterations have spans (launch to launch); the first,
    // unbounded, is the warm-up and not among them.
    ASSERT_TRUE(r.profile.traced.step.has_value());
    EXPECT_EQ(r.profile.traced.steps, 2);
  }
  // One split iteration: it is used, and it starts unbounded, so the
  // trace's own steps are unknown (no span, no overflow: a fuzzer's finding).
  const auto one = [&] {
    auto in = trace::TraceReader::open(packed);
    std::vector<v1::Event> events;
    v1::Event e;
    while (in.next(e)) {
      if (e.has_marker() && e.marker().name().starts_with("iteration/")) continue;
      const std::int64_t t = e.has_kernel() ? e.kernel().start_ns() : 0;
      if (t >= 110'000) continue;  // iteration 0's work only
      events.push_back(e);
    }
    auto reader = trace::TraceReader::open(write_trace("one.ssgdt", events));
    return profile_from_trace(reader, "one.ssgdt");
  }();
  EXPECT_EQ(one.iterations_used, 1);
  EXPECT_FALSE(one.profile.traced.step.has_value());
}

// ssgd/grad_bytes marks give the layers' gradient sizes (0 for a layer
// without one), so a trace without collectives still gets its communication
// modelled.
TEST_F(TraceProfileTest, GradBytesMarksGiveGradientSizesWithoutCollectives) {
  const fs::path path = write_trace(
      "marks.ssgdt",
      {marker("iteration/0", 100, 2000), marker("ssgd/grad_bytes/a=4096", 100, 100),
       marker("ssgd/rank=0", 100, 100), marker("forward/a", 100, 500), marker("forward/b", 500, 900),
       marker("backward/b", 900, 1300), marker("backward/a", 1300, 1700), kernel(200, 300),
       kernel(600, 700), kernel(1000, 1200), kernel(1400, 1500)});
  auto reader = trace::TraceReader::open(path);
  const auto r = profile_from_trace(reader, "marks.ssgdt");
  ASSERT_EQ(r.profile.layers.size(), 2u);
  EXPECT_EQ(r.profile.layers[0].grad_bytes, 4096);
  EXPECT_EQ(r.profile.layers[1].grad_bytes, 0);
  EXPECT_FALSE(r.profile.has_comm());
  EXPECT_THAT(r.warnings, ElementsAre(HasSubstr("no launch call"),
                                      HasSubstr("communication is modelled from its "
                                                "ssgd/grad_bytes marks")));
}

// An iteration without layer ranges is all update, by the walker's rule.
// A rank whose iterations have no layer range (another rank's layers are
// known) does all its work as the update.
TEST_F(TraceProfileTest, IterationWithoutLayerRangesIsAllUpdate) {
  v1::Event other = marker("forward/a", 100, 500);
  other.set_rank(1);
  v1::Event other_iteration = marker("iteration/0", 100, 1000);
  other_iteration.set_rank(1);
  const fs::path path = write_trace(
      "bare.ssgdt", {marker("iteration/0", 100, 1000), kernel(200, 300),
                     marker("iteration/1", 1000, 2000), kernel(1100, 1400), kernel(1500, 1600),
                     other, other_iteration});
  auto reader = trace::TraceReader::open(path);
  const auto r = profile_from_trace(reader, "bare.ssgdt");
  EXPECT_EQ(r.profile.layers[0].forward.ns(), 0);  // iteration 0 is warm-up
  EXPECT_EQ(r.profile.update, Duration(400));
  EXPECT_EQ(r.kernels_update, 2);
}


TEST_F(TraceProfileTest, MalformedMetadataMarkIsAnError) {
  const std::string msg = profile_error({marker("iteration/0", 100, 1000), marker("forward/a", 100, 500),
                                         marker("ssgd/grad_bytes/a=lots", 100, 100)});
  EXPECT_THAT(msg, HasSubstr("bad.ssgdt"));
  EXPECT_THAT(msg, HasSubstr("record 2"));
  EXPECT_THAT(msg, HasSubstr("'ssgd/grad_bytes/a=lots'"));
}

TEST_F(TraceProfileTest, NoIterationMarkersIsAnError) {
  const std::string msg =
      profile_error({marker("forward/a", 100, 500), marker("backward/a", 500, 900), kernel(200, 300)});
  EXPECT_THAT(msg, HasSubstr("bad.ssgdt"));
  EXPECT_THAT(msg, HasSubstr("iteration/<N>"));
}

TEST_F(TraceProfileTest, NoForwardMarkersIsAnError) {
  const std::string msg =
      profile_error({marker("iteration/0", 100, 1000), marker("backward/a", 500, 900), kernel(200, 300)});
  EXPECT_THAT(msg, HasSubstr("bad.ssgdt"));
  EXPECT_THAT(msg, HasSubstr("forward/<layer>"));
}

TEST_F(TraceProfileTest, MarkerWithoutLayerNameIsAnError) {
  const std::string msg = profile_error(
      {marker("iteration/0", 100, 1000), marker("forward/a", 100, 500), marker("forward/", 500, 600)});
  EXPECT_THAT(msg, HasSubstr("bad.ssgdt"));
  EXPECT_THAT(msg, HasSubstr("'forward/'"));
  EXPECT_THAT(msg, HasSubstr("record 2"));
  EXPECT_THAT(msg, HasSubstr("names no layer"));
}

TEST_F(TraceProfileTest, BackwardMarkerWithoutLayerNameIsAnError) {
  const std::string msg = profile_error({marker("iteration/0", 100, 1000), marker("backward/", 500, 600)});
  EXPECT_THAT(msg, HasSubstr("'backward/'"));
  EXPECT_THAT(msg, HasSubstr("names no layer"));
}

TEST_F(TraceProfileTest, NonIntegerIterationIsAnError) {
  const std::string msg =
      profile_error({marker("forward/a", 100, 500), marker("iteration/x", 100, 1000)});
  EXPECT_THAT(msg, HasSubstr("bad.ssgdt"));
  EXPECT_THAT(msg, HasSubstr("'iteration/x'"));
  EXPECT_THAT(msg, HasSubstr("record 1"));
  EXPECT_THAT(msg, HasSubstr("not an integer"));
}

TEST_F(TraceProfileTest, IterationNumberWithTrailingTextIsAnError) {
  const std::string msg = profile_error({marker("iteration/3b", 100, 1000)});
  EXPECT_THAT(msg, HasSubstr("'iteration/3b'"));
}

TEST_F(TraceProfileTest, EmptyIterationNumberIsAnError) {
  const std::string msg = profile_error({marker("iteration/", 100, 1000)});
  EXPECT_THAT(msg, HasSubstr("'iteration/'"));
  EXPECT_THAT(msg, HasSubstr("names no iteration number"));
}


namespace {

// A GPU kernel with a correlation id, and the API call that launched it.
v1::Event gpu_kernel(std::int64_t start, std::int64_t end, std::uint64_t correlation) {
  v1::Event e = kernel(start, end);
  e.mutable_kernel()->set_device(0);
  e.mutable_kernel()->set_correlation_id(correlation);
  return e;
}

v1::Event launch(std::int64_t at, std::uint64_t correlation) {
  v1::Event e;
  e.mutable_api_call()->set_name("cudaLaunchKernel_v7000");
  e.mutable_api_call()->set_start_ns(at);
  e.mutable_api_call()->set_end_ns(at + 5);
  e.mutable_api_call()->set_correlation_id(correlation);
  return e;
}

// Two iterations of one layer; the second's forward kernel comes after a gap
// the test chooses, launched when it chooses.
std::vector<v1::Event> gap_trace(std::int64_t gap, std::int64_t launched_at, bool with_launch) {
  std::vector<v1::Event> ev;
  for (int it = 0; it < 2; ++it) {
    const std::int64_t t = it * 1'000'000;
    ev.push_back(marker("iteration/" + std::to_string(it), t, t + 1'000'000));
    ev.push_back(marker("forward/a", t + 100, t + 300'000));
    // No launch record: it owns no idle time (the time since the previous
    // iteration's last kernel would be the host's too, and is not tested here).
    ev.push_back(gpu_kernel(t + 1'000, t + 2'000, 0));  // 1 us
    ev.push_back(gpu_kernel(t + 2'000 + gap, t + 3'000 + gap, 10 * it + 2));  // 1 us
    if (with_launch) ev.push_back(launch(t + launched_at, 10 * it + 2));
  }
  return ev;
}

std::int64_t forward_of(TraceProfileResult r) { return r.profile.layers.at(0).forward.ns(); }

}  // namespace

// The device ran dry and the host launched the next kernel only then: the
// idle time is the host's, and the kernel owns it (2 us of kernels, 100 us
// of idle).
TEST_F(TraceProfileTest, AKernelLaunchedAfterItsDeviceRanDryOwnsTheIdleTimeBeforeIt) {
  const fs::path path = write_trace("late.ssgdt", gap_trace(100'000, 50'000, true));
  auto reader = trace::TraceReader::open(path);
  EXPECT_EQ(forward_of(profile_from_trace(reader, "late.ssgdt")), 102'000);
}

// Launched while the device was busy but started 100 us after it went idle:
// a wait for other work (a collective on another stream), not compute.
TEST_F(TraceProfileTest, ALongGapBeforeAKernelLaunchedInTimeIsAWait) {
  const fs::path path = write_trace("wait.ssgdt", gap_trace(100'000, 1'500, true));
  auto reader = trace::TraceReader::open(path);
  EXPECT_EQ(forward_of(profile_from_trace(reader, "wait.ssgdt")), 2'000);
}

// A gap under kQueuedGapNs before a kernel launched in time is the launch's
// latency and the device's scheduling: the kernel's.
TEST_F(TraceProfileTest, AShortGapBeforeAKernelLaunchedInTimeIsItsOwn) {
  const fs::path path = write_trace("queued.ssgdt", gap_trace(20'000, 1'500, true));
  auto reader = trace::TraceReader::open(path);
  EXPECT_EQ(forward_of(profile_from_trace(reader, "queued.ssgdt")), 22'000);
}

// Without its launch record nothing tells whose the gap is: it stays idle.
TEST_F(TraceProfileTest, AKernelWithoutALaunchRecordOwnsNoIdleTime) {
  const fs::path path = write_trace("nolaunch.ssgdt", gap_trace(20'000, 0, false));
  auto reader = trace::TraceReader::open(path);
  EXPECT_EQ(forward_of(profile_from_trace(reader, "nolaunch.ssgdt")), 2'000);
}

namespace {

// gap_trace with a collective of the iteration on device 0's own stream,
// [t + comm_start, t + comm_end), launched inside the layer's range.
std::vector<v1::Event> gap_trace_beside_comm(std::int64_t launched_at, std::int64_t comm_start,
                                             std::int64_t comm_end) {
  std::vector<v1::Event> ev = gap_trace(100'000, launched_at, true);
  for (int it = 0; it < 2; ++it) {
    const std::int64_t t = it * 1'000'000;
    v1::Event c;
    auto* k = c.mutable_collective();
    k->set_op(v1::Collective::ALL_REDUCE);
    k->set_size_bytes(4096);
    k->set_communicator_id(42);
    k->set_nranks(2);
    k->set_sequence_number(it);
    k->set_device(0);
    k->set_stream(9);
    k->set_start_ns(t + comm_start);
    k->set_end_ns(t + comm_end);
    k->set_correlation_id(10 * it + 5);
    ev.push_back(c);
    ev.push_back(launch(t + comm_start - 50, 10 * it + 5));
  }
  return ev;
}

}  // namespace

// The next kernel launched while a collective ran on its own stream, and
// started at once: the compute stream waited for the host, not for the
// collective, and the kernel owns the 100 us (until 2026-11-30 the running
// collective made the device count as busy, and the gap was lost).
TEST_F(TraceProfileTest, AKernelLaunchedBesideACollectiveOwnsTheHostsGap) {
  const fs::path path =
      write_trace("beside.ssgdt", gap_trace_beside_comm(101'950, 10'000, 150'000));
  auto reader = trace::TraceReader::open(path);
  EXPECT_EQ(forward_of(profile_from_trace(reader, "beside.ssgdt")), 102'000);
}

// Launched while a collective ran and held until it ended (its stream
// waiting on the collective's event): the gap up to its launch is the
// host's, the rest a wait.
TEST_F(TraceProfileTest, AKernelHeldUntilACollectiveEndedOwnsTheGapUpToItsLaunch) {
  const fs::path path = write_trace("held.ssgdt", gap_trace_beside_comm(40'000, 10'000, 101'990));
  auto reader = trace::TraceReader::open(path);
  EXPECT_EQ(forward_of(profile_from_trace(reader, "held.ssgdt")), 2'000 + 38'000);
}

// Launched only after the collective ended: the host may have waited for it
// (a synchronize), so the collective's time counts as the device's work and
// the kernel owns the gap since it ended.
TEST_F(TraceProfileTest, AKernelLaunchedAfterACollectiveEndedOwnsTheGapSinceThen) {
  const fs::path path = write_trace("after.ssgdt", gap_trace_beside_comm(101'000, 10'000, 80'000));
  auto reader = trace::TraceReader::open(path);
  EXPECT_EQ(forward_of(profile_from_trace(reader, "after.ssgdt")), 2'000 + 22'000);
}

// Device-to-device copies and memsets are the GPU's own work: compute of the
// layer that launched them; host-to-device copies stay the scenario's h2d.
TEST_F(TraceProfileTest, DeviceCopiesAndMemsetsAreCompute) {
  std::vector<v1::Event> ev;
  for (int it = 0; it < 2; ++it) {
    const std::int64_t t = it * 1'000'000;
    ev.push_back(marker("iteration/" + std::to_string(it), t, t + 1'000'000));
    ev.push_back(marker("forward/a", t + 100, t + 300'000));
    ev.push_back(gpu_kernel(t + 1'000, t + 2'000, 0));
    v1::Event copy;
    copy.mutable_memcpy()->set_kind(v1::Memcpy::DTOD);
    copy.mutable_memcpy()->set_start_ns(t + 3'000);
    copy.mutable_memcpy()->set_end_ns(t + 3'400);
    ev.push_back(copy);
    v1::Event set;
    set.mutable_memset()->set_start_ns(t + 4'000);
    set.mutable_memset()->set_end_ns(t + 4'300);
    ev.push_back(set);
    v1::Event h2d;
    h2d.mutable_memcpy()->set_kind(v1::Memcpy::HTOD);
    h2d.mutable_memcpy()->set_start_ns(t + 5'000);
    h2d.mutable_memcpy()->set_end_ns(t + 9'000);
    ev.push_back(h2d);
  }
  const fs::path path = write_trace("copies.ssgdt", ev);
  auto reader = trace::TraceReader::open(path);
  EXPECT_EQ(forward_of(profile_from_trace(reader, "copies.ssgdt")), 1'000 + 400 + 300);
}

// torch.profiler (2.11) closes the range the marks opened after the last
// step it recorded: an iteration that launched nothing is left out, with a
// warning, rather than averaged in at zero.
TEST_F(TraceProfileTest, AnIterationThatLaunchedNothingIsLeftOut) {
  std::vector<v1::Event> ev;
  for (int it = 0; it < 3; ++it) {
    const std::int64_t t = it * 1'000'000;
    ev.push_back(marker("iteration/" + std::to_string(it), t, t + 1'000'000));
    ev.push_back(marker("forward/a", t + 100, t + 300'000));
    ev.push_back(kernel(t + 1'000, t + 2'000));
  }
  ev.push_back(marker("iteration/3", 3'000'000, 3'000'500));  // nothing launched
  const fs::path path = write_trace("tail.ssgdt", ev);
  auto reader = trace::TraceReader::open(path);
  const TraceProfileResult r = profile_from_trace(reader, "tail.ssgdt");
  EXPECT_EQ(forward_of(r), 1'000);
  EXPECT_EQ(r.iterations_used, 2);
  EXPECT_THAT(r.warnings, ::testing::Contains(HasSubstr("1 marked iteration(s) launched nothing")));
  EXPECT_THAT(profile_error({marker("forward/a", 100, 200), marker("iteration/0", 0, 50),
                             marker("iteration/1", 300, 400)}),
              HasSubstr("no marked iteration launched a kernel or a collective in a layer"));
}

// On a rank whose iterations have layer ranges, one without any is not a
// step (torch.profiler 2.11 closes the range opened after its last step
// when it stops, with what it caught in it): left out.
TEST_F(TraceProfileTest, AnIterationWithoutLayersAmongStepsIsLeftOut) {
  std::vector<v1::Event> ev;
  for (int it = 0; it < 3; ++it) {
    const std::int64_t t = it * 1'000'000;
    ev.push_back(marker("iteration/" + std::to_string(it), t, t + 1'000'000));
    ev.push_back(marker("forward/a", t + 100, t + 300'000));
    ev.push_back(kernel(t + 1'000, t + 2'000));
  }
  ev.push_back(marker("iteration/3", 3'000'000, 3'000'500));
  ev.push_back(kernel(3'000'100, 3'000'200));  // caught as the profiler stopped
  const fs::path path = write_trace("caught.ssgdt", ev);
  auto reader = trace::TraceReader::open(path);
  const TraceProfileResult r = profile_from_trace(reader, "caught.ssgdt");
  EXPECT_EQ(forward_of(r), 1'000);
  EXPECT_EQ(r.iterations_used, 2);
  EXPECT_THAT(r.warnings, ::testing::Contains(HasSubstr("ran no layer")));
}

// Three iterations of two micro-batches of one layer: a 1,000 ns forward
// kernel and a 3,000 ns backward one each; with `reduce_each`, each
// micro-batch all-reduces 4 KiB after its backward.
std::vector<v1::Event> two_micro_batches(bool reduce_each) {
  std::vector<v1::Event> ev;
  for (int it = 0; it < 3; ++it) {
    const std::int64_t t = it * 1'000'000;
    ev.push_back(marker("iteration/" + std::to_string(it), t, t + 1'000'000));
    for (int m = 0; m < 2; ++m) {
      const std::int64_t u = t + m * 400'000;
      ev.push_back(marker("forward/a", u + 100, u + 100'000));
      ev.push_back(kernel(u + 1'000, u + 2'000));
      ev.push_back(marker("backward/a", u + 200'000, u + 300'000));
      ev.push_back(kernel(u + 201'000, u + 204'000));
      if (reduce_each) {
        v1::Event reduce = all_reduce(u + 205'000, u + 250'000, 4096);
        reduce.mutable_collective()->set_sequence_number(static_cast<std::uint64_t>(2 * it + m));
        ev.push_back(reduce);
      }
    }
  }
  return ev;
}

// Gradient accumulation: every layer runs two forward and backward passes an
// iteration. The rows hold one micro-batch's times, and the profile says how
// many a step ran (workload.accumulation's default). A forward range inside
// a backward range (a checkpointed layer's recomputation) is not another
// micro-batch.
TEST_F(TraceProfileTest, MicroBatchesOfAnIterationGiveOneMicroBatchsTimes) {
  const fs::path path = write_trace("accumulation.ssgdt", two_micro_batches(false));
  auto reader = trace::TraceReader::open(path);
  const TraceProfileResult r = profile_from_trace(reader, "accumulation.ssgdt");
  ASSERT_EQ(r.profile.layers.size(), 1u);
  EXPECT_EQ(r.profile.layers[0].forward.ns(), 1'000);
  EXPECT_EQ(r.profile.layers[0].backward.ns(), 3'000);
  EXPECT_EQ(r.profile.micro_batches, 2);
  EXPECT_THAT(r.warnings, ::testing::Contains(HasSubstr("ran 2 forward passes an iteration")));

  // One micro-batch whose layer's forward is recomputed at 210 us: inside its
  // backward range (opened at 200 us), or before that opens (reentrant
  // checkpointing: at 260 us). Neither is a second micro-batch.
  for (const std::int64_t backward_opens : {200'000, 260'000}) {
    std::vector<v1::Event> recomputed;
    for (int it = 0; it < 3; ++it) {
      const std::int64_t t = it * 1'000'000;
      recomputed.push_back(marker("iteration/" + std::to_string(it), t, t + 1'000'000));
      recomputed.push_back(marker("forward/a", t + 100, t + 100'000));
      recomputed.push_back(kernel(t + 1'000, t + 2'000));
      recomputed.push_back(marker("backward/a", t + backward_opens, t + 400'000));
      recomputed.push_back(marker("forward/a", t + 210'000, t + 250'000));
      recomputed.push_back(kernel(t + 301'000, t + 304'000));
    }
    const std::string name = "recomputed-" + std::to_string(backward_opens) + ".ssgdt";
    auto again = trace::TraceReader::open(write_trace(name, recomputed));
    const TraceProfileResult c = profile_from_trace(again, name);
    EXPECT_FALSE(c.profile.micro_batches.has_value()) << backward_opens;
    EXPECT_EQ(c.profile.layers[0].backward.ns(), 3'000) << backward_opens;
  }
}

// Two micro-batches that each all-reduce their gradients (no no_sync): the
// iteration is replayed as one micro-batch of both, collectives included,
// and the output says so.
TEST_F(TraceProfileTest, MicroBatchesThatEachReduceReplayAsOne) {
  const fs::path path = write_trace("each.ssgdt", two_micro_batches(true));
  auto reader = trace::TraceReader::open(path);
  const TraceProfileResult r = profile_from_trace(reader, "each.ssgdt");
  EXPECT_FALSE(r.profile.micro_batches.has_value());
  EXPECT_EQ(r.profile.layers[0].forward.ns(), 2'000);
  EXPECT_EQ(r.profile.layers[0].grad_bytes, 2 * 4096);
  EXPECT_THAT(r.warnings, ::testing::Contains(HasSubstr("reduced gradients before the last")));
}

// The profiler's closing range is left out before the warm-up step is: a
// capture of one step and that range replays the step.
TEST_F(TraceProfileTest, OneStepAndAProfilersClosingRangeReplayTheStep) {
  const fs::path path = write_trace(
      "one.ssgdt", {marker("iteration/0", 0, 1'000'000), marker("forward/a", 100, 300'000),
                    kernel(1'000, 3'000), marker("iteration/1", 1'000'000, 1'000'500)});
  auto reader = trace::TraceReader::open(path);
  const TraceProfileResult r = profile_from_trace(reader, "one.ssgdt");
  EXPECT_EQ(forward_of(r), 2'000);
  EXPECT_EQ(r.iterations_used, 1);
}

}  // namespace
}  // namespace ssgd::walk
