// `ssgd import nsys` as a real process on SQLite exports written by
// tests/support/nsys_sqlite_writer.h: the summary it prints, a trace that
// `ssgd info` and `ssgd simulate` read, a folder of two ranks merged, and
// exit status 2 with the missing table named and no output.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/cli_runner.h"
#include "tests/support/nsys_sqlite_writer.h"
#include "tests/support/test_files.h"

namespace ssgd::testing {
namespace {

using ::testing::HasSubstr;

class NsysCliTest : public TempDirTest {
 protected:
  CliResult ssgd(const std::vector<std::string>& args) {
    return run_cli(SSGD_CLI, args, SSGD_SOURCE_DIR, dir_);
  }
};

TEST_F(NsysCliTest, ImportsWithASummaryThatInfoAndSimulateRead) {
  write_nsys_export(dir_ / "rank0.sqlite", nsys_two_layer_training());
  const auto out = (dir_ / "rank0.ssgdt").string();
  const auto r = ssgd({"import", "nsys", (dir_ / "rank0.sqlite").string(), "-o", out});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_THAT(r.out,
              HasSubstr("rank         0 (ssgd/rank mark), world size 2, host node0, 1 GPU(s)"));
  EXPECT_THAT(r.out,
              HasSubstr("clock        REALTIME (TARGET_INFO_SESSION_START_TIME.utcEpochNs)"));
  EXPECT_THAT(r.out, HasSubstr("written      42 events: 10 kernels, 2 memcpys, 2 memsets, 16 API "
                               "calls, 2 collectives, 10 marker ranges"));
  EXPECT_THAT(r.out, HasSubstr("iterations   2 from iteration/<N>"));
  EXPECT_THAT(r.out, HasSubstr("layers       2 layers from NVTX marks"));
  EXPECT_THAT(r.out, HasSubstr("collectives  2 from NCCL kernels: 2 launched inside an NCCL NVTX "
                               "range, 2 sized from its payload, 0 of unknown size"));
  const auto info = ssgd({"info", out});
  EXPECT_EQ(info.status, 0) << info;
  const auto sim = ssgd({"simulate", out, "-q", "--log", "error"});
  EXPECT_EQ(sim.status, 0) << sim;
}

TEST_F(NsysCliTest, AFolderOfTwoRanksIsMerged) {
  const auto ranks = dir_ / "ranks";
  std::filesystem::create_directories(ranks);
  for (int rank : {0, 1}) {
    NsysTrainingOptions o;
    o.rank = rank;
    write_nsys_export(ranks / ("rank" + std::to_string(rank) + ".sqlite"),
                      nsys_two_layer_training(o));
  }
  const auto out = (dir_ / "run.ssgdt").string();
  const auto r = ssgd({"import", "nsys", ranks.string(), "-o", out});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("rank1.sqlite: rank 1 (ssgd/rank mark)"));
  EXPECT_THAT(r.out, HasSubstr("merged 2 rank(s) from 1 host(s)"));
  const auto info = ssgd({"info", out});
  EXPECT_EQ(info.status, 0) << info;
  EXPECT_THAT(info.out, HasSubstr("2"));
  // Nothing left of the scratch folder.
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    EXPECT_FALSE(e.path().filename().string().starts_with(".ssgd-import")) << e.path();
  }
  const auto twice = ssgd({"import", "nsys", ranks.string(), "-o", out, "--rank", "1"});
  EXPECT_EQ(twice.status, 2) << twice;
}

TEST_F(NsysCliTest, AMissingTableExitsWithBadInputAndWritesNothing) {
  auto spec = nsys_two_layer_training();
  spec.omit_tables.insert("StringIds");
  write_nsys_export(dir_ / "bad.sqlite", spec);
  const auto r =
      ssgd({"import", "nsys", (dir_ / "bad.sqlite").string(), "-o", (dir_ / "bad.ssgdt").string()});
  EXPECT_EQ(r.status, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("bad.sqlite: field 'StringIds'"));
  EXPECT_THAT(r.err, HasSubstr("no table StringIds"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "bad.ssgdt"));
}

}  // namespace
}  // namespace ssgd::testing
