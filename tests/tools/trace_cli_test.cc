// `ssgd trace`: it sets the tracer's environment for the command, forwards
// its exit status and its death by signal, reports what was captured, and
// rejects bad flags with messages naming them. The command here is a shell,
// not a CUDA program: what needs a GPU is listed in tracer/README.md.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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
  // `ssgd trace --out OUT` of a command that leaves a trace where the tracer
  // would: `ssgd pack` of tests/data/traces/TEXT as OUT/rank-0.ssgdt.
  CliResult trace_leaving(const std::string& text, const std::string& out,
                          std::vector<std::string> flags = {}) {
    const std::string packed = out + "-packed.ssgdt";
    const CliResult pack =
        run_cli(SSGD_CLI, {"pack", std::string(SSGD_SOURCE_DIR) + "/tests/data/traces/" + text,
                           "-o", (dir_ / packed).string()},
                dir_, dir_ / "scratch");
    EXPECT_TRUE(pack.exited && pack.status == 0) << pack;
    std::vector<std::string> args = {"--out", out};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", "sh", "-c",
                             "mkdir -p \"$SSGD_TRACER_OUT\" && cp " + packed +
                                 " \"$SSGD_TRACER_OUT/rank-0.ssgdt\""});
    return trace(args);
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
             "$SSGD_TRACER_ITERATIONS|$NVTX_INJECTION64_PATH\" > env.txt"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  const std::string env = slurp(dir_ / "env.txt");
  // ssgd finds the library next to its own file, links resolved.
  const std::string library =
      fs::canonical(fs::path(SSGD_CLI).parent_path() / "libssgd_tracer.so").string();
  // NVTX's injection library is the tracer, which hands NVTX to its CUPTI.
  EXPECT_EQ(env, library + "|" + (fs::canonical(dir_) / "traces").string() + "|1|5:10|" +
                     library + "\n");
}

// --window reaches the program as SSGD_TRACER_WINDOW; a trace in which no
// step was reported says that nothing was traced.
TEST_F(TraceCliTracerTest, TheWindowIsPassedOnAndReported) {
  CliResult r = trace({"--out", "w", "--window", "steps:10:20", "--", "sh", "-c",
                       "echo \"$SSGD_TRACER_WINDOW\" > env.txt"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_EQ(slurp(dir_ / "env.txt"), "steps:10:20\n");
  r = trace_leaving("small.txtpb", "t", {"--window", "signal"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_NE(r.err.find("window: no step was reported, so nothing was traced"), std::string::npos)
      << r;
}

TEST_F(TraceCliTracerTest, NvtxIsOffUnlessAsked) {
  const CliResult r =
      trace({"--out", "t", "--", "sh", "-c", "echo \"$SSGD_TRACER_NVTX\" > env.txt"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_EQ(slurp(dir_ / "env.txt"), "0\n");
}

TEST_F(TraceCliTracerTest, ReportsWhatEachTraceHolds) {
  // The command leaves a trace where the tracer would: a small text trace, packed.
  const CliResult r = trace_leaving("small.txtpb", "t");
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_NE(r.err.find("1 trace file(s) in"), std::string::npos) << r;
  EXPECT_NE(r.err.find("rank-0.ssgdt: rank "), std::string::npos) << r;
  EXPECT_NE(r.err.find(", dropped "), std::string::npos) << r;
  EXPECT_NE(r.err.find("invalid timestamps "), std::string::npos) << r;
  EXPECT_EQ(r.out, "") << "the report goes to stderr, the program's stdout stays its own";
  EXPECT_EQ(r.err.find("launched no GPU work"), std::string::npos) << r;
  // A program that ran on the CPU leaves traces without a kernel: said so.
  const CliResult cpu = trace_leaving("graph.txtpb", "cpu");
  ASSERT_TRUE(cpu.exited && cpu.status == 0) << cpu;
  EXPECT_NE(cpu.err.find("the program launched no GPU work (no kernel in any trace)"),
            std::string::npos)
      << cpu;
}

// Kernels without their launch calls (a tracing window lost them on a real
// CUPTI): the replay cannot see the host, and the report says so at once.
TEST_F(TraceCliTracerTest, KernelsWithoutLaunchCallsAreSaid) {
  const CliResult r = trace_leaving("no_launch_calls.txtpb", "t");
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_NE(r.err.find("warning: 2 kernel(s) and no CUDA API call: their launch times are unknown"),
            std::string::npos)
      << r;
  const CliResult fine = trace_leaving("small.txtpb", "s");
  EXPECT_EQ(fine.err.find("no CUDA API call"), std::string::npos) << fine;
}

TEST_F(TraceCliTracerTest, RefusesAFolderThatAlreadyHoldsTraces) {
  fs::create_directories(dir_ / "t");
  std::ofstream(dir_ / "t" / "rank-3.ssgdt") << "old";
  const CliResult r = trace({"--out", "t", "--", "/bin/true"});
  EXPECT_TRUE(r.exited && r.status == 2) << r;
  EXPECT_NE(r.err.find("t: field '--out': already holds traces (rank-3.ssgdt)"), std::string::npos)
      << r;
}

TEST_F(TraceCliTracerTest, ACommandThatCannotRunIsNamed) {
  const CliResult r = trace({"--out", "t", "--", "/nonexistent/train.py"});
  EXPECT_TRUE(r.exited && r.status == 127) << r;
  EXPECT_NE(r.err.find("cannot run '/nonexistent/train.py': No such file or directory"),
            std::string::npos)
      << r;
}

// The clock server: the command sees its address, it answers the clock
// protocol while the command runs, and the report says how many requests
// it answered.
TEST_F(TraceCliTracerTest, TheCommandSeesAClockServerThatAnswers) {
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3 to send a request";
  const std::string client =
      "import os, socket, struct\n"
      "host, port = os.environ['SSGD_TRACER_CLOCK_SERVER'].rsplit(':', 1)\n"
      "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
      "s.settimeout(5)\n"
      "s.sendto(struct.pack('>IHHQq', 0x53434B51, 1, 0, 7, 123).ljust(128, b'\\0'), (host, "
      "int(port)))\n"
      "r = s.recv(256)\n"
      "m, v, n, seq, t0, t1, t2 = struct.unpack('>IHHQqqq', r[:40])\n"
      "open('reply.txt', 'w').write('%x %d %d %s %s\\n' % (m, seq, t0, t2 >= t1, "
      "r[40:40 + n].decode()))\n";
  const CliResult r = trace({"--out", "t", "--clock-address", "127.0.0.1", "--", "sh", "-c",
                             "echo \"$SSGD_TRACER_CLOCK_SERVER\" > clock.txt && "
                             "/usr/bin/python3 -c \"$0\"",
                             client});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  const std::string address = slurp(dir_ / "clock.txt");
  ASSERT_TRUE(address.starts_with("127.0.0.1:")) << address;
  const std::string port = address.substr(10, address.size() - 11);
  EXPECT_FALSE(port.empty());
  EXPECT_EQ(port.find_first_not_of("0123456789"), std::string::npos) << port;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  EXPECT_EQ(slurp(dir_ / "reply.txt"), "53434b52 7 123 True " + std::string(host) + "\n");
  EXPECT_NE(r.err.find("ssgd trace: clock server 127.0.0.1:" + port +
                       ": answered 1 clock requests, ignored 0 other packets"),
            std::string::npos)
      << r;
}

TEST_F(TraceCliTracerTest, TheAdvertisedAddressIsTheHostNameByDefault) {
  const CliResult r = trace({"--out", "t", "--", "sh", "-c",
                             "echo \"$SSGD_TRACER_CLOCK_SERVER\" > clock.txt"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  EXPECT_TRUE(slurp(dir_ / "clock.txt").starts_with(std::string(host) + ":"))
      << slurp(dir_ / "clock.txt");
}

TEST_F(TraceCliTracerTest, AnOuterClockServerIsKeptAndNoSecondOneStarted) {
  ::setenv("SSGD_TRACER_CLOCK_SERVER", "outer:4791", 1);
  CliResult r = trace({"--out", "t", "--", "sh", "-c",
                       "echo \"$SSGD_TRACER_CLOCK_SERVER\" > clock.txt"});
  EXPECT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_EQ(slurp(dir_ / "clock.txt"), "outer:4791\n");
  EXPECT_EQ(r.err.find("clock server"), std::string::npos) << r;
  // --no-clock-sync removes it; --clock-server replaces it.
  r = trace({"--out", "t", "--no-clock-sync", "--", "sh", "-c",
             "echo \"${SSGD_TRACER_CLOCK_SERVER-unset}\" > clock.txt"});
  EXPECT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_EQ(slurp(dir_ / "clock.txt"), "unset\n");
  r = trace({"--out", "t", "--clock-server", "[fe80::1]:99", "--", "sh", "-c",
             "echo \"$SSGD_TRACER_CLOCK_SERVER\" > clock.txt"});
  EXPECT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_EQ(slurp(dir_ / "clock.txt"), "[fe80::1]:99\n");
  ::unsetenv("SSGD_TRACER_CLOCK_SERVER");
}

TEST_F(TraceCliTracerTest, BadClockOptionsAreNamed) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad{
      {{"--clock-server", "nohost"}, "'nohost': field '--clock-server': expected HOST:PORT"},
      {{"--clock-server", "a:0"},
       "'a:0': field '--clock-server': the port 0 is not in 1..65535"},
      {{"--no-clock-sync", "--clock-port", "5000"},
       "command line: field '--no-clock-sync': cannot be combined"},
      {{"--clock-server", "a:1", "--clock-address", "b"},
       "'a:1': field '--clock-server': uses another"},
      {{"--clock-port", "70000"}, "--clock-port"},
      {{"--clock-address", "two words"}, "'two words': field '--clock-address'"},
  };
  for (const auto& [flags, message] : bad) {
    std::vector<std::string> args{"--out", "t"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", "/bin/true"});
    const CliResult r = trace(args);
    EXPECT_TRUE(r.exited && r.status == 2) << message << "\n" << r;
    EXPECT_NE(r.err.find(message), std::string::npos) << r;
  }
}

// Open MPI's mpirun passes only -x variables to ranks on other nodes; Hydra
// (MPICH, Intel MPI) passes everything and knows no -x.
TEST_F(TraceCliTracerTest, AnOpenMpiLauncherGetsMinusXForEachTracerVariable) {
  fs::create_directories(dir_ / "ompi");
  fs::create_directories(dir_ / "hydra");
  for (const fs::path& script : {dir_ / "ompi" / "mpirun", dir_ / "hydra" / "mpiexec.hydra"}) {
    std::ofstream(script) << "#!/bin/sh\necho \"$@\" > args.txt\n";
    fs::permissions(script, fs::perms::owner_all);
  }
  fs::create_symlink(dir_ / "hydra" / "mpiexec.hydra", dir_ / "hydra" / "mpiexec");
  CliResult r = trace({"--out", "t", "--", (dir_ / "ompi" / "mpirun").string(), "-np", "2",
                       "python", "x.py"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  const std::string args = slurp(dir_ / "args.txt");
  EXPECT_TRUE(args.starts_with("-x CUDA_INJECTION64_PATH ")) << args;
  for (const char* name : {"-x SSGD_TRACER_OUT ", "-x SSGD_TRACER_NVTX ",
                           "-x SSGD_TRACER_CLOCK_SERVER "}) {
    EXPECT_NE(args.find(name), std::string::npos) << name << " not in " << args;
  }
  EXPECT_TRUE(args.ends_with(" -np 2 python x.py\n")) << args;
  r = trace({"--out", "t", "--", (dir_ / "hydra" / "mpiexec").string(), "-np", "2", "python",
             "x.py"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_EQ(slurp(dir_ / "args.txt"), "-np 2 python x.py\n");
}

TEST_F(TraceCliTest, BadIterationsAreNamed) {
  for (const std::string bad : {"5", "a:b", "10:3", "4:4", ":7", "-1:3"}) {
    const CliResult r = trace({"--iterations", bad, "--", "/bin/true"});
    EXPECT_TRUE(r.exited && r.status == 2) << bad << "\n" << r;
    EXPECT_NE(r.err.find("'" + bad + "': field '--iterations'"), std::string::npos) << r;
  }
}

TEST_F(TraceCliTest, BadWindowsAreNamed) {
  for (const std::string bad : {"steps:5", "steps:9:3", "time:2:1", "time:a:b", "sometimes",
                                "steps:-1:4"}) {
    const CliResult r = trace({"--window", bad, "--", "/bin/true"});
    EXPECT_TRUE(r.exited && r.status == 2) << bad << "\n" << r;
    EXPECT_NE(r.err.find("'" + bad + "': field '--window'"), std::string::npos) << r;
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
