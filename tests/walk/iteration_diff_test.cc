// `ssgd diff`'s core: the tasks of one marked iteration (walk/iteration_tasks.h)
// and their comparison (walk/iteration_diff.h), on tests/data/traces/marked.txtpb,
// whose per-iteration times its header lists.
#include "walk/iteration_diff.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "common/error.h"
#include "tests/support/test_files.h"
#include "traces/trace_dump.h"

namespace ssgd::walk {
namespace {

namespace fs = std::filesystem;
const fs::path kMarked = fs::path(SSGD_SOURCE_DIR) / "tests/data/traces/marked.txtpb";

class IterationDiffTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ssgd_iteration_diff_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // marked.txtpb with `from` replaced by `to`, packed.
  std::string pack(const std::string& name, const std::string& from = "", const std::string& to = "") {
    std::string text = ssgd::testing::read_file_bytes(kMarked);
    if (!from.empty()) {
      const auto at = text.find(from);
      EXPECT_NE(at, std::string::npos) << from;
      text.replace(at, from.size(), to);
    }
    ssgd::testing::write_file_bytes(dir_ / (name + ".txtpb"), text);
    const fs::path out = dir_ / (name + ".ssgdt");
    trace::pack_text_trace(dir_ / (name + ".txtpb"), out);
    return out.string();
  }

  fs::path dir_;
};

TEST_F(IterationDiffTest, TasksOfAnIterationFollowTheMarkers) {
  const auto it = TraceIterations::read(pack("m"), false);
  EXPECT_EQ(it.iterations().size(), 3u);
  EXPECT_EQ(it.median().number, 1);  // all three last 9 us: ties go by number
  const auto tasks = it.tasks(1);
  std::vector<std::string> labels;
  std::vector<std::int64_t> busy;
  for (const auto& t : tasks) {
    labels.push_back(task_label(t));
    busy.push_back(t.busy_ns);
  }
  EXPECT_EQ(labels, (std::vector<std::string>{"forward conv1", "forward conv2", "forward fc",
                                              "backward fc", "backward conv2", "backward conv1",
                                              "all-reduce #0 (fc)", "all-reduce #1 (conv1)",
                                              "update"}));
  // Kernels with the idle time before them that the host caused
  // (tests/data/traces/marked.txtpb works them out).
  EXPECT_EQ(busy, (std::vector<std::int64_t>{1250, 410, 650, 1150, 1500, 660, 1000, 500, 950}));
  EXPECT_EQ(tasks[6].bytes, 40960);
  // The first kernel (at 110160) owns the idle time since its iteration
  // began (the device ran dry at 107550, before it).
  EXPECT_EQ(tasks[0].start_ns, 110000);
  EXPECT_EQ(tasks[0].end_ns, 111250);    // the tail kernel's end
}

// The NCCL kernel ssgd's tracer records beside the plugin's Collective (same
// launch, same times) is communication: it adds nothing to the backward of
// the layer that launched it, and no second all-reduce.
TEST_F(IterationDiffTest, NcclKernelsBesideCollectivesAreNotCompute) {
  const std::string coll = "events { rank: 0 collective { op: ALL_REDUCE size_bytes: 40960 "
                           "communicator_id: 42 rank: 0 nranks: 1 sequence_number: 2";
  const std::string nccl = "events { rank: 0 kernel { name: \"ncclDevKernel_AllReduce_Sum_f32_RING_LL\" "
                           "device: 0 stream: 9 start_ns: 114100 end_ns: 115100 correlation_id: 16 } }\n";
  const auto plain = TraceIterations::read(pack("m"), false).tasks(1);
  const auto with_kernel = TraceIterations::read(pack("k", coll, nccl + coll), false).tasks(1);
  ASSERT_EQ(with_kernel.size(), plain.size());
  for (std::size_t i = 0; i < plain.size(); ++i) {
    EXPECT_EQ(task_label(with_kernel[i]), task_label(plain[i])) << i;
    EXPECT_EQ(with_kernel[i].busy_ns, plain[i].busy_ns) << task_label(plain[i]);
  }
}

TEST_F(IterationDiffTest, TraceAgainstItselfDiffersNowhere) {
  const auto m = TraceIterations::read(pack("m"), false);
  for (const DiffBy by : {DiffBy::kStart, DiffBy::kEnd, DiffBy::kDuration}) {
    DiffOptions o;
    o.by = by;
    const IterationDiff d = diff_iterations(m, m, o);
    EXPECT_EQ(d.measured.number, 1);
    EXPECT_EQ(d.simulated.number, 1);
    EXPECT_EQ(d.matched.size(), 9u);
    EXPECT_TRUE(d.measured_only.empty());
    EXPECT_TRUE(d.simulated_only.empty());
    for (const auto& row : d.matched) {
      EXPECT_EQ(row.start_diff_ns, 0);
      EXPECT_EQ(row.end_diff_ns, 0);
      EXPECT_EQ(row.duration_diff_ns, 0);
    }
  }
}

TEST_F(IterationDiffTest, SlowerTaskComesFirstAndOneSidedTasksAreListed) {
  const auto m = TraceIterations::read(pack("m"), false);
  // Iteration 1's conv2 backward 600 ns longer; its conv1 all-reduce gone.
  std::string slow = pack("s", "start_ns: 114160 end_ns: 114960", "start_ns: 114160 end_ns: 115560");
  const auto s0 = TraceIterations::read(slow, false);
  DiffOptions o;
  IterationDiff d = diff_iterations(m, s0, o);
  ASSERT_FALSE(d.matched.empty());
  EXPECT_EQ(task_label(d.matched[0].task()), "backward conv2");
  EXPECT_EQ(d.matched[0].duration_diff_ns, 600);
  EXPECT_EQ(d.matched[0].end_diff_ns, 600);
  // conv1's backward kernel now starts while the device is still busy with
  // conv2's: the 60 ns of idle it owned before are gone.
  EXPECT_EQ(task_label(d.matched[1].task()), "backward conv1");
  EXPECT_EQ(d.matched[1].duration_diff_ns, -60);

  const std::string no_comm = pack(
      "n",
      R"(events { rank: 0 collective { op: ALL_REDUCE size_bytes: 4096 communicator_id: 42 rank: 0 nranks: 1 sequence_number: 3 start_ns: 116100 end_ns: 116600 device: 0 stream: 9 datatype: "float32" count: 1024 correlation_id: 19 } })",
      "");
  d = diff_iterations(m, TraceIterations::read(no_comm, false), o);
  ASSERT_EQ(d.measured_only.size(), 1u);
  EXPECT_EQ(task_label(d.measured_only[0].task()), "all-reduce #1 (conv1)");
  EXPECT_TRUE(d.simulated_only.empty());
}

TEST_F(IterationDiffTest, ChosenIterationsAndErrors) {
  const auto m = TraceIterations::read(pack("m"), false);
  DiffOptions o;
  o.iteration = 2;
  const IterationDiff d = diff_iterations(m, m, o);
  EXPECT_EQ(d.measured.number, 2);
  EXPECT_EQ(d.simulated.number, 2);
  o.iteration = 7;
  try {
    (void)diff_iterations(m, m, o);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("iteration 7 is not in the trace"), std::string::npos)
        << e.what();
  }
  o.iteration.reset();
  o.rank = 3;
  EXPECT_THROW((void)diff_iterations(m, m, o), InputError);
  // small.txtpb marks "iteration 0", not "iteration/0".
  const fs::path small = dir_ / "small.ssgdt";
  trace::pack_text_trace(fs::path(SSGD_SOURCE_DIR) / "tests/data/traces/small.txtpb", small);
  try {
    (void)TraceIterations::read(small.string(), false);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no iteration/<N> marker ranges"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ssgd::walk
