// `ssgd merge`, run as a real process (SSGD_CLI) on synthetic rank files:
// a good merge, a refused one (exit 2, message naming hosts and files, no
// output), the same with --force (exit 0, a warning, the output), and bad
// folders and flags.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/cli_runner.h"
#include "tests/support/rank_files.h"
#include "tests/support/test_files.h"
#include "traces/trace_reader.h"

namespace {

namespace fs = std::filesystem;
namespace v1 = ssgd::trace::v1;
using ssgd::testing::kernel_event;
using ssgd::testing::write_rank_file;
using ::testing::HasSubstr;

constexpr int kBadInput = 2;

class MergeCliTest : public ssgd::testing::CliTempDirTest {
 protected:
  ssgd::testing::CliResult ssgd(const std::vector<std::string>& args) {
    return run_ssgd(SSGD_CLI, args);
  }
  void two_hosts(bool calibrated) {
    fs::create_directories(dir_ / "cap");
    write_rank_file(dir_ / "cap", {0, 2, "node1", v1::ClockDomain::MONOTONIC_RAW, std::nullopt,
                                   {kernel_event(0, 100, 200)}});
    std::optional<v1::ClockCalibration> c;
    if (calibrated) c = ssgd::testing::calibration("node1", -50, 2, 0);
    write_rank_file(dir_ / "cap", {1, 2, "node2", v1::ClockDomain::MONOTONIC_RAW, c,
                                   {kernel_event(1, 100, 200)}});
  }
};

TEST_F(MergeCliTest, MergesCalibratedHosts) {
  two_hosts(true);
  const auto r = ssgd({"merge", "cap", "-o", "run.ssgdt"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_EQ(r.out, "merged 2 ranks from 2 hosts into run.ssgdt: 2 events\n");
  EXPECT_THAT(r.err, HasSubstr("merge: read rank-1.ssgdt: 1 events (2/2 files"));
  auto reader = ssgd::trace::TraceReader::open(dir_ / "run.ssgdt");
  v1::Event e;
  ASSERT_TRUE(reader.next(e));
  EXPECT_EQ(e.rank(), 1);
  EXPECT_EQ(e.kernel().start_ns(), 50);
}

TEST_F(MergeCliTest, RefusesUncalibratedHostsUnlessForced) {
  two_hosts(false);
  auto r = ssgd({"merge", "cap", "-o", "run.ssgdt"});
  ASSERT_TRUE(r.exited) << r;
  EXPECT_EQ(r.status, kBadInput) << r;
  EXPECT_THAT(r.err, HasSubstr("'node1'"));
  EXPECT_THAT(r.err, HasSubstr("host 'node2' (MONOTONIC_RAW) (rank-1.ssgdt)"));
  EXPECT_THAT(r.err, HasSubstr("--force"));
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(fs::exists(dir_ / "run.ssgdt"));

  r = ssgd({"merge", "cap", "-o", "run.ssgdt", "--force"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.err, HasSubstr("ssgd: warning: clocks NOT aligned"));
  EXPECT_THAT(r.out, HasSubstr("forced: 1 problem(s) let through"));
  auto reader = ssgd::trace::TraceReader::open(dir_ / "run.ssgdt");
  EXPECT_THAT(reader.metadata().provenance(), HasSubstr("clocks NOT aligned"));
}

TEST_F(MergeCliTest, BadFoldersAndFlags) {
  fs::create_directories(dir_ / "empty");
  auto r = ssgd({"merge", "empty", "-o", "run.ssgdt"});
  EXPECT_EQ(r.status, kBadInput) << r;
  EXPECT_THAT(r.err, HasSubstr("empty: no rank-<r>.ssgdt files"));
  r = ssgd({"merge", "nowhere", "-o", "run.ssgdt"});
  EXPECT_EQ(r.status, kBadInput) << r;
  EXPECT_THAT(r.err, HasSubstr("nowhere: field 'DIR': is not a folder"));
  r = ssgd({"merge", "empty"});
  EXPECT_EQ(r.status, kBadInput) << r;
  two_hosts(true);
  r = ssgd({"merge", "cap", "-o", "no/such/dir/run.ssgdt"});
  EXPECT_EQ(r.status, kBadInput) << r;
  EXPECT_THAT(r.err, HasSubstr("run.ssgdt: field '--output'"));
  ssgd::testing::write_file_bytes(dir_ / "cap" / "rank-1.ssgdt", "not a trace");
  r = ssgd({"merge", "cap", "-o", "run.ssgdt"});
  EXPECT_EQ(r.status, kBadInput) << r;
  EXPECT_THAT(r.err, HasSubstr("rank-1.ssgdt"));
  EXPECT_FALSE(fs::exists(dir_ / "run.ssgdt"));
}

}  // namespace
