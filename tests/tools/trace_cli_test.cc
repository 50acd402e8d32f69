// `ssgd trace`: it sets the tracer's environment for the command, forwards
// its exit status and its death by signal, reports what was captured, and
// rejects bad flags with messages naming them. The command here is a shell,
// not a CUDA program: what needs a GPU is listed in tracer/README.md.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/cli_runner.h"
#include "tests/support/test_files.h"

namespace {

namespace fs = std::filesystem;
using ssgd::testing::CliResult;
using ssgd::testing::run_cli;

const bool kTracerBuilt = SSGD_TRACER_BUILT;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class TraceCliTest : public ssgd::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    fs::create_directories(dir_ / "scratch");
  }
  CliResult trace(const std::vector<std::string>& args, const std::string& binary = SSGD_CLI) {
    std::vector<std::string> all{"trace"};
    all.insert(all.end(), args.begin(), args.end());
    return run_cli(binary, all, dir_, dir_ / "scratch");
  }
};

// The tests that run a command need the library; without it they skip
// (GTEST_SKIP in SetUp keeps the test body from running).
class TraceCliTracerTest : public TraceCliTest {
 protected:
  void SetUp() override {
    TraceCliTest::SetUp();
    if (!kTracerBuilt) GTEST_SKIP() << "libssgd_tracer.so was not built (no CUDA/CUPTI)";
  }
};

TEST_F(TraceCliTracerTest, ForwardsTheExitStatus) {
  CliResult r = trace({"--out", "t", "--", "/bin/true"});
  EXPECT_TRUE(r.exited && r.status == 0) << r;
  r = trace({"--out", "t", "--", "sh", "-c", "exit 3"});
  EXPECT_TRUE(r.exited && r.status == 3) << r;
  EXPECT_NE(r.err.find("no trace files in"), std::string::npos) << r;
}

TEST_F(TraceCliTracerTest, DiesOfTheSignalThatKilledTheCommand) {
  const CliResult r = trace({"--out", "t", "--", "sh", "-c", "kill -TERM $$"});
  EXPECT_FALSE(r.exited) << r;
  EXPECT_EQ(r.signal, SIGTERM) << r;
}

TEST_F(TraceCliTracerTest, TheCommandSeesTheTracerSettings) {
  const CliResult r =
      trace({"--out", "traces", "--nvtx", "--iterations", "5:10", "--", "sh", "-c",
             "echo \"$CUDA_INJECTION64_PATH|$SSGD_TRACER_OUT|$SSGD_TRACER_NVTX|"
             "$SSGD_TRACER_ITERATIONS\" > env.txt"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  const std::string env = slurp(dir_ / "env.txt");
  const fs::path library = fs::path(SSGD_CLI).parent_path() / "libssgd_tracer.so";
  EXPECT_EQ(env, library.string() + "|" + (fs::canonical(dir_) / "traces").string() +
                     "|1|5:10\n");
}

TEST_F(TraceCliTracerTest, NvtxIsOffUnlessAsked) {
  const CliResult r =
      trace({"--out", "t", "--", "sh", "-c", "echo \"$SSGD_TRACER_NVTX\" > env.txt"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_EQ(slurp(dir_ / "env.txt"), "0\n");
}

TEST_F(TraceCliTracerTest, ReportsWhatEachTraceHolds) {
  // The command leaves a trace where the tracer would: `ssgd pack` of a small text trace.
  const CliResult packed =
      run_cli(SSGD_CLI, {"pack", std::string(SSGD_SOURCE_DIR) + "/tests/data/traces/small.txtpb",
                         "-o", (dir_ / "small.ssgdt").string()},
              dir_, dir_ / "scratch");
  ASSERT_TRUE(packed.exited && packed.status == 0) << packed;
  const CliResult r = trace({"--out", "t", "--", "sh", "-c",
                             "mkdir -p \"$SSGD_TRACER_OUT\" && "
                             "cp small.ssgdt \"$SSGD_TRACER_OUT/rank-0.ssgdt\""});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_NE(r.err.find("1 trace file(s) in"), std::string::npos) << r;
  EXPECT_NE(r.err.find("rank-0.ssgdt: rank "), std::string::npos) << r;
  EXPECT_NE(r.err.find(", dropped "), std::string::npos) << r;
  EXPECT_NE(r.err.find("invalid timestamps "), std::string::npos) << r;
  EXPECT_EQ(r.out, "") << "the report goes to stderr, the program's stdout stays its own";
}

TEST_F(TraceCliTracerTest, RefusesAFolderThatAlreadyHoldsTraces) {
  fs::create_directories(dir_ / "t");
  std::ofstream(dir_ / "t" / "rank-3.ssgdt") << "old";
  const CliResult r = trace({"--out", "t", "--", "/bin/true"});
  EXPECT_TRUE(r.exited && r.status == 2) << r;
  EXPECT_NE(r.err.find("--out 't' already holds traces (rank-3.ssgdt)"), std::string::npos) << r;
}

TEST_F(TraceCliTracerTest, ACommandThatCannotRunIsNamed) {
  const CliResult r = trace({"--out", "t", "--", "/nonexistent/train.py"});
  EXPECT_TRUE(r.exited && r.status == 127) << r;
  EXPECT_NE(r.err.find("cannot run '/nonexistent/train.py': No such file or directory"),
            std::string::npos)
      << r;
}

TEST_F(TraceCliTest, BadIterationsAreNamed) {
  for (const std::string bad : {"5", "a:b", "10:3", "4:4", ":7", "-1:3"}) {
    const CliResult r = trace({"--iterations", bad, "--", "/bin/true"});
    EXPECT_TRUE(r.exited && r.status == 2) << bad << "\n" << r;
    EXPECT_NE(r.err.find("--iterations '" + bad + "'"), std::string::npos) << r;
  }
}

TEST_F(TraceCliTest, UnknownFlagAndMissingCommandAreErrors) {
  CliResult r = trace({"--bogus", "--", "/bin/true"});
  EXPECT_TRUE(r.exited && r.status == 2) << r;
  EXPECT_NE(r.err.find("--bogus"), std::string::npos) << r;
  r = trace({"--out", "t"});
  EXPECT_TRUE(r.exited && r.status == 2) << r;
  EXPECT_NE(r.err.find("command"), std::string::npos) << r;
}

TEST_F(TraceCliTest, AMissingTracerLibraryIsNamed) {
  // A copy of ssgd in a folder without the library next to it.
  const fs::path lone = dir_ / "bin" / "ssgd";
  fs::create_directories(lone.parent_path());
  fs::copy_file(SSGD_CLI, lone);
  fs::permissions(lone, fs::perms::owner_all);
  const CliResult r = trace({"--out", "t", "--", "/bin/true"}, lone.string());
  EXPECT_TRUE(r.exited && r.status == 2) << r;
  EXPECT_NE(r.err.find("libssgd_tracer.so is not at '" + (dir_ / "bin").string() +
                       "/libssgd_tracer.so'"),
            std::string::npos)
      << r;
}

}  // namespace
