// The walker (walk/trace_walk.h) behind both `ssgd simulate` and `ssgd diff`:
// on tests/data/traces/walker.txtpb (a GPU rank and a CPU rank, work
// outside every layer range, CPU ops on device -1, gloo collectives
// launched through c10d calls, ssgd/grad_bytes marks; its header lists
// the expected tasks), simulate's path (profile_from_trace) and diff's
// (TraceIterations) get the same tasks.
#include "walk/trace_walk.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "walk/iteration_diff.h"
#include "walk/iteration_tasks.h"
#include "walk/trace_profile.h"
#include "tests/support/test_files.h"
#include "traces/trace_dump.h"
#include "traces/trace_reader.h"

namespace ssgd::walk {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

const fs::path kWalker = fs::path(SSGD_SOURCE_DIR) / "tests/data/traces/walker.txtpb";

class TraceWalkTest : public ssgd::testing::TempDirTest {
 protected:
  // The profile of a small text trace (traces/trace_dump.h) written here.
  TraceProfileResult profile_of_text(const std::string& name, const std::string& text) {
    const fs::path source = dir_ / (name + ".txtpb");
    const fs::path trace_path = dir_ / (name + ".ssgdt");
    std::ofstream(source) << text;
    trace::pack_text_trace(source, trace_path);
    auto reader = trace::TraceReader::open(trace_path);
    return profile_from_trace(reader, name + ".ssgdt");
  }
  fs::path packed() {
    const fs::path out = dir_ / "walker.ssgdt";
    if (!fs::exists(out)) trace::pack_text_trace(kWalker, out);
    return out;
  }
};

// What diff's tasks add up to, averaged the way profile_from_trace averages:
// over ranks and every iteration but the first, rounded to the nearest ns.
struct DiffTotals {
  std::map<std::pair<dag::TaskKind, std::string>, std::int64_t> busy_ns;  // forward, backward, update
  std::map<std::string, std::int64_t> comm_ns;                       // by launching layer
  std::int64_t samples = 0;
  [[nodiscard]] std::int64_t avg(std::int64_t v) const { return (v + samples / 2) / samples; }
};

DiffTotals diff_totals(const TraceIterations& it) {
  DiffTotals out;
  const std::int64_t first = it.iterations().begin()->first;  // warm-up
  for (const auto& [number, span] : it.iterations()) {
    if (number == first) continue;
    std::map<std::int32_t, bool> ranks;
    for (const IterationTask& t : it.tasks(number)) {
      ranks[t.rank] = true;
      if (t.kind == dag::TaskKind::kComm) {
        out.comm_ns[t.layer] += t.busy_ns;
      } else {
        out.busy_ns[{t.kind, t.layer}] += t.busy_ns;
      }
    }
    out.samples += static_cast<std::int64_t>(ranks.size());
  }
  return out;
}

TEST_F(TraceWalkTest, SimulateAndDiffSeeTheSameTasks) {
  auto reader = trace::TraceReader::open(packed());
  const TraceProfileResult profile = profile_from_trace(reader, "walker.ssgdt");
  const TraceIterations diff = TraceIterations::read(packed().string(), false);
  const DiffTotals totals = diff_totals(diff);
  ASSERT_EQ(totals.samples, 4);  // 2 ranks x 2 steady iterations
  ASSERT_EQ(profile.iterations_used * profile.ranks, totals.samples);

  const auto& layers = profile.profile.layers;
  ASSERT_EQ(layers.size(), 2u);
  for (const auto& row : layers) {
    SCOPED_TRACE(row.name);
    EXPECT_EQ(row.forward.ns(), totals.avg(totals.busy_ns.at({dag::TaskKind::kForward, row.name})));
    EXPECT_EQ(row.backward.ns(), totals.avg(totals.busy_ns.at({dag::TaskKind::kBackward, row.name})));
    ASSERT_TRUE(row.comm);
    EXPECT_EQ(row.comm->ns(), totals.avg(totals.comm_ns.at(row.name)));
  }
  ASSERT_TRUE(profile.profile.update);
  EXPECT_EQ(profile.profile.update->ns(), totals.avg(totals.busy_ns.at({dag::TaskKind::kUpdate, ""})));
  EXPECT_EQ(totals.comm_ns.count(""), 0u);  // every collective has a launching layer

  // The numbers of the file's header.
  EXPECT_EQ(layers[0].name, "embed");
  EXPECT_EQ(layers[1].name, "fc");
  EXPECT_EQ(layers[0].forward.ns(), 14550);
  EXPECT_EQ(layers[1].forward.ns(), 24800);
  EXPECT_EQ(layers[1].backward.ns(), 16150);
  EXPECT_EQ(layers[0].backward.ns(), 14050);
  EXPECT_EQ(layers[1].comm->ns(), 2000);
  EXPECT_EQ(layers[0].comm->ns(), 1000);
  EXPECT_EQ(profile.profile.update->ns(), 9200);
  // The marks, not the all-reduces' sizes (1000 and 3000 bytes).
  EXPECT_EQ(layers[0].grad_bytes, 4000);
  EXPECT_EQ(layers[1].grad_bytes, 12000);
}

TEST_F(TraceWalkTest, ProfileCountsAndWarnings) {
  auto reader = trace::TraceReader::open(packed());
  const TraceProfileResult r = profile_from_trace(reader, "walker.ssgdt");
  EXPECT_EQ(r.ranks, 2);
  EXPECT_EQ(r.iterations_seen, 3);
  EXPECT_EQ(r.iterations_used, 2);
  EXPECT_EQ(r.kernels_in_ranges, 16);       // 4 per rank and steady iteration
  EXPECT_EQ(r.kernels_outside_ranges, 16);  // rank 0: 5, rank 1: 3
  EXPECT_EQ(r.kernels_update, 4);
  EXPECT_EQ(r.collectives, 8);
  EXPECT_EQ(r.nccl_kernels_dropped, 3);
  EXPECT_THAT(r.warnings,
              ElementsAre("1 ssgd/grad_bytes mark(s) name no layer of the trace; ignored"));
}

// Rank by rank, diff's tasks of one iteration, with the work outside every
// range where the glue rule puts it.
TEST_F(TraceWalkTest, DiffTasksOfEachRank) {
  const TraceIterations diff = TraceIterations::read(packed().string(), false);
  std::vector<std::string> labels;
  std::vector<std::int64_t> busy;
  std::vector<std::int64_t> bytes;
  for (const IterationTask& t : diff.tasks(1)) {
    labels.push_back(std::to_string(t.rank) + " " + task_label(t));
    busy.push_back(t.busy_ns);
    bytes.push_back(t.bytes);
  }
  EXPECT_THAT(labels,
              ElementsAre("0 io", "0 h2d", "0 forward embed", "0 forward fc", "0 backward fc",
                          "0 backward embed", "0 all-reduce #0 (fc)", "0 all-reduce #1 (embed)",
                          "0 update",  //
                          "1 forward embed", "1 forward fc", "1 backward fc", "1 backward embed",
                          "1 all-reduce #0 (fc)", "1 all-reduce #1 (embed)", "1 update"));
  EXPECT_THAT(busy, ElementsAre(1000, 500, 19000, 20200, 19700, 9600, 2000, 1000, 4400,  //
                                10100, 29400, 12600, 18500, 2000, 1000, 14000));
  EXPECT_THAT(bytes, ElementsAre(0, 4096, 0, 0, 0, 0, 3000, 1000, 0,  //
                                 0, 0, 0, 0, 3000, 1000, 0));
  EXPECT_THAT(diff.warnings(),
              ElementsAre("1 ssgd/grad_bytes mark(s) name no layer of the trace; ignored"));
}

// A CPU operator is placed by its midpoint: the marks open a backward range in
// a grad_fn pre-hook, which autograd runs inside the evaluate_function
// operator of that node, a few microseconds after it began. By its start the
// operator would belong to the range that was still open (relu's). It also
// owns the interpreter's time since the thread's previous operator when that
// gap is short (relu's forward: 1.2 us), not when it is a wait (1 ms).
TEST_F(TraceWalkTest, HostOperatorsArePlacedByTheirMidpointAndOwnTheInterpreterTime) {
  const TraceProfileResult r = profile_of_text("hook", R"(
metadata { tool: "hand-written" hosts { hostname: "n" } world_size: 1 }
events { rank: 0 marker { name: "iteration/0" start_ns: 0 end_ns: 2000000 } }
events { rank: 0 marker { name: "forward/fc" start_ns: 1000 end_ns: 11000 } }
events { rank: 0 kernel { name: "aten::linear" device: -1 start_ns: 1100 end_ns: 10900 } }
events { rank: 0 marker { name: "forward/relu" start_ns: 12000 end_ns: 14000 } }
events { rank: 0 kernel { name: "aten::relu" device: -1 start_ns: 12100 end_ns: 13900 } }
events { rank: 0 marker { name: "backward/relu" start_ns: 1020000 end_ns: 1023005 } }
events { rank: 0 kernel { name: "autograd::engine::evaluate_function: ReluBackward0" device: -1 start_ns: 1020000 end_ns: 1023000 } }
events { rank: 0 kernel { name: "autograd::engine::evaluate_function: AddmmBackward0" device: -1 start_ns: 1023000 end_ns: 1043000 } }
events { rank: 0 marker { name: "backward/fc" start_ns: 1023010 end_ns: 1043000 } }
)");
  ASSERT_EQ(r.profile.layers.size(), 2u);
  EXPECT_EQ(r.profile.layers[0].name, "fc");
  EXPECT_EQ(r.profile.layers[0].forward.ns(), 9800);
  EXPECT_EQ(r.profile.layers[1].forward.ns(), 1800 + 1200);
  EXPECT_EQ(r.profile.layers[0].backward.ns(), 20000);
  EXPECT_EQ(r.profile.layers[1].backward.ns(), 3000);  // 1 ms after relu's forward: a wait
}

// CUDA graph launches as torch.compile(mode="reduce-overhead") makes them,
// one graph per block: each cudaGraphLaunch call (correlations 7 and 8)
// started two kernels. They belong to the layer whose range made the call,
// also where the GPU ran them after that range had closed (out's, at 2.1 ms;
// its kernels ran from 2.2 ms); the first kernel of each launch owns the
// device's wait for the host, as an eager kernel does (the host launched at
// 1.5 ms and 2.05 ms, after the device had gone idle), and the walk says how
// many graph kernels it found.
TEST_F(TraceWalkTest, KernelsOfACudaGraphLaunchBelongToTheLayerThatLaunchedIt) {
  const TraceProfileResult r = profile_of_text("graph", R"(
metadata { tool: "hand-written" hosts { hostname: "n" } world_size: 1 }
events { rank: 0 marker { name: "iteration/0" start_ns: 0 end_ns: 10000000 } }
events { rank: 0 marker { name: "forward/fc" start_ns: 100000 end_ns: 2000000 } }
events { rank: 0 api_call { api: RUNTIME name: "cudaLaunchKernel" thread_id: 1 start_ns: 110000 end_ns: 120000 correlation_id: 6 } }
events { rank: 0 kernel { name: "k0" device: 0 stream: 7 start_ns: 120000 end_ns: 200000 correlation_id: 6 } }
events { rank: 0 api_call { api: RUNTIME name: "cudaGraphLaunch" thread_id: 1 start_ns: 1500000 end_ns: 1510000 correlation_id: 7 } }
events { rank: 0 kernel { name: "gemm_a" device: 0 stream: 7 start_ns: 1600000 end_ns: 1900000 correlation_id: 7 } }
events { rank: 0 kernel { name: "gelu_a" device: 0 stream: 7 start_ns: 1900000 end_ns: 1950000 correlation_id: 7 } }
events { rank: 0 marker { name: "forward/out" start_ns: 2000000 end_ns: 2100000 } }
events { rank: 0 api_call { api: RUNTIME name: "cudaGraphLaunch" thread_id: 1 start_ns: 2050000 end_ns: 2060000 correlation_id: 8 } }
events { rank: 0 kernel { name: "gemm_b" device: 0 stream: 7 start_ns: 2200000 end_ns: 3000000 correlation_id: 8 } }
events { rank: 0 kernel { name: "gelu_b" device: 0 stream: 7 start_ns: 3000000 end_ns: 3100000 correlation_id: 8 } }
)");
  ASSERT_EQ(r.profile.layers.size(), 2u);
  EXPECT_EQ(r.profile.layers[0].name, "fc");
  EXPECT_EQ(r.profile.layers[1].name, "out");
  // k0, then gemm_a from k0's end (the host's wait), then gelu_a.
  EXPECT_EQ(r.profile.layers[0].forward.ns(), 80000 + (1900000 - 200000) + 50000);
  // gemm_b from gelu_a's end (the host's wait), then gelu_b.
  EXPECT_EQ(r.profile.layers[1].forward.ns(), (3000000 - 1950000) + 100000);
  EXPECT_THAT(
      r.warnings,
      ::testing::Contains(::testing::HasSubstr("4 kernel(s) started by 2 CUDA graph launch(es)")));
}

// The helper writes the grad bytes marks at every iteration; its first ones
// may come before it has seen which modules run (nn.MultiheadAttention's
// out_proj, never called, first counts as a layer of its own). The latest
// mark of each layer is used, whatever the order of the events.
TEST_F(TraceWalkTest, TheLatestGradBytesMarkOfALayerIsUsed) {
  const TraceProfileResult r = profile_of_text("marks", R"(
metadata { tool: "hand-written" hosts { hostname: "n" } world_size: 1 }
events { rank: 0 marker { name: "iteration/1" start_ns: 100000 end_ns: 200000 } }
events { rank: 0 marker { name: "ssgd/grad_bytes/attn=1049600" start_ns: 100000 end_ns: 100000 } }
events { rank: 0 marker { name: "iteration/0" start_ns: 0 end_ns: 100000 } }
events { rank: 0 marker { name: "ssgd/grad_bytes/attn=786432" start_ns: 10 end_ns: 10 } }
events { rank: 0 marker { name: "ssgd/grad_bytes/attn.out_proj=263168" start_ns: 20 end_ns: 20 } }
events { rank: 0 marker { name: "forward/attn" start_ns: 1000 end_ns: 2000 } }
events { rank: 0 marker { name: "forward/attn" start_ns: 101000 end_ns: 102000 } }
events { rank: 0 kernel { name: "k" start_ns: 101100 end_ns: 101200 } }
)");
  ASSERT_EQ(r.profile.layers.size(), 1u);
  EXPECT_EQ(r.profile.layers[0].grad_bytes, 1049600);
  EXPECT_THAT(r.warnings, ::testing::Contains("the ssgd/grad_bytes marks of 1 layer(s) changed "
                                              "during the capture; the latest are used"));
  EXPECT_THAT(r.warnings, ::testing::Contains("1 ssgd/grad_bytes mark(s) name no layer of the "
                                              "trace; ignored"));
}

// ssgd/activation_bytes marks give every layer activation_bytes, the latest
// of each layer as for grad_bytes; a layer without one counts 0, and the
// walk says so.
TEST_F(TraceWalkTest, ActivationBytesMarksGiveTheProfileItsActivations) {
  const TraceProfileResult r = profile_of_text("acts", R"(
metadata { tool: "hand-written" hosts { hostname: "n" } world_size: 1 }
events { rank: 0 marker { name: "iteration/0" start_ns: 0 end_ns: 100000 } }
events { rank: 0 marker { name: "iteration/1" start_ns: 100000 end_ns: 200000 } }
events { rank: 0 marker { name: "ssgd/activation_bytes/fc=1000" start_ns: 10 end_ns: 10 } }
events { rank: 0 marker { name: "ssgd/activation_bytes/fc=65536" start_ns: 100000 end_ns: 100000 } }
events { rank: 0 marker { name: "ssgd/activation_bytes/gone=7" start_ns: 100000 end_ns: 100000 } }
events { rank: 0 marker { name: "forward/fc" start_ns: 1000 end_ns: 2000 } }
events { rank: 0 marker { name: "forward/relu" start_ns: 2000 end_ns: 3000 } }
events { rank: 0 marker { name: "forward/fc" start_ns: 101000 end_ns: 102000 } }
events { rank: 0 marker { name: "forward/relu" start_ns: 102000 end_ns: 103000 } }
events { rank: 0 kernel { name: "k" start_ns: 101100 end_ns: 101200 } }
)");
  ASSERT_EQ(r.profile.layers.size(), 2u);
  ASSERT_TRUE(r.profile.has_activations());
  EXPECT_EQ(r.profile.layers[0].activation_bytes, 65536);
  EXPECT_EQ(r.profile.layers[1].activation_bytes, 0);
  EXPECT_THAT(r.warnings, ::testing::Contains("1 layer(s) of 2 have no ssgd/activation_bytes mark; "
                                              "their activations are counted as 0"));
  EXPECT_THAT(r.warnings, ::testing::Contains("1 ssgd/activation_bytes mark(s) name no layer of "
                                              "the trace; ignored"));
  EXPECT_THAT(r.warnings, ::testing::Contains("the ssgd/activation_bytes marks of 1 layer(s) "
                                              "changed during the capture; the latest are used"));
  // Without such marks a trace's profile has no activations.
  const TraceProfileResult none = profile_of_text("none", R"(
metadata { tool: "hand-written" hosts { hostname: "n" } world_size: 1 }
events { rank: 0 marker { name: "iteration/0" start_ns: 0 end_ns: 100000 } }
events { rank: 0 marker { name: "forward/fc" start_ns: 1000 end_ns: 2000 } }
events { rank: 0 kernel { name: "k" start_ns: 1100 end_ns: 1200 } }
)");
  EXPECT_FALSE(none.profile.has_activations());
}

}  // namespace
}  // namespace ssgd::walk
