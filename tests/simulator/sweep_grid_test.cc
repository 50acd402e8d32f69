// The sweep grid (simulator/sweep): ranges and their text, the order of the
// points, zip groups, the records and the CSV, reading results back, and bad
// grids refused with the file, the line and the key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/error.h"
#include "simulator/sweep/sweep_grid.h"
#include "simulator/sweep/sweep_results.h"
#include "tests/support/test_files.h"

namespace {

namespace fs = std::filesystem;
using ssgd::InputError;
using ssgd::testing::write_file_bytes;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class SweepGridTest : public ssgd::testing::TempDirTest {
 protected:
  ssgd::sim::SweepGrid grid(const std::string& body) {
    write_file_bytes(dir_ / "grid.yaml", "input: profile.csv\n" + body);
    return ssgd::sim::read_sweep_grid(dir_ / "grid.yaml");
  }
  std::vector<std::string> values(const std::string& axis) {
    const auto g = grid("grid:\n  k: " + axis + "\n");
    std::vector<std::string> out;
    for (const auto& v : g.axes.at(0).values) out.push_back(v.at(0));
    return out;
  }
  // read_sweep_grid fails at `line`, naming `field`, with `reason`.
  void expect_refused(const std::string& body, int line, const std::string& field,
                      const std::string& reason) {
    try {
      (void)grid(body);
      ADD_FAILURE() << "accepted:\n" << body;
    } catch (const InputError& e) {
      EXPECT_EQ(e.where().file, (dir_ / "grid.yaml").string());
      EXPECT_EQ(e.where().line, line) << e.what();
      EXPECT_EQ(e.where().field, field) << e.what();
      EXPECT_THAT(e.reason(), HasSubstr(reason));
    }
  }
};

TEST_F(SweepGridTest, RangesGiveTheirValuesAsText) {
  EXPECT_THAT(values("{from: 1, to: 16, step: 5}"), ElementsAre("1", "6", "11", "16"));
  EXPECT_THAT(values("{from: 1, to: 64, factor: 4}"), ElementsAre("1", "4", "16", "64"));
  // Decimal steps do not drift: 0.1 x 3 is written 0.3.
  EXPECT_THAT(values("{from: 0, to: 0.3, step: 0.1}"), ElementsAre("0", "0.1", "0.2", "0.3"));
  EXPECT_THAT(values("{from: 0.5, to: 2, count: 4}"), ElementsAre("0.5", "1", "1.5", "2"));
  EXPECT_THAT(values("{from: 1, to: 100, count: 3, log: true}"), ElementsAre("1", "10", "100"));
  EXPECT_THAT(values("{from: 1, to: 2, factor: 1.5}"), ElementsAre("1", "1.5"));
  EXPECT_THAT(values("{from: 7, to: 7, count: 1}"), ElementsAre("7"));
  EXPECT_THAT(values("[10gbe, 25gbe]"), ElementsAre("10gbe", "25gbe"));
}

TEST_F(SweepGridTest, PointsRunWithTheFirstAxisSlowestAndZipGroupsTogether) {
  const auto g = grid(
      "grid:\n  cluster.nodes: [1, 2]\n  policy.overlap: [wfbp, ddp, bsp]\n"
      "zip:\n  - {workload.batch_per_gpu: [16, 32], iterations: [3, 4]}\n");
  ASSERT_EQ(g.point_count(), 12);
  EXPECT_THAT(g.swept_keys(), ElementsAre("cluster.nodes", "policy.overlap",
                                          "workload.batch_per_gpu", "iterations"));
  const auto p = ssgd::sim::sweep_point(g, 7);  // 7 = 1*6 + 0*2 + 1
  EXPECT_EQ(p.index, 7);
  EXPECT_THAT(p.keys, ElementsAre(std::pair<std::string, std::string>{"cluster.nodes", "2"},
                                  std::pair<std::string, std::string>{"policy.overlap", "wfbp"},
                                  std::pair<std::string, std::string>{"workload.batch_per_gpu",
                                                                      "32"},
                                  std::pair<std::string, std::string>{"iterations", "4"}));
  EXPECT_EQ(g.input, dir_ / "profile.csv");  // relative to the grid file
}

TEST_F(SweepGridTest, SetKeysComeBeforeThePointsKeys) {
  const auto g = grid("set:\n  iterations: 5\ngrid:\n  cluster.nodes: [1, 2]\n");
  EXPECT_THAT(ssgd::sim::point_sets(g, ssgd::sim::sweep_point(g, 1)),
              ElementsAre("iterations=5", "cluster.nodes=2"));
}

TEST_F(SweepGridTest, BadGridsAreRefusedAtTheKey) {
  expect_refused("grid:\n  k: {from: 4, to: 1, step: 1}\n", 3, "k", "'to' (1) is less than");
  expect_refused("grid:\n  k: {from: 1, to: 4}\n", 3, "k", "exactly one of step, factor or count");
  expect_refused("grid:\n  k: {from: 1, to: 4, step: 0}\n", 3, "k", "'step' must be greater");
  expect_refused("grid:\n  k: {from: 1, to: 4, factor: 1}\n", 3, "k", "'factor' must be greater");
  expect_refused("grid:\n  k: {from: 1, to: 1e9, step: 1}\n", 3, "k", "more than 100000 values");
  expect_refused("grid:\n  k: {from: 0.5, to: 9.2e19, step: 1.25}\n", 3, "k", "more than 100000");
  expect_refused("grid:\n  k: {from: 1.5, to: 1e300, factor: 1.0001}\n", 3, "k", "more than 100000");
  expect_refused("grid:\n  k: {from: x, to: 4, step: 1}\n", 3, "k", "expected a finite number");
  expect_refused("grid:\n  k: {from: 1, to: 4, stride: 1}\n", 3, "k", "unknown range field");
  expect_refused("grid:\n  k: []\n", 3, "k", "an empty list sweeps nothing");
  expect_refused("grid:\n  k: [1, 1]\n", 3, "k", "listed twice");
  expect_refused("grid:\n  k: 4\n", 3, "k", "belongs under 'set'");
  expect_refused("set:\n  k: 1\ngrid:\n  k: [1, 2]\n", 5, "k", "given twice");
  expect_refused("grid:\n  a=b: [1]\n", 3, "a=b", "holds no '='");
  expect_refused("grid:\n  jobs.x: [1]\n", 3, "jobs.x", "cannot be swept");
  expect_refused("zip:\n  - {a: [1, 2], b: [1]}\n", 3, "b", "the lists of a group advance together");
  expect_refused("grids:\n  a: [1]\n", 2, "grids", "unknown key 'grids'");
  expect_refused("set:\n  a: 1\n", 1, "grid", "nothing to sweep");
  // yaml-cpp read this key as bytes that are not UTF-8, which the results
  // could not be written with (fuzz/sweep_grid_fuzzer).
  const char control[] = "grid:\n  workload.bat\x01\x00_per_gpu: [1]\n";
  expect_refused(std::string(control, sizeof control - 1), 3, "",
                 "holds the control character 0x01");
  expect_refused(
      "grid:\n  a: {from: 1, to: 100, step: 1}\n  b: {from: 1, to: 100, step: 1}\n"
      "  c: {from: 1, to: 100, step: 1}\n  d: {from: 1, to: 100, step: 1}\n",
      1, "grid", "more than 10000000 points");
  write_file_bytes(dir_ / "grid.yaml", "grid:\n  a: [1]\n");
  try {
    (void)ssgd::sim::read_sweep_grid(dir_ / "grid.yaml");
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().field, "input");
    EXPECT_THAT(e.reason(), HasSubstr("missing: the input to replay"));
  }
}

TEST(SweepRecordLine, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  ssgd::sim::SweepPoint point;
  point.index = 3;
  const auto record = ssgd::sim::error_record(point, "trace.bin: the name 'a\xFF' is bad");
  EXPECT_THAT(ssgd::sim::record_line(record), HasSubstr("the name 'a\xEF\xBF\xBD' is bad"));
}

TEST_F(SweepGridTest, RecordsHoldTypedKeysAndEveryFigureButTheScenario) {
  const auto g = grid("grid:\n  cluster.nodes: [2]\n  network.inter_node: [10gbe]\n"
                      "  perturb.compute_time_factor: [0.5]\n");
  const auto point = ssgd::sim::sweep_point(g, 0);
  const nlohmann::json report = {{"ssgd_report_version", 1},
                                 {"iteration_time_ns", 1000},
                                 {"breakdown", {{"compute_ns", 700}, {"idle_ns", 300}}},
                                 {"iteration_times_ns", {1, 2}},
                                 {"scenario", {{"iterations", 10}}},
                                 {"input", {{"path", "x"}}}};
  const auto record = ssgd::sim::point_record(point, report);
  EXPECT_EQ(record.dump(),
            R"({"ssgd_sweep_version":1,"point":0,"keys":{"cluster.nodes":2,)"
            R"("network.inter_node":"10gbe","perturb.compute_time_factor":0.5},"figures":)"
            R"({"breakdown.compute_ns":700,"breakdown.idle_ns":300,"iteration_time_ns":1000}})");
}

TEST_F(SweepGridTest, TheCsvHasAColumnPerKeyAndFigureAndQuotesText) {
  const auto g = grid("grid:\n  a: [1, '2,5']\n");
  ssgd::sim::SweepResults results;
  results.lines[1] =
      ssgd::sim::error_record(ssgd::sim::sweep_point(g, 1), "bad \"value\"").dump();
  results.lines[0] = ssgd::sim::point_record(ssgd::sim::sweep_point(g, 0),
                                             nlohmann::json{{"t_ns", 5}, {"m", "x, y"}})
                         .dump();
  EXPECT_EQ(ssgd::sim::sweep_csv(g, results),
            "point,a,m,t_ns,error\n0,1,\"x, y\",5,\n1,\"2,5\",,,\"bad \"\"value\"\"\"\n");
}

TEST_F(SweepGridTest, ResultsReadBackOnlyFromTheSameGrid) {
  const auto g = grid("grid:\n  a: [1, 2, 3]\n");
  const std::string line0 =
      ssgd::sim::point_record(ssgd::sim::sweep_point(g, 0), nlohmann::json{{"t_ns", 5}}).dump();
  const std::string line2 =
      ssgd::sim::point_record(ssgd::sim::sweep_point(g, 2), nlohmann::json{{"t_ns", 7}}).dump();
  write_file_bytes(dir_ / "r.jsonl", line2 + "\n" + line0 + "\n{\"ssgd_sweep");
  const auto results = ssgd::sim::read_sweep_results(dir_ / "r.jsonl", g);
  ASSERT_EQ(results.lines.size(), 2U);
  EXPECT_EQ(results.lines.at(0), line0);
  ASSERT_EQ(results.warnings.size(), 1U);
  EXPECT_THAT(results.warnings[0], HasSubstr("r.jsonl:3: the last line is cut short"));
  EXPECT_EQ(ssgd::sim::sweep_jsonl(results), line0 + "\n" + line2 + "\n");

  const auto other = grid("grid:\n  a: [1, 5, 3]\n");
  const std::string line1 =
      ssgd::sim::point_record(ssgd::sim::sweep_point(g, 1), nlohmann::json{{"t_ns", 6}}).dump();
  write_file_bytes(dir_ / "r.jsonl", line0 + "\n" + line1 + "\n");
  try {
    (void)ssgd::sim::read_sweep_results(dir_ / "r.jsonl", other);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 2);
    EXPECT_EQ(e.where().field, "keys");
    EXPECT_THAT(e.reason(), HasSubstr("another grid wrote this file"));
  }
  write_file_bytes(dir_ / "r.jsonl", line0 + "\n" + line0 + "\n");
  EXPECT_THROW((void)ssgd::sim::read_sweep_results(dir_ / "r.jsonl", g), InputError);
  write_file_bytes(dir_ / "r.jsonl", "not json\n");
  EXPECT_THROW((void)ssgd::sim::read_sweep_results(dir_ / "r.jsonl", g), InputError);
}

// The grid's input and scenario files are checked before anything reads
// them: a missing one is named at its line in the grid, with its key.
TEST_F(SweepGridTest, AMissingInputOrScenarioIsNamedAtItsLine) {
  write_file_bytes(dir_ / "grid.yaml",
                   "input: profile.csv\nscenario: base.yaml\ngrid:\n  cluster.nodes: [1, 2]\n");
  const ssgd::sim::SweepGrid g = ssgd::sim::read_sweep_grid(dir_ / "grid.yaml");
  const auto refusal = [&g] {
    try {
      ssgd::sim::check_grid_files(g);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string grid = (dir_ / "grid.yaml").string();
  EXPECT_EQ(refusal(), grid + ":1: field 'input': cannot read '" + (dir_ / "profile.csv").string() +
                           "': No such file or directory");
  write_file_bytes(dir_ / "profile.csv", "layer,name,forward_ns,backward_ns,grad_bytes\n");
  EXPECT_EQ(refusal(), grid + ":2: field 'scenario': cannot read '" + (dir_ / "base.yaml").string() +
                           "': No such file or directory");
  fs::create_directories(dir_ / "base.yaml");
  EXPECT_THAT(refusal(), HasSubstr(":2: field 'scenario': '" + (dir_ / "base.yaml").string() +
                                   "' is a folder, not a regular file"));
  fs::remove(dir_ / "base.yaml");
  write_file_bytes(dir_ / "base.yaml", "iterations: 2\n");
  EXPECT_EQ(refusal(), "accepted");
}

}  // namespace
