// What every `ssgd` command promises about paths and sizes (README.md,
// "Command-line conventions"; docs/performance.md, "Estimating a run"), run
// as real processes (SSGD_CLI) in a fresh folder per test:
// - an input that is not a regular file (a FIFO, a folder, /dev/zero) is
//   refused, naming it and its flag, and never blocks;
// - every output is checked before any work, the same way in every command:
//   a missing folder and an output that is one of the inputs are exit 2
//   naming the flag;
// - a failed write (the file-size limit standing in for a full disk) names
//   the output and its flag, and leaves no file behind;
// - a run whose estimate does not fit in the available memory is refused,
//   naming the estimate and the key or flag that drives it, unless
//   --allow-large;
// - messages blame what is at fault: the measurement's line for a rank count
//   out of range, --from for a range end out of the key's range, the
//   profile's grad_bytes for gradients that cannot be added up.
//
// Each run is a child with an alarm: a command that blocks (on a FIFO) dies
// of SIGALRM after kTimeoutSeconds and fails its test instead of hanging it.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/cli_runner.h"
#include "tests/support/rank_files.h"
#include "tests/support/test_files.h"

namespace {

namespace fs = std::filesystem;
namespace v1 = ssgd::trace::v1;
using ssgd::testing::CliResult;
using ssgd::testing::read_file_bytes;
using ssgd::testing::write_file_bytes;
using ::testing::HasSubstr;

const fs::path kSource = fs::path(SSGD_SOURCE_DIR);
const std::string kMarked = (kSource / "tests/data/traces/marked.txtpb").string();
const std::string kResnet = (kSource / "traces/datasets/resnet50_v100.csv").string();
constexpr int kBadInput = 2;
constexpr int kFailure = 1;
constexpr unsigned kTimeoutSeconds = 60;

// How a child runs, beyond its arguments.
struct RunLimits {
  std::optional<rlim_t> file_size;      // RLIMIT_FSIZE in bytes, with SIGXFSZ ignored: EFBIG
  std::optional<rlim_t> address_space;  // RLIMIT_AS in bytes: allocations beyond fail
  std::vector<std::pair<std::string, std::string>> env;  // set in the child only
};

const char* kFifoMessage = "is a FIFO (named pipe), not a regular file";

class ReliabilityCliTest : public ssgd::testing::TempDirTest {
 protected:
  CliResult ssgd(const std::vector<std::string>& args, const RunLimits& limits = {}) {
    const fs::path scratch = dir_.string() + "_out";
    fs::create_directories(scratch);
    CliResult r = ssgd::testing::run_cli(SSGD_CLI, args, dir_, scratch, [&limits] {
      for (const auto& [name, value] : limits.env) ::setenv(name.c_str(), value.c_str(), 1);
      if (limits.file_size) {
        // Ignored, SIGXFSZ makes write() fail with EFBIG, as a full disk
        // makes it fail with ENOSPC; exec keeps both.
        std::signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{*limits.file_size, *limits.file_size};
        if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(125);
      }
      if (limits.address_space) {
        const rlimit limit{*limits.address_space, *limits.address_space};
        if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(125);
      }
      ::alarm(kTimeoutSeconds);  // kept across exec
    });
    if (!r.exited && r.signal == 0) ADD_FAILURE() << "cannot fork";
    fs::remove_all(scratch);
    return r;
  }
  CliResult ok(const std::vector<std::string>& args, const RunLimits& limits = {}) {
    auto r = ssgd(args, limits);
    EXPECT_TRUE(r.exited && r.status == 0) << r;
    return r;
  }
  // Exit status `status`, a message, nothing on stdout, and `message` in it.
  CliResult refused(const std::vector<std::string>& args, const std::string& message,
                    const RunLimits& limits = {}, int status = kBadInput) {
    auto r = ssgd(args, limits);
    EXPECT_TRUE(r.exited) << "args: " << ::testing::PrintToString(args) << "\n" << r;
    EXPECT_EQ(r.status, status) << "args: " << ::testing::PrintToString(args) << "\n" << r;
    EXPECT_EQ(r.out, "") << r;
    EXPECT_THAT(r.err, HasSubstr("ssgd: error: ")) << r;
    EXPECT_THAT(r.err, HasSubstr(message)) << "args: " << ::testing::PrintToString(args);
    return r;
  }
  // The folder's files, by name, but for those the test made (`keep`).
  std::vector<std::string> files_except(const std::vector<std::string>& keep) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) {
      const std::string name = e.path().filename().string();
      if (std::find(keep.begin(), keep.end(), name) == keep.end()) out.push_back(name);
    }
    return out;
  }
  void make_fifo(const std::string& name) {
    ASSERT_EQ(::mkfifo((dir_ / name).c_str(), 0644), 0) << name;
  }
};

// ---------------------------------------------------------------- inputs

TEST_F(ReliabilityCliTest, AFifoAsInputIsRefusedByEveryCommandWithoutBlocking) {
  make_fifo("p.fifo");
  const std::string f = "p.fifo";
  const auto expect = [&](const std::vector<std::string>& args, const std::string& flag) {
    refused(args, "p.fifo: field '" + flag + "': " + kFifoMessage);
  };
  expect({"simulate", f}, "INPUT");
  expect({"simulate", kResnet, "--scenario", f}, "--scenario");
  expect({"scale", f, "--gpus", "1,2"}, "INPUT");
  expect({"optimize", f, "--param", "iterations", "--values", "2,3"}, "INPUT");
  expect({"info", f}, "FILE");
  expect({"pack", f, "-o", "x.ssgdt"}, "TEXT");
  expect({"import", "bcaffe", f, "-o", "x.csv"}, "LOG");
  expect({"import", "pytorch", f, "-o", "x.ssgdt"}, "FILE");
  expect({"import", "kineto", f, "-o", "x.ssgdt"}, "FILE");
  expect({"export", "perfetto", f, "-o", "x.json"}, "TRACE");
  expect({"diff", f, f}, "MEASURED");
  expect({"calibrate", f}, "INPUT");
  // A file a scenario key names, by the key.
  refused({"simulate", kResnet, "-q", "--set", "network.calibration=" + (dir_ / f).string()},
          "field 'network.calibration': " + std::string(kFifoMessage));
  // A rank file of merge's folder.
  fs::create_directories(dir_ / "ranks");
  make_fifo("ranks/rank-0.ssgdt");
  refused({"merge", "ranks", "-o", "m.ssgdt"},
          "ranks/rank-0.ssgdt: field 'DIR': " + std::string(kFifoMessage));
  EXPECT_EQ(files_except({"p.fifo", "ranks"}), std::vector<std::string>{});
}

TEST_F(ReliabilityCliTest, AFolderOrADeviceAsInputIsRefused) {
  fs::create_directories(dir_ / "folder");
  refused({"simulate", "folder"}, "folder: field 'INPUT': is a folder, not a regular file");
  refused({"pack", "folder", "-o", "x.ssgdt"}, "folder: field 'TEXT': is a folder");
  refused({"info", "/dev/zero"}, "/dev/zero: field 'FILE': is a character device");
  refused({"calibrate", "/dev/zero"}, "/dev/zero: field 'INPUT': is a character device");
  refused({"simulate", kResnet, "--scenario", "/dev/null"},
          "/dev/null: field '--scenario': is a character device");
}

// ---------------------------------------------------------------- outputs

TEST_F(ReliabilityCliTest, AnOutputInAMissingFolderIsExitTwoNamingTheFlagInEveryCommand) {
  write_file_bytes(dir_ / "in.txt", "not read: the outputs are checked first\n");
  const std::string missing = "no/such/folder/out";
  const auto expect = [&](std::vector<std::string> args, const std::string& flag) {
    args.push_back(missing);
    refused(args, missing + ": field '" + flag +
                      "': cannot write here: folder 'no/such/folder' "
                      "does not exist");
  };
  expect({"pack", "in.txt", "-o"}, "--output");
  expect({"import", "bcaffe", "in.txt", "-o"}, "--output");
  expect({"import", "pytorch", "in.txt", "-o"}, "--output");
  expect({"import", "kineto", "in.txt", "-o"}, "--output");
  expect({"export", "perfetto", "in.txt", "-o"}, "--output");
  expect({"merge", ".", "-o"}, "--output");
  expect({"calibrate", "in.txt", "-o"}, "--output");
  expect({"diff", "in.txt", "in.txt", "--report"}, "--report");
  expect({"simulate", "in.txt", "--report"}, "--report");
  expect({"simulate", "in.txt", "--timeline"}, "--timeline");
  expect({"simulate", "in.txt", "--trace"}, "--trace");
  expect({"scale", "in.txt", "--gpus", "1,2", "--report"}, "--report");
  expect({"optimize", "in.txt", "--param", "iterations", "--values", "2", "--report"}, "--report");
  expect({"dataset", "verify", ".", "--report"}, "--report");
  EXPECT_EQ(files_except({"in.txt"}), std::vector<std::string>{});
}

TEST_F(ReliabilityCliTest, AnOutputThatIsTheInputIsRefusedInPackAndImport) {
  write_file_bytes(dir_ / "in.txt", "kept as it is\n");
  const std::string message = "in.txt: field '--output': is one of the command's inputs";
  refused({"pack", "in.txt", "-o", "in.txt"}, message);
  refused({"import", "bcaffe", "in.txt", "-o", "in.txt"}, message);
  refused({"import", "pytorch", "in.txt", "-o", "./in.txt"}, "field '--output': is one of the");
  EXPECT_EQ(read_file_bytes(dir_ / "in.txt"), "kept as it is\n");
}

TEST_F(ReliabilityCliTest, AFailedWriteNamesTheOutputAndItsFlagAndLeavesNothing) {
  // A simulated trace big enough to exceed the limit once exported.
  ok({"simulate", kResnet, "-q", "--set", "cluster.nodes=2", "--trace", "sim.ssgdt"});
  ok({"pack", kMarked, "-o", "marked.ssgdt"});
  const RunLimits full{64 * 1024, std::nullopt, {}};
  const std::string too_large = "cannot write: File too large";
  refused({"export", "perfetto", "sim.ssgdt", "-o", "out.json"},
          "out.json: field '--output': " + too_large, full, kFailure);
  refused({"export", "perfetto", "sim.ssgdt", "-o", "out.json.gz"},
          "out.json.gz: field '--output': " + too_large, full, kFailure);
  refused({"simulate", kResnet, "-q", "--set", "cluster.nodes=2", "--timeline", "tl.json"},
          "tl.json: field '--timeline': " + too_large, full, kFailure);
  refused({"simulate", kResnet, "-q", "--set", "cluster.nodes=2", "--report", "r.json",
           "--timeline", "tl.json"},
          "tl.json: field '--timeline': " + too_large, full, kFailure);
  refused({"simulate", kResnet, "-q", "--set", "cluster.nodes=64", "--trace", "t.ssgdt"},
          "t.ssgdt: field '--trace': " + too_large, full, kFailure);
  // The report (33 kB) is complete and renamed before the trace fails: it
  // is removed again.
  refused({"simulate", kResnet, "-q", "--set", "cluster.nodes=64", "--report", "r.json", "--trace",
           "t.ssgdt"},
          "t.ssgdt: field '--trace': " + too_large, {40 * 1024, std::nullopt, {}}, kFailure);
  EXPECT_FALSE(fs::exists(dir_ / "r.json"));
  const RunLimits tiny{512, std::nullopt, {}};
  refused({"pack", kMarked, "-o", "m.ssgdt"}, "m.ssgdt: field '--output': " + too_large, tiny,
          kFailure);
  refused({"simulate", kResnet, "-q", "--report", "r.json"},
          "r.json: field '--report': " + too_large, tiny, kFailure);
  // merge: one rank's capture, merged into a file over the limit.
  fs::create_directories(dir_ / "cap");
  ssgd::testing::RankFileSpec rank{0, 1, "a", v1::ClockDomain::MONOTONIC_RAW, std::nullopt, {}};
  for (int i = 0; i < 200; ++i) {
    rank.events.push_back(ssgd::testing::kernel_event(0, 1000 * i, 1000 * i + 500));
  }
  ssgd::testing::write_rank_file(dir_ / "cap", rank);
  refused({"merge", "cap", "-o", "run.ssgdt"}, "run.ssgdt: field '--output': " + too_large, tiny,
          kFailure);
  // No output and no temporary file is left.
  EXPECT_EQ(files_except({"sim.ssgdt", "marked.ssgdt", "cap"}), std::vector<std::string>{});
  EXPECT_EQ(fs::directory_iterator(dir_ / "cap")->path().filename(), "rank-0.ssgdt");
}

// ---------------------------------------------------------------- bounds

TEST_F(ReliabilityCliTest, ARunThatCannotFitIsRefusedNamingTheEstimateAndTheKey) {
  // The available memory is fixed, so that the test does not depend on the
  // machine; every run below needs hundreds of GB.
  const RunLimits machine{std::nullopt, std::nullopt, {{"SSGD_AVAILABLE_MEMORY", "64GiB"}}};
  const std::string more_than = "more than the 64.0 GiB this machine has available";
  auto r = refused({"simulate", kResnet, "--set", "cluster.nodes=1048576", "--set",
                    "cluster.gpus_per_node=1024"},
                   "--set: field 'cluster.nodes': this run needs about", machine);
  EXPECT_THAT(r.err, HasSubstr(more_than));
  EXPECT_THAT(r.err, HasSubstr("1048576 node(s) x 1024 GPU(s)"));
  EXPECT_THAT(r.err, HasSubstr("or give --allow-large to run anyway (value given: '1048576')"));
  // Built an iteration window at a time, a million ranks unfolded need about
  // 52 GiB: refused where 16 GiB are available.
  r = refused({"simulate", kResnet, "--set", "cluster.nodes=1048576", "--no-fold"},
              "--set: field 'cluster.nodes': this run needs about",
              {std::nullopt, std::nullopt, {{"SSGD_AVAILABLE_MEMORY", "16GiB"}}});
  EXPECT_THAT(r.err, HasSubstr("1048576 rank(s) built"));
  EXPECT_THAT(r.err, HasSubstr("without --no-fold"));
  r = refused({"scale", kResnet, "--gpus", "1,1073741824"},
              "'1,1073741824': field '--gpus': 1073741824 GPUs: this run needs about", machine);
  EXPECT_THAT(r.err, HasSubstr("leave out counts this large, or give --allow-large"));
  refused({"scale", kResnet, "--gpus", "1,16777216"},
          "field '--gpus': 16777216 GPUs: this run needs about 26.",
          {std::nullopt, std::nullopt, {{"SSGD_AVAILABLE_MEMORY", "16GiB"}}});
  // optimize: every candidate before the first runs, named by its flag; the
  // scenario as given by its key.
  r = refused({"optimize", kResnet, "--param", "cluster.nodes", "--values", "2,1048576", "--set",
               "cluster.gpus_per_node=1024"},
              "'2,1048576': field '--values': cluster.nodes=1048576: this run needs about",
              machine);
  EXPECT_THAT(r.err, HasSubstr("leave out values this large, or give --allow-large"));
  refused({"optimize", kResnet, "--param", "iterations", "--values", "2,3", "--set",
           "cluster.nodes=1048576", "--set", "cluster.gpus_per_node=1024"},
          "--set: field 'cluster.nodes': this run needs about", machine);
}

// Sanitizers reserve more address space than any limit leaves, and report
// a failed allocation instead of throwing std::bad_alloc.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SSGD_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || \
    __has_feature(thread_sanitizer)
#define SSGD_SANITIZED 1
#endif
#endif

TEST_F(ReliabilityCliTest, RunningOutOfMemoryAllTheSameNamesWhatWasBeingBuilt) {
#ifdef SSGD_SANITIZED
  GTEST_SKIP() << "address-space limits do not work under a sanitizer";
#endif
  // --allow-large lets through a run the estimate puts at 1.7 GiB; 600 MB of
  // address space cannot hold it.
  const RunLimits small{std::nullopt, 600'000'000, {}};
  const auto r =
      refused({"simulate", kResnet, "-q", "--set", "cluster.nodes=1048576", "--allow-large"},
              "--set: field 'cluster.nodes': out of memory while building the "
              "platform and the task graph of '" + kResnet + "' (1048576 node(s) x 1 GPU(s)",
              small);
  EXPECT_THAT(r.err, HasSubstr("cluster.nodes drives it (value given: '1048576')"));
}

TEST_F(ReliabilityCliTest, JobsOnASharedFabricAreEstimatedTogether) {
  const RunLimits machine{std::nullopt, std::nullopt, {{"SSGD_AVAILABLE_MEMORY", "4GiB"}}};
  const auto r = refused(
      {"simulate", kResnet, "-q", "--scenario", (kSource / "scenarios/shared_fabric.yaml").string(),
       "--set", "jobs.0.iterations=1000000"},
      "field 'jobs.0.iterations': this run needs about", machine);
  EXPECT_THAT(r.err, HasSubstr("and 2 other job(s) on the shared fabric"));
  EXPECT_THAT(r.err, HasSubstr("jobs.0.iterations drives it: lower it, or give --allow-large"));
}

TEST_F(ReliabilityCliTest, AllowLargeRunsWhatTheEstimateRefuses) {
  const RunLimits small{std::nullopt, std::nullopt, {{"SSGD_AVAILABLE_MEMORY", "1MiB"}}};
  refused({"simulate", kResnet, "-q"}, "the scenario: field 'iterations': this run needs about ",
          small);
  ok({"simulate", kResnet, "-q", "--allow-large"}, small);
  refused({"scale", kResnet, "--gpus", "1,2"}, "field '--gpus': 1 GPUs: this run needs", small);
  ok({"scale", kResnet, "--gpus", "1,2", "--allow-large"}, small);
  ok({"optimize", kResnet, "--param", "iterations", "--values", "2,3", "--allow-large"}, small);
  refused({"simulate", kResnet, "-q"}, "environment: field 'SSGD_AVAILABLE_MEMORY': 'lots'",
          {std::nullopt, std::nullopt, {{"SSGD_AVAILABLE_MEMORY", "lots"}}});
}

// ---------------------------------------------------------------- messages

TEST_F(ReliabilityCliTest, CalibrateNamesTheLineOfARankCountOutOfRange) {
  write_file_bytes(dir_ / "big.log",
                   "# OSU MPI Allreduce Latency Test v5.4.0\n# Size       Avg Latency(us)\n"
                   "2147483648,1024 10.5\n");
  refused({"calibrate", "big.log"},
          "big.log:3: field 'nodes': 2147483648 node(s): more than the 1073741824 ranks");
  write_file_bytes(dir_ / "ok.log",
                   "# OSU MPI Allreduce Latency Test v5.4.0\n# Size       Avg Latency(us)\n"
                   "1024 10.5\n");
  refused({"calibrate", "ok.log", "--ranks", "2147483648"},
          "'2147483648': field '--ranks': must be from 2 to 1073741824");
}

TEST_F(ReliabilityCliTest, OptimizeNamesTheFlagThatGaveACandidateOutOfRange) {
  const std::vector<std::string> base{"optimize",          kResnet, "--param",
                                      "policy.bucket_cap", "--set", "policy.overlap=ddp"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> args = base;
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  refused(with({"--from", "0B", "--to", "1MiB"}),
          "'0B': field '--from': policy.bucket_cap=0B: must be greater than zero");
  refused(with({"--values", "1MiB,0B"}),
          "'1MiB,0B': field '--values': policy.bucket_cap=0B: must be greater than zero");
  refused({"optimize", kResnet, "--param", "iterations", "--from", "1", "--to", "100000000000"},
          "'100000000000': field '--to': iterations=100000000000: must be between 1 and");
}

TEST_F(ReliabilityCliTest, GradientsThatCannotBeAddedUpNameTheProfile) {
  write_file_bytes(dir_ / "huge.csv",
                   "layer,name,forward_ns,backward_ns,grad_bytes\n"
                   "0,a,1000,1000,4611686018427387904\n"
                   "1,b,1000,1000,4611686018427387904\n");
  // The profile's reader bounds each layer and the sum (traces/layer_profile.h),
  // so a merging policy never adds what cannot fit.
  for (const std::string policy : {"mgwfbp", "horovod", "ddp"}) {
    refused({"simulate", "huge.csv", "-q", "--set", "cluster.nodes=2", "--set",
             "policy.overlap=" + policy},
            "huge.csv:2: field 'grad_bytes': size 4611686018427387904 exceeds 2^50 bytes (1 PiB)");
  }
  write_file_bytes(dir_ / "huge.csv",
                   "layer,name,forward_ns,backward_ns,grad_bytes\n"
                   "0,a,1000,1000,1125899906842624\n"
                   "1,b,1000,1000,1\n");
  refused({"simulate", "huge.csv", "-q", "--set", "cluster.nodes=2"},
          "huge.csv:3: field 'grad_bytes': the gradients of the layers so far exceed 2^50 bytes");
}

// Output ssgd can read back: a file name that is not UTF-8 reaches the
// report and the timeline as U+FFFD, and both stay valid JSON (issue 15).
TEST_F(ReliabilityCliTest, AFileNameThatIsNotUtf8GivesValidJsonOutput) {
  const std::string odd = "p\xFF.csv";
  fs::copy_file(kResnet, dir_ / odd);
  ok({"simulate", odd, "-q", "--set", "cluster.nodes=2", "--report", "r.json", "--timeline",
      "tl.json"});
  const std::string report = read_file_bytes(dir_ / "r.json");
  EXPECT_THAT(report, HasSubstr("p\xEF\xBF\xBD.csv"));
  EXPECT_EQ(report.find("\xFF"), std::string::npos);
  EXPECT_EQ(read_file_bytes(dir_ / "tl.json").find("\xFF"), std::string::npos);
  // A text trace with such a name is refused where it is read.
  write_file_bytes(dir_ / "bad.txtpb",
                   "metadata { tool: \"t\" }\nevents { kernel { name: \"k\\377\" } }\n");
  refused({"pack", "bad.txtpb", "-o", "bad.ssgdt"},
          "bad.txtpb:2: record 0: field 'events[0].kernel.name': name is not valid UTF-8");
  EXPECT_FALSE(fs::exists(dir_ / "bad.ssgdt"));
}

}  // namespace
