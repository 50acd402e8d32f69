// Golden reports: the JSON report of `ssgd simulate` on every bundled
// profile and example scenario and on a measured trace, of `ssgd scale`, and
// of `ssgd dataset verify` on the measured CPU dataset, each compared with
// its committed copy under tests/data/golden/ with no tolerance, so that any
// change in a prediction shows. The volatile fields
// (ssgd::testing::golden_volatile_fields) are dropped first. On a mismatch
// the differing JSON paths are printed; SSGD_UPDATE_GOLDEN=1 rewrites the
// golden files instead (tests/README.md).
//
// The commands run from the repository root with relative paths, as a user
// would type them, so the paths the reports echo are the same everywhere.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "tests/support/cli_runner.h"
#include "tests/support/golden_json.h"
#include "tests/support/test_files.h"

namespace {

namespace fs = std::filesystem;
using ssgd::testing::check_golden_json;
using ssgd::testing::read_file_bytes;
using ssgd::testing::write_file_bytes;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kSource = fs::path(SSGD_SOURCE_DIR);
const fs::path kGolden = kSource / "tests/data/golden";
constexpr const char* kReport = "{report}";  // replaced by the report's path

struct GoldenCase {
  std::string name;    // the test's name
  std::string golden;  // relative to tests/data/golden
  std::vector<std::string> args;
};

void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name; }

std::vector<GoldenCase> golden_cases() {
  std::vector<GoldenCase> cases;
  // Every bundled layer profile on its own (one V100, no scenario).
  for (const std::string model : {"resnet50", "vgg16", "googlenet", "bert_base"}) {
    cases.push_back({"simulate_dataset_" + model,
                     "simulate/dataset_" + model + ".json",
                     {"simulate", "traces/datasets/" + model + "_v100.csv", "-q", "--log", "warn",
                      "--report", kReport}});
  }
  // Every example scenario on ResNet-50.
  for (const std::string scenario : {"v100_4x4_10gbe", "dgx1_8x8_ib100", "bcaffe_10gbe",
                                     "shared_fabric", "whatif_perturb", "strong_scaling",
                                     "hgx_h100_4x8"}) {
    cases.push_back(
        {"simulate_scenario_" + scenario,
         "simulate/scenario_" + scenario + ".json",
         {"simulate", "traces/datasets/resnet50_v100.csv", "--scenario",
          "scenarios/" + scenario + ".yaml", "-q", "--log", "warn", "--report", kReport}});
  }
  // The Quick start's run: ResNet-50 captured on one H200, on 4 HGX H100 nodes.
  cases.push_back({"simulate_quickstart_h200", "simulate/quickstart_h200.json",
                   {"simulate", "traces/datasets/h200-pytorch/resnet50-fp32/trace.ssgdt",
                    "--scenario", "scenarios/hgx_h100_4x8.yaml", "-q", "--log", "warn",
                    "--report", kReport}});
  // A measured .ssgdt trace (2 ranks, gloo over a 1 Gbit/s link) under its
  // own scenario, which reads a network calibration.
  const std::string config = "traces/datasets/cpu-cluster/configs/mlp-w2-1gbit-b25";
  cases.push_back({"simulate_trace_cpu_cluster_mlp_w2_1gbit_b25",
                   "simulate/trace_cpu_cluster_mlp-w2-1gbit-b25.json",
                   {"simulate", config + "/trace.ssgdt", "--scenario", config + "/scenario.yaml",
                    "-q", "--log", "warn", "--report", kReport}});
  // Weak scaling of ResNet-50 on the 4x4 10GbE cluster's hardware.
  cases.push_back(
      {"scale_resnet50_v100_4x4_10gbe",
       "scale/resnet50_v100_4x4_10gbe.json",
       {"scale", "traces/datasets/resnet50_v100.csv", "--scenario", "scenarios/v100_4x4_10gbe.yaml",
        "--gpus", "1,2,4,8,16,32", "--log", "warn", "--report", kReport}});
  // The measured CPU dataset: every replay and what-if case (162 of them).
  cases.push_back({"dataset_verify_cpu_cluster",
                   "dataset_verify/cpu-cluster.json",
                   {"dataset", "verify", "traces/datasets/cpu-cluster", "--jobs", "2", "--log",
                    "warn", "--report", kReport}});
  return cases;
}

class GoldenFixture : public ssgd::testing::TempDirTest {
 protected:
  // Runs the case's command from the repository root; returns the report's
  // text, or "" after a failure was recorded.
  std::string run_case(const GoldenCase& c) {
    const fs::path report = dir_ / "report.json";
    std::vector<std::string> args = c.args;
    for (auto& a : args) {
      if (a == kReport) a = report.string();
    }
    const auto r = ssgd::testing::run_cli(SSGD_CLI, args, kSource, dir_);
    if (!r.exited || r.status != 0) {
      ADD_FAILURE() << "ssgd " << ::testing::PrintToString(c.args) << " failed:\n" << r;
      return "";
    }
    if (!fs::exists(report)) {
      ADD_FAILURE() << "ssgd " << ::testing::PrintToString(c.args) << " wrote no report\n" << r;
      return "";
    }
    return read_file_bytes(report);
  }
};

class GoldenReportTest : public GoldenFixture, public ::testing::WithParamInterface<GoldenCase> {};

TEST_P(GoldenReportTest, MatchesGolden) {
  const GoldenCase& c = GetParam();
  const std::string report = run_case(c);
  if (report.empty()) return;
  const auto check =
      check_golden_json(report, kGolden / c.golden, ssgd::testing::golden_update_requested());
  if (check.updated) std::cout << check.message << "\n";
  EXPECT_TRUE(check.ok) << "ssgd " << ::testing::PrintToString(c.args) << "\n" << check.message;
}

std::string test_name(const ::testing::TestParamInfo<GoldenCase>& info) {
  std::string name = info.param.name;
  for (char& ch : name) {
    if (std::isalnum(static_cast<unsigned char>(ch)) == 0) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Ssgd, GoldenReportTest, ::testing::ValuesIn(golden_cases()), test_name);

// ------------------------------------------------------- the mechanism

class GoldenMechanismTest : public GoldenFixture {};

// A real report against a golden copy in a temporary folder, written by the
// update path and then changed by hand: a mismatch naming the paths and both
// values, with how to accept it. (It does not read the committed golden
// file, so it passes while SSGD_UPDATE_GOLDEN rewrites that one.)
TEST_F(GoldenMechanismTest, ChangedGoldenCopyIsAMismatch) {
  const GoldenCase c = golden_cases().front();
  ASSERT_EQ(c.name, "simulate_dataset_resnet50");
  const std::string report = run_case(c);
  ASSERT_FALSE(report.empty());
  const fs::path copy = dir_ / "golden" / c.golden;
  ASSERT_TRUE(check_golden_json(report, copy, true).updated);
  EXPECT_TRUE(check_golden_json(report, copy, false).ok);

  auto golden = nlohmann::ordered_json::parse(read_file_bytes(copy));
  const auto time = golden.at("iteration_time_ns").get<std::int64_t>();
  golden["iteration_time_ns"] = time + 1;
  golden["input"]["model"] = "ResNet-51";
  write_file_bytes(copy, golden.dump(2));

  const auto check = check_golden_json(report, copy, false);
  EXPECT_FALSE(check.ok);
  EXPECT_FALSE(check.updated);
  EXPECT_THAT(check.message, HasSubstr("in 2 place(s)"));
  EXPECT_THAT(check.message, HasSubstr("/iteration_time_ns: golden " + std::to_string(time + 1) +
                                       ", got " + std::to_string(time)));
  EXPECT_THAT(check.message, HasSubstr("/input/model: golden \"ResNet-51\", got \"ResNet-50\""));
  EXPECT_THAT(check.message, HasSubstr("SSGD_UPDATE_GOLDEN=1"));
  EXPECT_THAT(check.message, HasSubstr(copy.string()));
}

// Exact comparison: a 1-ulp change, an integer turned into a float, a
// missing or extra key, an array of another length all count.
TEST_F(GoldenMechanismTest, EveryKindOfDifferenceIsListed) {
  const auto golden = nlohmann::ordered_json::parse(
      R"({"a": 0.1, "b": 3, "c": {"d": [1, 2, 3]}, "gone": true, "list": [{"x": "y"}]})");
  auto report = golden;
  report["a"] = std::nextafter(0.1, 1.0);
  report["b"] = 3.0;
  report["c"]["d"].push_back(4);
  report.erase("gone");
  report["new"] = nullptr;
  report["list"][0]["x"] = "z";
  const fs::path file = dir_ / "g.json";
  write_file_bytes(file, golden.dump());
  const auto check = check_golden_json(report.dump(), file, false);
  EXPECT_FALSE(check.ok);
  EXPECT_THAT(check.message, HasSubstr("in 6 place(s)"));
  EXPECT_THAT(check.message, HasSubstr("/a: golden 0.1, got 0.10000000000000002"));
  EXPECT_THAT(check.message, HasSubstr("/b: golden 3 (integer), got 3.0 (number)"));
  EXPECT_THAT(check.message, HasSubstr("/c/d: golden has 3 elements, got 4"));
  EXPECT_THAT(check.message, HasSubstr("/gone: golden true, missing from the report"));
  EXPECT_THAT(check.message, HasSubstr("/new: not in the golden file, got null"));
  EXPECT_THAT(check.message, HasSubstr("/list/0/x: golden \"y\", got \"z\""));

  // Key order is not compared.
  EXPECT_TRUE(check_golden_json(R"({"b": 3, "a": 0.1, "c": {"d": [1, 2, 3]}, "gone": true,
                                    "list": [{"x": "y"}]})",
                                file, false)
                  .ok);
}

// Only the first 20 differences are shown, then a count of the rest.
TEST_F(GoldenMechanismTest, ListIsCutAfterTwenty) {
  nlohmann::ordered_json golden = nlohmann::ordered_json::array();
  nlohmann::ordered_json report = nlohmann::ordered_json::array();
  for (int i = 0; i < 25; ++i) {
    golden.push_back(i);
    report.push_back(i + 100);
  }
  const fs::path file = dir_ / "g.json";
  write_file_bytes(file, golden.dump());
  const auto check = check_golden_json(report.dump(), file, false);
  EXPECT_THAT(check.message, HasSubstr("in 25 place(s)"));
  EXPECT_THAT(check.message, HasSubstr("/19: golden 19, got 119"));
  EXPECT_THAT(check.message, Not(HasSubstr("/20: golden")));
  EXPECT_THAT(check.message, HasSubstr("... and 5 more"));
}

// The volatile fields are ignored on both sides, and nothing else is.
TEST_F(GoldenMechanismTest, OnlyVolatileFieldsAreIgnored) {
  const fs::path file = dir_ / "g.json";
  write_file_bytes(file, R"({"ssgd_version": "0.0.1", "format_version": 1, "n": 1})");
  EXPECT_TRUE(
      check_golden_json(R"({"ssgd_version": "9.9.9", "format_version": 1, "n": 1})", file, false)
          .ok);
  EXPECT_TRUE(check_golden_json(R"({"format_version": 1, "n": 1})", file, false).ok);
  const auto nested =
      check_golden_json(R"({"ssgd_version": "9.9.9", "format_version": 2, "n": 1})", file, false);
  EXPECT_FALSE(nested.ok);
  EXPECT_THAT(nested.message, HasSubstr("/format_version: golden 1, got 2"));
  // Only at the top level: the same name deeper down is compared.
  write_file_bytes(file, R"({"dataset": {"ssgd_version": "0.1.0"}})");
  EXPECT_FALSE(check_golden_json(R"({"dataset": {"ssgd_version": "0.2.0"}})", file, false).ok);
}

// A missing golden file fails and says how to create it; with update it is
// written (without the volatile fields) and then matches.
TEST_F(GoldenMechanismTest, UpdateWritesTheGoldenFile) {
  const fs::path file = dir_ / "new" / "g.json";
  const std::string report = R"({"ssgd_version": "9.9.9", "x": [1, 2.5, "s"]})";
  const auto missing = check_golden_json(report, file, false);
  EXPECT_FALSE(missing.ok);
  EXPECT_THAT(missing.message, HasSubstr("no golden file " + file.string()));
  EXPECT_THAT(missing.message, HasSubstr("SSGD_UPDATE_GOLDEN=1"));

  const auto updated = check_golden_json(report, file, true);
  EXPECT_TRUE(updated.ok);
  EXPECT_TRUE(updated.updated);
  EXPECT_THAT(updated.message, HasSubstr("rewrote " + file.string()));
  EXPECT_EQ(read_file_bytes(file), "{\n  \"x\": [\n    1,\n    2.5,\n    \"s\"\n  ]\n}\n");
  EXPECT_TRUE(check_golden_json(report, file, false).ok);
  EXPECT_FALSE(check_golden_json(R"({"x": [1, 2.5]})", file, false).ok);
}

TEST_F(GoldenMechanismTest, UpdateIsAskedByAnythingButEmptyOrZero) {
  const char* saved = std::getenv("SSGD_UPDATE_GOLDEN");
  const std::string old = saved != nullptr ? saved : "";
  ::unsetenv("SSGD_UPDATE_GOLDEN");
  EXPECT_FALSE(ssgd::testing::golden_update_requested());
  ::setenv("SSGD_UPDATE_GOLDEN", "0", 1);
  EXPECT_FALSE(ssgd::testing::golden_update_requested());
  ::setenv("SSGD_UPDATE_GOLDEN", "", 1);
  EXPECT_FALSE(ssgd::testing::golden_update_requested());
  ::setenv("SSGD_UPDATE_GOLDEN", "1", 1);
  EXPECT_TRUE(ssgd::testing::golden_update_requested());
  if (saved != nullptr) {
    ::setenv("SSGD_UPDATE_GOLDEN", old.c_str(), 1);
  } else {
    ::unsetenv("SSGD_UPDATE_GOLDEN");
  }
}

}  // namespace
