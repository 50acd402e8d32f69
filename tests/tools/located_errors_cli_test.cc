// Errors that name their cause (issue 33, point 5), run as real processes
// (SSGD_CLI) in a fresh folder per test:
// - a platform check made when the platform is built names the flag or the
//   file and line, the key and the value (--set platform.nvlink.pairs=0-99:2);
// - a missing file named by a scenario key (network.calibration,
//   scaling.second_profile, jobs[].profile) or by a sweep grid (input:,
//   scenario:) is named at that key, with its line;
// - untrusted text (a 20 MB path, a 100 kB flag value) is echoed bounded;
// - --log names the flag.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/cli_runner.h"
#include "tests/support/test_files.h"

namespace {

namespace fs = std::filesystem;
using ssgd::testing::write_file_bytes;
using ::testing::HasSubstr;

const fs::path kSource = fs::path(SSGD_SOURCE_DIR);
const std::string kResnet = (kSource / "traces/datasets/resnet50_v100.csv").string();
constexpr int kBadInput = 2;

class LocatedErrorsCliTest : public ssgd::testing::CliTempDirTest {
 protected:
  // Exit status 2, nothing on stdout, and stderr one "ssgd: error: " line
  // holding `message`.
  std::string refused(const std::vector<std::string>& args, const std::string& message) {
    const auto r = run_ssgd(SSGD_CLI, args);
    EXPECT_TRUE(r.exited) << r;
    EXPECT_EQ(r.status, kBadInput) << r;
    EXPECT_EQ(r.out, "") << r;
    EXPECT_THAT(r.err, HasSubstr("ssgd: error: " + message)) << r;
    return r.err;
  }
};

TEST_F(LocatedErrorsCliTest, AnNvlinkPairOutOfRangeNamesTheFlagAndTheKey) {
  const std::string message =
      "--set: field 'platform.nvlink.pairs': NVLink pair 0-99: GPU 99 is out of range: a node has "
      "8 GPUs (0..7) (value given: '0-99:2')";
  const std::vector<std::string> sets{"--set", "platform.preset=dgx1", "--set",
                                      "platform.nvlink.pairs=0-99:2"};
  const auto with = [&sets](std::vector<std::string> args) {
    args.insert(args.end(), sets.begin(), sets.end());
    return args;
  };
  refused(with({"simulate", kResnet, "-q"}), message);
  refused(with({"scale", kResnet, "--gpus", "8,16"}), message);
  refused(with({"collectives"}), message);
  // From a file: its line.
  write_file_bytes(dir_ / "s.yaml", "platform:\n  preset: dgx1\n  nvlink:\n    pairs: 0-1,1-99\n");
  refused({"simulate", kResnet, "-q", "--scenario", "s.yaml"},
          "s.yaml:4: field 'platform.nvlink.pairs': NVLink pair 1-99: GPU 99 is out of range");
  // Pairs on a platform whose NVLink is a switch were ignored; now refused.
  refused({"simulate", kResnet, "-q", "--set", "platform.preset=hgx_h100", "--set",
           "platform.nvlink.pairs=0-1"},
          "--set: field 'platform.nvlink.pairs': NVLink pairs join the GPUs of a mesh, but the "
          "NVLink topology is switch");
}

// Interference on with no factor of the class that applies: named at the
// model's key, from --set and from a file's line; where the model is not
// replayed (jobs on a shared fabric), likewise.
TEST_F(LocatedErrorsCliTest, InterferenceWithoutItsFactorsIsNamedAtTheModelKey) {
  refused({"simulate", kResnet, "-q", "--set", "cluster.nodes=2", "--set",
           "interference.model=contention", "--set", "interference.host.compute=0.2"},
          "--set: field 'interference.model': contention applies the gpu factors here (the input "
          "has no rate split and names no device: taken as a GPU's), and none of "
          "interference.gpu.* is set (only interference.host.* is)");
  write_file_bytes(dir_ / "i.yaml", "cluster:\n  nodes: 2\ninterference:\n  model: contention\n");
  refused({"simulate", kResnet, "-q", "--scenario", "i.yaml"},
          "i.yaml:4: field 'interference.model': contention applies the gpu factors here");
  write_file_bytes(dir_ / "j.yaml",
                   "cluster:\n  nodes: 3\nnetwork:\n  model: flow\ninterference:\n  model: contention\n  gpu:\n"
                   "    compute: 0.2\njobs:\n  - kind: traffic\n    nodes: 2\n    bytes: 1MiB\n");
  refused({"simulate", kResnet, "-q", "--scenario", "j.yaml"},
          "j.yaml:6: field 'interference.model': interference is not yet modelled for jobs "
          "sharing the fabric");
}

TEST_F(LocatedErrorsCliTest, AMissingFileThatAKeyNamesIsNamedAtTheKey) {
  fs::create_directories(dir_ / "sub");
  write_file_bytes(dir_ / "sub/cal.yaml", "network:\n  calibration: nope.yaml\n");
  refused({"simulate", kResnet, "-q", "--scenario", "sub/cal.yaml"},
          "sub/cal.yaml:2: field 'network.calibration': cannot read 'sub/nope.yaml': No such file "
          "or directory");
  refused({"simulate", kResnet, "-q", "--set", "network.calibration=nope.yaml"},
          "--set: field 'network.calibration': cannot read 'nope.yaml': No such file or directory");
  refused({"simulate", kResnet, "-q", "--set", "scaling.second_profile=nope.csv"},
          "--set: field 'scaling.second_profile': cannot read 'nope.csv'");
  write_file_bytes(dir_ / "sub/job.yaml",
                   "network:\n  model: flow\ncluster:\n  nodes: 2\njobs:\n  - kind: training\n"
                   "    nodes: 1\n    profile: other.csv\n");
  refused({"simulate", kResnet, "-q", "--scenario", "sub/job.yaml"},
          "sub/job.yaml:8: field 'jobs[0].profile': cannot read 'sub/other.csv': No such file or "
          "directory");
  // A job's profile that is there but bad: located in it, and the key named.
  write_file_bytes(dir_ / "sub/other.csv", "not,a,profile\n");
  refused({"simulate", kResnet, "-q", "--scenario", "sub/job.yaml"},
          "sub/other.csv:1: ");
  const auto r = run_ssgd(SSGD_CLI, {"simulate", kResnet, "-q", "--scenario", "sub/job.yaml"});
  EXPECT_THAT(r.err, HasSubstr("(the file jobs[0].profile names, at sub/job.yaml:8)")) << r;
}

TEST_F(LocatedErrorsCliTest, ASweepGridsMissingFilesAreNamedAtTheirLines) {
  write_file_bytes(dir_ / "g.yaml", "input: " + kResnet +
                                        "\nscenario: base.yaml\ngrid:\n  cluster.nodes: [1, 2]\n");
  refused({"sweep", "g.yaml", "-o", "o.jsonl", "-q"},
          "g.yaml:2: field 'scenario': cannot read 'base.yaml': No such file or directory");
  write_file_bytes(dir_ / "g2.yaml", "input: gone.csv\ngrid:\n  cluster.nodes: [1, 2]\n");
  refused({"sweep", "g2.yaml", "-o", "o.jsonl", "-q"},
          "g2.yaml:1: field 'input': cannot read 'gone.csv': No such file or directory");
  EXPECT_FALSE(fs::exists(dir_ / "o.jsonl"));
}

TEST_F(LocatedErrorsCliTest, LongPathsAndValuesAreEchoedBounded) {
  const std::string huge(20 * 1024 * 1024, 'a');
  write_file_bytes(dir_ / "g.yaml", "input: " + huge + "\ngrid:\n  cluster.nodes: [1, 2]\n");
  std::string err = refused({"sweep", "g.yaml", "-o", "o.jsonl", "-q"}, "g.yaml:1: field 'input': ");
  EXPECT_LT(err.size(), 400U);
  EXPECT_THAT(err, HasSubstr("... (20971520 bytes)': File name too long"));
  // Flag values: the argument's own limit is 128 kB; 100 kB of it.
  const std::string big(100'000, '9');
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"simulate", kResnet, "-q", "--set", "cluster.nodes=" + big},
           {"simulate", kResnet, "-q", "--set", big + "=1"},
           {"scale", kResnet, "--gpus", "1," + big},
           {"collectives", "--from", big + "x"},
           {"simulate", kResnet, "-q", "--set", "platform.nvlink.pairs=0-" + big}}) {
    err = refused(args, "");
    EXPECT_LT(err.size(), 1000U) << err.substr(0, 1000);
    EXPECT_THAT(err, HasSubstr(" bytes)"));
  }
  // CLI11's own messages too.
  const auto r = run_ssgd(SSGD_CLI, {"info", "x.ssgdt", big});
  EXPECT_EQ(r.status, kBadInput) << r;
  EXPECT_LT(r.err.size(), 1000U);
  EXPECT_THAT(r.err, HasSubstr(" bytes)\nRun with --help for more information."));
}

TEST_F(LocatedErrorsCliTest, ABadLogLevelNamesTheFlag) {
  refused({"--log", "sim=loud", "presets"},
          "'sim=loud': field '--log': unknown log level 'loud'");
}

}  // namespace
