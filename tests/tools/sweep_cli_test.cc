// `ssgd sweep` as a process (SSGD_CLI) in a fresh folder per test: each point
// is the replay `ssgd simulate` gives with the same keys; results in point
// order as JSON lines and CSV; an interrupted sweep resumes; results of
// another grid are refused; bad grids exit 2 before anything is written; and
// under mpirun (when ssgd was built with MPI) the ranks write the same bytes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli_runner.h"
#include "tests/support/test_files.h"

namespace {

namespace fs = std::filesystem;
using ssgd::testing::read_file_bytes;
using ssgd::testing::write_file_bytes;
using ::testing::HasSubstr;

const fs::path kSource = fs::path(SSGD_SOURCE_DIR);
constexpr int kBadInput = 2;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class SweepCliTest : public ssgd::testing::CliTempDirTest {
 protected:
  void SetUp() override {
    CliTempDirTest::SetUp();
    write_grid("grid:\n  cluster.nodes: [1, 2]\n  network.inter_node: [10gbe, 100gbe]\n");
  }
  void write_grid(const std::string& axes) {
    write_file_bytes(dir_ / "grid.yaml",
                     "input: " + (kSource / "traces/datasets/resnet50_v100.csv").string() +
                         "\nset:\n  iterations: 3\n  cluster.gpus_per_node: 2\n" + axes);
  }
  ssgd::testing::CliResult ssgd(const std::vector<std::string>& args) {
    return run_ssgd(SSGD_CLI, args);
  }
  ssgd::testing::CliResult sweep(const std::string& out = "r.jsonl") {
    return ssgd({"sweep", "grid.yaml", "-o", out, "--csv", fs::path(out).stem().string() + ".csv"});
  }
  void expect_refused(const ssgd::testing::CliResult& r, const std::string& where,
                      const std::string& reason) {
    EXPECT_TRUE(r.exited) << r;
    EXPECT_EQ(r.status, kBadInput) << r;
    EXPECT_THAT(r.err, HasSubstr(where)) << r;
    EXPECT_THAT(r.err, HasSubstr(reason)) << r;
  }
};

TEST_F(SweepCliTest, EachPointIsTheReplaySimulateGivesWithItsKeys) {
  const auto r = sweep();
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.err, HasSubstr("sweep: 4 points written to r.jsonl and r.csv"));
  const auto lines = lines_of(read_file_bytes(dir_ / "r.jsonl"));
  ASSERT_EQ(lines.size(), 4U);
  const auto point3 = nlohmann::json::parse(lines[3]);
  EXPECT_EQ(point3["point"], 3);
  EXPECT_EQ(point3["keys"], (nlohmann::json{{"cluster.nodes", 2}, {"network.inter_node", "100gbe"}}));

  const auto s = ssgd({"simulate", (kSource / "traces/datasets/resnet50_v100.csv").string(),
                       "--set", "iterations=3", "--set", "cluster.gpus_per_node=2", "--set",
                       "cluster.nodes=2", "--set", "network.inter_node=100gbe", "--report",
                       "s.json", "-q"});
  ASSERT_TRUE(s.exited && s.status == 0) << s;
  const auto report = nlohmann::json::parse(read_file_bytes(dir_ / "s.json"));
  const auto& figures = point3["figures"];
  EXPECT_EQ(figures["iteration_time_ns"], report["iteration_time_ns"]);
  EXPECT_EQ(figures["throughput_samples_per_s"], report["throughput_samples_per_s"]);
  EXPECT_EQ(figures["breakdown.exposed_comm_ns"], report["breakdown"]["exposed_comm_ns"]);
  EXPECT_EQ(figures["workers"], 4);
  EXPECT_FALSE(figures.contains("scenario.iterations"));

  const auto csv = lines_of(read_file_bytes(dir_ / "r.csv"));
  ASSERT_EQ(csv.size(), 5U);
  EXPECT_THAT(csv[0], ::testing::StartsWith("point,cluster.nodes,network.inter_node,"));
  EXPECT_THAT(csv[0], ::testing::EndsWith(",error"));
  EXPECT_THAT(csv[4], ::testing::StartsWith("3,2,100gbe,"));
}

TEST_F(SweepCliTest, AnInterruptedSweepResumesAndEndsWithTheSameBytes) {
  ASSERT_EQ(sweep("full.jsonl").status, 0);
  const std::string full = read_file_bytes(dir_ / "full.jsonl");
  const auto lines = lines_of(full);
  // Points 2 and 0 done, in the order two ranks might finish them, and point
  // 1 cut short by the interruption.
  write_file_bytes(dir_ / "r.jsonl", lines[2] + "\n" + lines[0] + "\n" + lines[1].substr(0, 40));
  const auto r = sweep();
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.err, HasSubstr("r.jsonl:3: the last line is cut short"));
  EXPECT_THAT(r.err, HasSubstr("sweep: 2 points of 4 to run (2 in r.jsonl)"));
  EXPECT_EQ(read_file_bytes(dir_ / "r.jsonl"), full);
  EXPECT_EQ(read_file_bytes(dir_ / "r.csv"), read_file_bytes(dir_ / "full.csv"));
  // Run again, there is nothing left to do.
  const auto again = sweep();
  EXPECT_THAT(again.err, HasSubstr("sweep: 0 points of 4 to run (4 in r.jsonl)"));
  EXPECT_EQ(read_file_bytes(dir_ / "r.jsonl"), full);
}

TEST_F(SweepCliTest, ResultsOfAnotherGridAreRefusedUnlessRestarted) {
  ASSERT_EQ(sweep().status, 0);
  const std::string before = read_file_bytes(dir_ / "r.jsonl");
  write_grid("grid:\n  cluster.nodes: [1, 4]\n  network.inter_node: [10gbe, 100gbe]\n");
  expect_refused(sweep(), "r.jsonl:3: field 'keys'", "another grid wrote this file");
  EXPECT_EQ(read_file_bytes(dir_ / "r.jsonl"), before);
  const auto r = ssgd({"sweep", "grid.yaml", "-o", "r.jsonl", "--restart"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(read_file_bytes(dir_ / "r.jsonl"), HasSubstr("\"cluster.nodes\":4"));
}

TEST_F(SweepCliTest, ABadGridExitsTwoNamingTheLineAndKeyAndWritesNothing) {
  write_grid("grid:\n  cluster.nodez: [1, 2]\n");
  expect_refused(sweep(), "grid.yaml:6: field 'cluster.nodez'", "did you mean 'cluster.nodes'");
  write_grid("grid:\n  cluster.nodes: [1, -2]\n");
  expect_refused(sweep(), "grid.yaml:6: field 'cluster.nodes'", "");
  write_grid("grid:\n  cluster.nodes: {from: 1, to: 4}\n");
  expect_refused(sweep(), "grid.yaml:6: field 'cluster.nodes'",
                 "exactly one of step, factor or count");
  write_file_bytes(dir_ / "grid.yaml", "input: missing.csv\ngrid:\n  cluster.nodes: [1]\n");
  expect_refused(sweep(), "missing.csv", "");
  for (const char* name : {"r.jsonl", "r.csv"}) EXPECT_FALSE(fs::exists(dir_ / name)) << name;
  expect_refused(ssgd({"sweep", "grid.yaml", "-o", "grid.yaml"}), "field '--output'", "is one of the command's inputs");
}

TEST_F(SweepCliTest, APointThatFailsIsRecordedWithItsErrorAndTheOthersRun) {
  write_grid("  scaling.mode: strong\ngrid:\n  cluster.nodes: [1, 32]\n"
             "  scaling.global_batch: [256, 32]\n");
  const auto r = sweep();
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.err, HasSubstr("sweep: 1 of 4 points failed"));
  const auto lines = lines_of(read_file_bytes(dir_ / "r.jsonl"));
  ASSERT_EQ(lines.size(), 4U);
  const auto failed = nlohmann::json::parse(lines[3]);
  EXPECT_FALSE(failed.contains("figures"));
  EXPECT_THAT(failed["error"].get<std::string>(),
              HasSubstr("grid.yaml:8: field 'scaling.global_batch': 32 samples cannot be split "
                        "over 64 GPUs"));
  EXPECT_THAT(failed["error"].get<std::string>(),
              HasSubstr("(point 3: cluster.nodes=32, scaling.global_batch=32)"));

  // Every point failing is an error.
  write_grid("  scaling.mode: strong\n  scaling.global_batch: 32\ngrid:\n  cluster.nodes: [32]\n");
  expect_refused(sweep("all.jsonl"), "grid.yaml", "cannot be split");
}

#if SSGD_SWEEP_MPI
TEST_F(SweepCliTest, UnderMpirunTheRanksShareThePointsAndWriteTheSameBytes) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "Open MPI is not run under the sanitizers (its own allocations are not "
                  "checked with LeakSanitizer); the release suite runs this test";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "Open MPI is not run under the sanitizers (its own allocations are not "
                  "checked with LeakSanitizer); the release suite runs this test";
#endif
#endif
  write_grid("grid:\n  cluster.nodes: [1, 2, 4]\n  network.inter_node: [10gbe, 100gbe]\n"
             "  policy.overlap: [wfbp, ddp]\n");
  ASSERT_EQ(sweep("alone.jsonl").status, 0);
  for (const char* np : {"2", "3"}) {
    const std::string out = std::string("np") + np + ".jsonl";
    const fs::path scratch = dir_.string() + "_mpi";
    fs::create_directories(scratch);
    const auto r = ssgd::testing::run_cli(
        SSGD_MPIEXEC,
        {"-np", np, "--oversubscribe", SSGD_CLI, "sweep", "grid.yaml", "-o", out, "--csv",
         fs::path(out).stem().string() + ".csv"},
        dir_, scratch, [] {
          // The CI runs as root; Open MPI refuses root without these.
          ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
          ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
          ::setenv("OMPI_MCA_btl", "self,vader", 1);  // one machine: no network probing
        });
    fs::remove_all(scratch);
    ASSERT_TRUE(r.exited && r.status == 0) << r;
    EXPECT_THAT(r.err, HasSubstr(std::string(np) + " rank(s)")) << r;
    EXPECT_EQ(read_file_bytes(dir_ / out), read_file_bytes(dir_ / "alone.jsonl")) << np;
    EXPECT_EQ(read_file_bytes(dir_ / (fs::path(out).stem().string() + ".csv")),
              read_file_bytes(dir_ / "alone.csv"))
        << np;
  }
}
#endif

}  // namespace
