// `ssgd export perfetto`, `ssgd simulate --trace-out` and `ssgd diff`, run as
// the real binary in a fresh folder per test: outputs, gzip, and the bad
// inputs (exit status 2, a message naming the file, no output left behind).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/gzip_stream.h"
#include "tests/support/cli_runner.h"
#include "tests/support/test_files.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ssgd::testing::read_file_bytes;

const fs::path kTraces = fs::path(SSGD_SOURCE_DIR) / "tests/data/traces";
constexpr int kBadInput = 2;

class ExportCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("ssgd_export_cli_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    work_ = root_ / "work";
    fs::create_directories(work_);
  }
  void TearDown() override { fs::remove_all(root_); }

  ssgd::testing::CliResult ssgd(const std::vector<std::string>& args) {
    return ssgd::testing::run_cli(SSGD_CLI, args, work_, root_);
  }
  void ok(const std::vector<std::string>& args) {
    const auto r = ssgd(args);
    ASSERT_TRUE(r.exited && r.status == 0) << r;
  }
  ssgd::testing::CliResult fails(const std::vector<std::string>& args) {
    const auto r = ssgd(args);
    EXPECT_TRUE(r.exited) << r;
    EXPECT_EQ(r.status, kBadInput) << r;
    EXPECT_EQ(r.out, "") << r;
    EXPECT_THAT(r.err, HasSubstr("ssgd: error: ")) << r;
    return r;
  }
  void pack(const std::string& name) {
    ok({"pack", (kTraces / (name + ".txtpb")).string(), "-o", name + ".ssgdt", "--events-per-chunk", "2"});
  }
  std::string gunzip(const std::string& name) {
    ssgd::GzipReader in(work_ / name);
    EXPECT_TRUE(in.compressed());
    std::string out;
    char buf[4096];
    for (std::size_t n; (n = in.read(buf, sizeof buf)) > 0;) out.append(buf, n);
    return out;
  }
  // Only `expected` are left in the work folder: no output, no temporary.
  void expect_only(std::set<std::string> expected) {
    std::set<std::string> got;
    for (const auto& e : fs::directory_iterator(work_)) got.insert(e.path().filename().string());
    EXPECT_EQ(got, expected);
  }

  fs::path root_, work_;
};

TEST_F(ExportCliTest, ExportsPlainAndGzipJsonWithTheSameContent) {
  pack("marked");
  ok({"export", "perfetto", "marked.ssgdt", "-o", "m.json"});
  ok({"export", "perfetto", "marked.ssgdt", "-o", "m.json.gz"});
  const std::string plain = read_file_bytes(work_ / "m.json");
  EXPECT_EQ(gunzip("m.json.gz"), plain);
  EXPECT_EQ(plain, read_file_bytes(fs::path(SSGD_SOURCE_DIR) / "tests/data/export/marked.json"));
}

TEST_F(ExportCliTest, TruncatedTraceFailsAndLeavesNoOutputUnlessAllowed) {
  pack("marked");
  const std::string bytes = read_file_bytes(work_ / "marked.ssgdt");
  ssgd::testing::write_file_bytes(work_ / "cut.ssgdt", bytes.substr(0, bytes.size() / 2));
  fs::remove(work_ / "marked.ssgdt");
  const auto r = fails({"export", "perfetto", "cut.ssgdt", "-o", "out.json.gz"});
  EXPECT_THAT(r.err, HasSubstr("cut.ssgdt: record"));
  EXPECT_THAT(r.err, HasSubstr("--allow-truncated"));
  expect_only({"cut.ssgdt"});
  ok({"export", "perfetto", "cut.ssgdt", "-o", "out.json", "--allow-truncated"});
  EXPECT_TRUE(nlohmann::json::accept(read_file_bytes(work_ / "out.json")));
}

TEST_F(ExportCliTest, ExportBadInputs) {
  EXPECT_THAT(fails({"export", "perfetto", "missing.ssgdt", "-o", "o.json"}).err,
              HasSubstr("missing.ssgdt"));
  ssgd::testing::write_file_bytes(work_ / "junk.ssgdt", "not a trace at all, just text\n");
  EXPECT_THAT(fails({"export", "perfetto", "junk.ssgdt", "-o", "o.json"}).err, HasSubstr("junk.ssgdt"));
  EXPECT_THAT(fails({"export", "perfetto", "junk.ssgdt", "-o", "nofolder/o.json"}).err,
              HasSubstr("does not exist"));
  expect_only({"junk.ssgdt"});
}

TEST_F(ExportCliTest, SimulatedTraceReplaysToTheSameTimeExportsAndDiffsAgainstItself) {
  pack("marked");
  ok({"simulate", "marked.ssgdt", "--set", "cluster.gpus_per_node=2", "--trace-out", "sim.ssgdt",
      "--report", "r1.json", "-q"});
  ok({"simulate", "sim.ssgdt", "--set", "cluster.gpus_per_node=2", "--report", "r2.json", "-q"});
  const auto r1 = nlohmann::json::parse(read_file_bytes(work_ / "r1.json"));
  const auto r2 = nlohmann::json::parse(read_file_bytes(work_ / "r2.json"));
  EXPECT_EQ(r1["iteration_time_ns"], r2["iteration_time_ns"]);
  ok({"export", "perfetto", "sim.ssgdt", "-o", "sim.json.gz"});
  const auto j = nlohmann::json::parse(gunzip("sim.json.gz"));
  int flows = 0;
  for (const auto& e : j["traceEvents"]) flows += e["ph"] == "s" ? 1 : 0;
  EXPECT_EQ(flows, 2 * 10 * 2);  // 2 ranks x 10 iterations x 2 all-reduces, each from its launch

  const auto d = ssgd({"diff", "sim.ssgdt", "sim.ssgdt", "--json", "d.json"});
  ASSERT_TRUE(d.exited && d.status == 0) << d;
  EXPECT_THAT(d.out, HasSubstr("difference (simulated - measured): 0.000000 ms"));
  const auto dj = nlohmann::json::parse(read_file_bytes(work_ / "d.json"));
  EXPECT_EQ(dj["measured"]["iteration"], dj["simulated"]["iteration"]);
  ASSERT_FALSE(dj["matched"].empty());
  for (const auto& row : dj["matched"]) {
    EXPECT_EQ(row["start_diff_ns"], 0);
    EXPECT_EQ(row["end_diff_ns"], 0);
    EXPECT_EQ(row["duration_diff_ns"], 0);
  }
  EXPECT_TRUE(dj["measured_only"].empty());
  EXPECT_TRUE(dj["simulated_only"].empty());
}

// The replay doubles conv2's times: its backward (1500 ns measured in the
// median iteration, 2800 ns simulated: twice the average of 1500 and 1300)
// is the largest difference, its
// forward (410 -> 820, with the 10 ns of idle it owns) the second. One worker simulates no
// all-reduce, so the measured ones are listed as measured only; the update is matched (the replay
// takes the measured one, as the scenario does not set it).
TEST_F(ExportCliTest, DiffListsTheKnownLargestDifferenceFirst) {
  pack("marked");
  ok({"simulate", "marked.ssgdt", "--set", "perturb.layer_factors=conv2:2", "--trace-out",
      "sim.ssgdt", "-q"});
  const auto r = ssgd({"diff", "marked.ssgdt", "sim.ssgdt", "--top", "3", "--json", "d.json"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.out, HasSubstr("iteration 1 (the median of 3 by duration)"));
  const auto dj = nlohmann::json::parse(read_file_bytes(work_ / "d.json"));
  ASSERT_GE(dj["matched"].size(), 2u);
  EXPECT_EQ(dj["matched"][0]["task"], "backward conv2");
  EXPECT_EQ(dj["matched"][0]["duration_diff_ns"], 1300);
  EXPECT_EQ(dj["matched"][1]["task"], "forward conv2");
  EXPECT_EQ(dj["matched"][1]["duration_diff_ns"], 410);
  ASSERT_EQ(dj["measured_only"].size(), 2u);
  EXPECT_EQ(dj["measured_only"][0]["task"], "all-reduce #0 (fc)");
  EXPECT_EQ(dj["measured_only"][1]["task"], "all-reduce #1 (conv1)");
  const auto first_row = r.out.find("backward conv2");
  EXPECT_NE(first_row, std::string::npos);
  EXPECT_LT(first_row, r.out.find("forward conv2"));
  EXPECT_THAT(r.out, HasSubstr("measured only (2)"));
}

TEST_F(ExportCliTest, DiffBadInputs) {
  pack("marked");
  pack("small");
  EXPECT_THAT(fails({"diff", "marked.ssgdt", "small.ssgdt"}).err,
              HasSubstr("small.ssgdt: field 'marker.name': the trace has no iteration/<N> marker ranges"));
  EXPECT_THAT(fails({"diff", "marked.ssgdt", "marked.ssgdt", "--iteration", "9"}).err,
              HasSubstr("iteration 9 is not in the trace (it marks 3 iteration(s), numbers 0 to 2)"));
  EXPECT_THAT(fails({"diff", "marked.ssgdt", "missing.ssgdt"}).err, HasSubstr("missing.ssgdt"));
  const auto by = ssgd({"diff", "marked.ssgdt", "marked.ssgdt", "--by", "width"});  // a flag error
  EXPECT_TRUE(by.exited && by.status == kBadInput) << by;
  EXPECT_THAT(by.err, HasSubstr("--by"));
  EXPECT_THAT(fails({"diff", "marked.ssgdt", "marked.ssgdt", "--rank", "5", "--json", "d.json"}).err,
              HasSubstr("rank 5 has no tasks"));
  expect_only({"marked.ssgdt", "small.ssgdt"});
}

TEST_F(ExportCliTest, SimulateTimelineIsGzippedWhenAskedAndOutputsAreDistinct) {
  pack("marked");
  ok({"simulate", "marked.ssgdt", "--timeline", "t.json", "-q"});
  ok({"simulate", "marked.ssgdt", "--timeline", "t.json.gz", "-q"});
  EXPECT_EQ(gunzip("t.json.gz"), read_file_bytes(work_ / "t.json"));
  EXPECT_THAT(fails({"simulate", "marked.ssgdt", "--timeline", "x.json", "--trace-out", "x.json"}).err,
              HasSubstr("--timeline and --trace-out cannot be the same file"));
}

}  // namespace
