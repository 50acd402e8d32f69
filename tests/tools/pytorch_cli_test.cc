// `ssgd import pytorch` (and `ssgd import kineto`, the same import) as a real
// process on CPU captures: the summary it prints for a legacy profiler file,
// a trace that `ssgd simulate` replays, and exit status 2 with a message
// naming the file, and no output, when the file holds nothing usable.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/cli_runner.h"
#include "tests/support/test_files.h"
#include "tests/support/torch_cpu_profile_writer.h"

namespace ssgd::testing {
namespace {

using ::testing::HasSubstr;

class PytorchCliTest : public TempDirTest {
 protected:
  CliResult ssgd(const std::vector<std::string>& args) {
    return run_cli(SSGD_CLI, args, SSGD_SOURCE_DIR, dir_);
  }
};

TEST_F(PytorchCliTest, LegacyFileImportsWithASummaryAndReplays) {
  write_torch_cpu_profile(dir_ / "rank1.json");
  const auto out = (dir_ / "rank1.ssgdt").string();
  const auto r = ssgd({"import", "pytorch", (dir_ / "rank1.json").string(), "-o", out});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("format       legacy PyTorch profiler (torch <= 1.13 without "
                               "Kineto, or use_kineto=False)"));
  EXPECT_THAT(r.out, HasSubstr("clock        UNSPECIFIED"));
  EXPECT_THAT(r.out, HasSubstr("iterations   2 from Optimizer.step ranges"));
  EXPECT_THAT(r.out, HasSubstr("CPU compute  46 kernels on device -1"));
  EXPECT_THAT(r.out, HasSubstr("layers       4 layers from ops (auto: no forward/backward "
                               "annotations): 8 forward and 14 backward ranges"));
  EXPECT_THAT(r.out, HasSubstr("gloo         5 collectives, 5 c10d calls (FRAMEWORK API calls), "
                               "5 linked by queue order; sizes: none (no recorded shapes or "
                               "ssgd/collective_bytes mark)"));
  EXPECT_THAT(r.err, HasSubstr("rank 0 assumed"));
  const auto sim = ssgd({"simulate", out, "-q", "--log", "error"});
  EXPECT_EQ(sim.status, 0) << sim;
}

// Issue 33: a plain legacy file has no collective sizes. Its collectives
// replay at their measured durations, and simulate says so; a policy that
// models every collective from its size refuses, naming the record and how
// to supply sizes (it replayed 0 ns of communication without a word).
TEST_F(PytorchCliTest, CollectivesWithoutSizeAreSaidAtSimulateAndRefusedWhereSizesAreNeeded) {
  write_torch_cpu_profile(dir_ / "rank1.json", {.iterations = 3});
  const auto out = (dir_ / "rank1.ssgdt").string();
  ASSERT_EQ(ssgd({"import", "pytorch", (dir_ / "rank1.json").string(), "-o", out}).status, 0);
  const auto sim = ssgd({"simulate", out, "--set", "cluster.gpus_per_node=2"});
  ASSERT_EQ(sim.status, 0) << sim;
  EXPECT_THAT(sim.out, HasSubstr("note: 4 collectives had no size; replayed at their measured "
                                 "durations"));
  EXPECT_THAT(sim.err, HasSubstr("4 collective(s) had no size; replayed at their measured "
                                 "durations"));
  EXPECT_THAT(sim.out, ::testing::Not(HasSubstr("all-reduce total 0 ns in 0 collectives")));
  const auto ddp =
      ssgd({"simulate", out, "--set", "cluster.gpus_per_node=2", "--set", "policy.overlap=ddp"});
  EXPECT_EQ(ddp.status, 2) << ddp;
  EXPECT_THAT(ddp.err, HasSubstr("rank1.ssgdt: record "));
  EXPECT_THAT(ddp.err, HasSubstr("field 'collective.size_bytes': the ALL_REDUCE collective has no "
                                 "size (and 3 more like it): policy.overlap ddp merges gradients"));
  EXPECT_THAT(ddp.err, HasSubstr("ssgd_marks"));
  EXPECT_THAT(ddp.err, HasSubstr("record_shapes=True"));
}

// Issue 33: a legacy event far before the profiler's start (ts -5e12 us).
TEST_F(PytorchCliTest, ALegacyEventBeforeTheProfilersStartIsRefused) {
  write_file_bytes(dir_ / "neg.json",
                   R"([{"name": "aten::add", "ph": "X", "ts": -5000000000000, "dur": 5, "tid": 1, )"
                   R"("pid": "CPU functions", "args": {}}])");
  const auto r = ssgd(
      {"import", "pytorch", (dir_ / "neg.json").string(), "-o", (dir_ / "neg.ssgdt").string()});
  EXPECT_EQ(r.status, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("neg.json: record 0: field 'traceEvents[0].ts': legacy profiler "
                               "event 'aten::add': ts -5000000000000 us is before the profiler's "
                               "start"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "neg.ssgdt"));
}

// Issue 33: an NCCL kernel repeated with its sequence number (the fuzz seed)
// would be one collective counted twice.
TEST_F(PytorchCliTest, AnNcclKernelWithARepeatedSequenceNumberIsRefused) {
  const auto seed = std::string(SSGD_SOURCE_DIR) + "/fuzz/seeds/kineto_json/nccl-kernel-seq-twice.json";
  const auto r = ssgd({"import", "pytorch", seed, "-o", (dir_ / "k.ssgdt").string()});
  EXPECT_EQ(r.status, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("record 7: field 'traceEvents[7].args.Seq': NCCL kernel: "
                               "ALL_REDUCE sequence 5 of communicator"));
  EXPECT_THAT(r.err, HasSubstr("is recorded twice (first at record 5)"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "k.ssgdt"));
}

TEST_F(PytorchCliTest, KinetoSubcommandTakesLegacyFilesToo) {
  write_torch_cpu_profile(dir_ / "t.json", {.marks = true, .metadata = true});
  const auto r =
      ssgd({"import", "kineto", (dir_ / "t.json").string(), "-o", (dir_ / "t.ssgdt").string()});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("rank         1 (ssgd/rank mark), world size 2"));
  EXPECT_THAT(r.out, HasSubstr("clock        REALTIME, from the ssgd/clock_realtime_ns mark"));
  EXPECT_THAT(r.out, HasSubstr("metadata     14 ssgd/ marks: rank 1, world size 2, host host-a, "
                               "clock, collective_bytes (2 marks), grad_bytes of 2 layers"));
}

TEST_F(PytorchCliTest, NothingUsableExitsWithBadInputAndWritesNothing) {
  write_file_bytes(dir_ / "empty.json", R"({"traceEvents": []})");
  auto r = ssgd(
      {"import", "pytorch", (dir_ / "empty.json").string(), "-o", (dir_ / "empty.ssgdt").string()});
  EXPECT_EQ(r.status, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("empty.json"));
  EXPECT_THAT(r.err, HasSubstr("nothing to import: traceEvents holds no events"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "empty.ssgdt"));

  write_file_bytes(
      dir_ / "ops.json",
      R"([{"name": "aten::add", "ph": "X", "ts": 1, "dur": 2, "tid": 1, "pid": "CPU functions", "args": {}}])");
  r = ssgd({"import", "kineto", (dir_ / "ops.json").string(), "-o", (dir_ / "ops.ssgdt").string()});
  EXPECT_EQ(r.status, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("ops.json"));
  EXPECT_THAT(r.err, HasSubstr("no iteration"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "ops.ssgdt"));
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    EXPECT_THAT(e.path().filename().string(), ::testing::Not(HasSubstr(".ssgdt.")));
  }
}

TEST_F(PytorchCliTest, HelpSaysItTakesBothWriters) {
  const auto r = ssgd({"import", "--help"});
  EXPECT_THAT(r.out, HasSubstr("pytorch"));
  EXPECT_THAT(r.out, HasSubstr("Kineto's or the legacy profiler's"));
  EXPECT_THAT(r.out, HasSubstr("both Kineto and legacy profiler files"));
}

// The bundled dataset's traces are what ssgd makes of its raw profiler files:
// importing a configuration's rank files and merging them gives the bundled
// trace.ssgdt byte for byte (tools/testbed/assemble.py ran exactly this).
TEST_F(PytorchCliTest, BundledDatasetTraceIsRebuiltByteForByteFromItsRawFiles) {
  const std::filesystem::path config =
      std::filesystem::path(SSGD_SOURCE_DIR) / "traces/datasets/cpu-cluster/configs/cnn-w2-1gbit-b25";
  const auto ranks = dir_ / "ranks";
  std::filesystem::create_directories(ranks);
  for (int r = 0; r < 2; ++r) {
    const auto in = (config / ("rank" + std::to_string(r) + ".json.gz")).string();
    const auto out = (ranks / ("rank-" + std::to_string(r) + ".ssgdt")).string();
    const auto imported = ssgd({"import", "pytorch", in, "-o", out, "--rank", std::to_string(r)});
    ASSERT_EQ(imported.status, 0) << imported;
  }
  const auto merged = (dir_ / "trace.ssgdt").string();
  const auto m = ssgd({"merge", ranks.string(), "-o", merged});
  ASSERT_EQ(m.status, 0) << m;
  EXPECT_TRUE(read_file_bytes(merged) == read_file_bytes(config / "trace.ssgdt"))
      << "the bundled trace differs from the import of its raw files";
}

}  // namespace
}  // namespace ssgd::testing
