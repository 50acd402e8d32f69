// `ssgd import kineto` as a real process: the summary it prints, a trace
// that `ssgd simulate` replays, and the exit status and message of a
// truncated file (no output left behind).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/cli_runner.h"
#include "tests/support/kineto_json_writer.h"
#include "tests/support/test_files.h"

namespace ssgd::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class KinetoCliTest : public TempDirTest {
 protected:
  CliResult ssgd(const std::vector<std::string>& args) {
    return run_cli(SSGD_CLI, args, SSGD_SOURCE_DIR, dir_);
  }
};

TEST_F(KinetoCliTest, ImportPrintsASummaryAndSimulateReplaysTheTrace) {
  write_two_step_training(dir_ / "rank1.pt.trace.json");
  const auto out = (dir_ / "rank1.ssgdt").string();
  const auto r = ssgd({"import", "kineto", (dir_ / "rank1.pt.trace.json").string(), "-o", out});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("rank         1 (distributedInfo.rank), world size 2, 1 GPU(s)"));
  EXPECT_THAT(r.out, HasSubstr("46 events: 10 kernels, 2 memcpys, 2 memsets, 18 API calls, "
                               "4 collectives, 10 marker ranges"));
  EXPECT_THAT(r.out, HasSubstr("cat cpu_op (not a mark)"));
  EXPECT_THAT(r.out, HasSubstr("layers       2 layers from marks (auto: the file has forward/backward "
                               "annotations)"));
  // The trace's job (rank 1 of 2, on a host of one GPU as the file shows it)
  // unless the scenario names a cluster, and said.
  const auto simulated = (dir_ / "simulated.ssgdt").string();
  const auto sim = ssgd({"simulate", out, "--trace", simulated});
  EXPECT_EQ(sim.status, 0) << sim;
  EXPECT_THAT(sim.err, HasSubstr("cluster: the trace's job, 2 ranks, on 2 node(s) x 1 GPU(s)"));
  EXPECT_THAT(sim.out, HasSubstr("cluster: 2 node(s) x 1 GPU(s) = 2 workers"));
  EXPECT_THAT(sim.err, Not(HasSubstr("one worker")));
  // The simulated trace is of the job as run: its provenance says so.
  const auto info = ssgd({"info", simulated});
  EXPECT_EQ(info.status, 0) << info;
  EXPECT_THAT(info.out, HasSubstr("under 2 node(s) x 1 GPU(s)"));
  // One worker asked for: its measured collectives are not replayed, and the
  // warning says how to replay the job.
  const auto one =
      ssgd({"simulate", out, "-q", "--log", "warn", "--set", "cluster.gpus_per_node=1"});
  EXPECT_EQ(one.status, 0) << one;
  EXPECT_THAT(one.err, HasSubstr("one worker, but the trace is of a job of 2 ranks"));
  EXPECT_THAT(one.err, Not(HasSubstr("the trace's job")));
}

// A folder of one profiler file per rank: each imported at its own rank
// (the file's, else the number in its name) and all merged into one trace.
TEST_F(KinetoCliTest, AFolderOfRanksIsImportedAndMerged) {
  std::filesystem::create_directories(dir_ / "run");
  KinetoJsonOptions r0;
  r0.rank = 0;
  write_two_step_training(dir_ / "run/rank0.pt.trace.json", r0);
  write_two_step_training(dir_ / "run/rank1.pt.trace.json");  // rank 1 by default
  const auto out = (dir_ / "all.ssgdt").string();
  const auto r = ssgd({"import", "pytorch", (dir_ / "run").string(), "-o", out});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("rank0.pt.trace.json: rank 0 (distributedInfo.rank)"));
  EXPECT_THAT(r.out, HasSubstr("merged 2 rank(s) from 1 host(s)"));
  const auto info = ssgd({"info", out});
  EXPECT_THAT(info.out, HasSubstr("events per rank  0: "));
  EXPECT_THAT(info.out, HasSubstr(", 1: "));
  // No scratch folder is left beside the output.
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    EXPECT_FALSE(e.path().filename().string().starts_with(".ssgd-import")) << e.path();
  }
  // Two files of one rank: refused, nothing written.
  write_two_step_training(dir_ / "run/again.json");
  const auto twice = ssgd({"import", "pytorch", (dir_ / "run").string(), "-o",
                           (dir_ / "twice.ssgdt").string()});
  EXPECT_EQ(twice.status, 2) << twice;
  EXPECT_THAT(twice.err, HasSubstr("rank 1 again"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "twice.ssgdt"));
  // Files that do not say their rank take the number in their names (read
  // once, said as 'file name'); with no number either, one is refused.
  std::filesystem::create_directories(dir_ / "anon");
  KinetoJsonOptions rankless;
  rankless.with_distributed_info = false;
  write_two_step_training(dir_ / "anon/worker0.json", rankless);
  write_two_step_training(dir_ / "anon/worker1.json", rankless);
  const auto named = ssgd({"import", "pytorch", (dir_ / "anon").string(), "-o",
                           (dir_ / "named.ssgdt").string()});
  ASSERT_EQ(named.status, 0) << named;
  EXPECT_THAT(named.out, HasSubstr("worker1.json: rank 1 (file name)"));
  EXPECT_THAT(named.out, HasSubstr("merged 2 rank(s)"));
  write_two_step_training(dir_ / "anon/last.json", rankless);
  const auto nameless = ssgd({"import", "pytorch", (dir_ / "anon").string(), "-o",
                              (dir_ / "nameless.ssgdt").string()});
  EXPECT_EQ(nameless.status, 2) << nameless;
  EXPECT_THAT(nameless.err, HasSubstr("last.json: field 'distributedInfo.rank'"));
  EXPECT_THAT(nameless.err, HasSubstr("its name holds no number"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "nameless.ssgdt"));
  // Ranks the merge refuses together are named by their input files, not
  // by the scratch files they were imported into.
  std::filesystem::remove(dir_ / "anon/last.json");
  write_two_step_training(dir_ / "anon/worker0.json", r0);  // says world size 2
  const auto mixed = ssgd({"import", "pytorch", (dir_ / "anon").string(), "-o",
                           (dir_ / "mixed.ssgdt").string()});
  EXPECT_EQ(mixed.status, 2) << mixed;
  EXPECT_THAT(mixed.err, HasSubstr("worker1.json"));
  EXPECT_THAT(mixed.err, Not(HasSubstr(".ssgd-import")));
  EXPECT_THAT(mixed.err, Not(HasSubstr("rank-0.ssgdt")));
  // --rank names one rank: not for a folder; an empty folder is refused.
  EXPECT_EQ(ssgd({"import", "pytorch", (dir_ / "run").string(), "-o", out, "--rank", "0"}).status, 2);
  std::filesystem::create_directories(dir_ / "empty");
  const auto empty = ssgd({"import", "pytorch", (dir_ / "empty").string(), "-o",
                           (dir_ / "e.ssgdt").string()});
  EXPECT_EQ(empty.status, 2) << empty;
  EXPECT_THAT(empty.err, HasSubstr("a folder without PyTorch profiler files"));
}

TEST_F(KinetoCliTest, RankFlagOverrides) {
  write_two_step_training(dir_ / "t.json");
  const auto r = ssgd({"import", "kineto", (dir_ / "t.json").string(), "-o",
                       (dir_ / "t.ssgdt").string(), "--rank", "0"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("rank         0 (--rank)"));
  // The file says a world of 2: rank 5 cannot be one of its ranks.
  const auto bad = ssgd({"import", "kineto", (dir_ / "t.json").string(), "-o",
                         (dir_ / "u.ssgdt").string(), "--rank", "5"});
  EXPECT_EQ(bad.status, 2) << bad;
  EXPECT_THAT(bad.err, HasSubstr("--rank: rank 5 (from --rank) is not a rank of the world of 2"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "u.ssgdt"));
}

// A trace with default profiler settings: auto derives layers from the
// operators, and the simulator replays the result; --layers marks finds no
// layers there.
TEST_F(KinetoCliTest, LayersFlagPicksTheSourceAndTheSummarySaysWhich) {
  write_plain_training(dir_ / "plain.json");
  const auto out = (dir_ / "plain.ssgdt").string();
  auto r = ssgd({"import", "kineto", (dir_ / "plain.json").string(), "-o", out});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("layers       5 layers from ops (auto: no forward/backward "
                               "annotations or nn.Module ranges): 10 forward and 12 backward ranges"));
  EXPECT_THAT(r.out, HasSubstr("4  backward op(s) without a sequence number (AccumulateGrad)"));
  const auto sim = ssgd({"simulate", out, "-q", "--log", "warn"});
  EXPECT_EQ(sim.status, 0) << sim;
  r = ssgd({"import", "kineto", (dir_ / "plain.json").string(), "-o", out, "--layers", "ops"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("layers       5 layers from ops: 10 forward"));
  r = ssgd({"import", "kineto", (dir_ / "plain.json").string(), "-o", out, "--layers", "marks"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("layers       0 layers from marks\n"));
  EXPECT_THAT(r.err, HasSubstr("no layers found with --layers marks"));
}

TEST_F(KinetoCliTest, BadLayersValueIsABadInput) {
  write_plain_training(dir_ / "plain.json");
  const auto r = ssgd({"import", "kineto", (dir_ / "plain.json").string(), "-o",
                       (dir_ / "plain.ssgdt").string(), "--layers", "module"});
  EXPECT_EQ(r.status, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("--layers"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "plain.ssgdt"));
}

TEST_F(KinetoCliTest, TruncatedFileExitsWithBadInputAndLeavesNoOutput) {
  write_two_step_training(dir_ / "full.json");
  const std::string full = read_file_bytes(dir_ / "full.json");
  write_file_bytes(dir_ / "cut.json", full.substr(0, full.size() - 300));
  const auto r = ssgd({"import", "kineto", (dir_ / "cut.json").string(), "-o",
                       (dir_ / "cut.ssgdt").string()});
  EXPECT_EQ(r.status, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("cut.json"));
  EXPECT_THAT(r.err, HasSubstr("truncated"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "cut.ssgdt"));
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    EXPECT_THAT(e.path().filename().string(), ::testing::Not(HasSubstr(".tmp")));
  }
}

}  // namespace
}  // namespace ssgd::testing
