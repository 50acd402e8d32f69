// `ssgd dataset pack|verify` run as the real binary on the dataset of
// tests/support/dataset_builder.h: exit statuses, what reaches stdout and
// stderr, the --report JSON, and that verify's predictions are the
// iteration times `ssgd simulate` reports for the same input and scenario.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/cli_runner.h"
#include "tests/support/dataset_builder.h"
#include "tests/support/test_files.h"

namespace {

namespace fs = std::filesystem;
using ssgd::testing::read_file_bytes;
using ssgd::testing::write_file_bytes;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kBadInput = 2;

class DatasetCli : public ssgd::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    fs::create_directories(dir_ / "work");
    ssgd::testing::write_test_dataset(dir_ / "work/ds");
  }
  ssgd::testing::CliResult ssgd(const std::vector<std::string>& args) {
    return ssgd::testing::run_cli(SSGD_CLI, args, dir_ / "work", dir_);
  }
  ssgd::testing::CliResult ok(const std::vector<std::string>& args) {
    auto r = ssgd(args);
    EXPECT_TRUE(r.exited && r.status == 0) << r;
    return r;
  }
  ssgd::testing::CliResult fails(const std::vector<std::string>& args) {
    auto r = ssgd(args);
    EXPECT_TRUE(r.exited && r.status == kBadInput) << r;
    EXPECT_EQ(r.out, "") << r;
    return r;
  }
  fs::path ds(const std::string& rel = "") const { return dir_ / "work/ds" / rel; }
};

TEST_F(DatasetCli, PackThenVerifyPrintsEveryCaseAndASummary) {
  const auto packed = ok({"dataset", "pack", "ds", "--description", "tests"});
  EXPECT_THAT(packed.out, HasSubstr("packed dataset 'ds': 3 entries, 11 files ("));
  EXPECT_THAT(packed.out, HasSubstr("into ds/manifest.json"));
  const auto r = ok({"dataset", "verify", "ds"});
  EXPECT_THAT(r.out, HasSubstr("dataset 'ds' (ds): 3 entries, 11 files intact"));
  EXPECT_THAT(r.out, HasSubstr("tiny-w4 <- tiny-w2  what-if"));
  EXPECT_THAT(r.out, HasSubstr("  replay:  3 case(s), median |error| "));
  EXPECT_THAT(r.out, HasSubstr("  what-if: 1 case(s), median |error| "));
  EXPECT_THAT(r.err, HasSubstr("[4/4] "));
  // --no-replay checks the files only.
  const auto quick = ok({"dataset", "verify", "ds", "--no-replay"});
  EXPECT_THAT(quick.out, HasSubstr("not replayed (--no-replay)"));
  EXPECT_THAT(quick.out, Not(HasSubstr("what-if")));
}

// --max-error: a case beyond it is listed after the table and the exit
// status is 4; within it, said so, exit 0. What-ifs may have their own.
TEST_F(DatasetCli, MaxErrorFlagsAMiss) {
  ok({"dataset", "pack", "ds"});
  const auto miss = ssgd({"dataset", "verify", "ds", "--max-error", "0", "--report", "r.json"});
  EXPECT_TRUE(miss.exited && miss.status == 4) << miss;
  EXPECT_THAT(miss.out, HasSubstr("beyond tolerance (--max-error 0%): "));
  EXPECT_THAT(miss.err, HasSubstr("case(s) beyond tolerance (--max-error 0%)"));
  EXPECT_TRUE(fs::exists(dir_ / "work/r.json"));  // the report is written all the same
  const auto within = ok({"dataset", "verify", "ds", "--max-error", "1000000"});
  EXPECT_THAT(within.out, HasSubstr("within tolerance: every case (--max-error 1e+06%)"));
  const auto whatif = ssgd({"dataset", "verify", "ds", "--max-error", "1000000", "--max-whatif-error", "0"});
  EXPECT_TRUE(whatif.exited && whatif.status == 4) << whatif;
  EXPECT_THAT(whatif.out, HasSubstr("tiny-w4 <- tiny-w2 "));
  fails({"dataset", "verify", "ds", "--max-error", "-1"});
}

// A dataset carries its own tolerance: pack --max-error writes it into the
// manifest, a later pack keeps it, verify checks it when no flag is given,
// and the flags replace it (both limits at once).
TEST_F(DatasetCli, TheManifestsToleranceIsVerifysDefault) {
  ok({"dataset", "pack", "ds", "--max-error", "1000000", "--max-whatif-error", "0"});
  EXPECT_THAT(read_file_bytes(ds("manifest.json")),
              HasSubstr("\"tolerance\": {\n    \"max_error_percent\": 1000000.0,\n    "
                        "\"max_whatif_error_percent\": 0.0\n  }"));
  ok({"dataset", "pack", "ds", "--description", "again"});  // the tolerance is kept
  const auto miss = ssgd({"dataset", "verify", "ds"});
  EXPECT_TRUE(miss.exited && miss.status == 4) << miss;
  EXPECT_THAT(miss.out, HasSubstr("beyond tolerance (the manifest's max_error_percent 1e+06%, the "
                                  "manifest's max_whatif_error_percent 0%): 1 of 4 case(s)"));
  EXPECT_THAT(miss.out, HasSubstr("tiny-w4 <- tiny-w2 "));
  const auto flag = ok({"dataset", "verify", "ds", "--max-error", "1000000"});
  EXPECT_THAT(flag.out, HasSubstr("within tolerance: every case (--max-error 1e+06%)"));
  // A tolerance of the wrong kind is refused naming the manifest and the field.
  std::string text = read_file_bytes(ds("manifest.json"));
  text.replace(text.find("1000000.0"), 9, "\"ten\"");
  write_file_bytes(ds("manifest.json"), text);
  const auto bad = fails({"dataset", "verify", "ds"});
  EXPECT_THAT(bad.err, HasSubstr("field 'tolerance.max_error_percent'"));
  EXPECT_THAT(bad.err, HasSubstr("expected a percentage"));
}

TEST_F(DatasetCli, VerifyPredictsWhatSimulateReports) {
  ok({"dataset", "pack", "ds"});
  ok({"dataset", "verify", "ds", "--jobs", "2", "--report", "verify.json"});
  const auto report = nlohmann::json::parse(read_file_bytes(dir_ / "work/verify.json"));
  EXPECT_EQ(report["format"], "ssgd.dataset.verify");
  ASSERT_EQ(report["cases"].size(), 4u);
  for (const auto& c : report["cases"]) {
    const std::string trace = "ds/" + c["trace"].get<std::string>();
    const std::string scenario = "ds/" + c["scenario"].get<std::string>();
    ok({"simulate", trace, "--scenario", scenario, "--report", "sim.json", "-q"});
    const auto sim = nlohmann::json::parse(read_file_bytes(dir_ / "work/sim.json"));
    EXPECT_EQ(c["predicted_ns"], sim["iteration_time_ns"]) << c["case"];
  }
  EXPECT_EQ(report["summary"]["all"]["cases"], 4);
  EXPECT_EQ(report["summary"]["what_if"]["cases"], 1);
  // The report is deterministic: no wall times.
  ok({"dataset", "verify", "ds", "--report", "again.json"});
  EXPECT_EQ(read_file_bytes(dir_ / "work/again.json"), read_file_bytes(dir_ / "work/verify.json"));
}

// An entry that measured its memory: each of its cases sets the replay's
// memory estimate (simulate's memory.total_bytes) beside it, in a table of
// its own, a summary line and the report; the profile has no activations, and
// the output says the estimate leaves them out.
TEST_F(DatasetCli, VerifySetsTheMemoryEstimateBesideAMeasuredMemory) {
  std::string entry = read_file_bytes(ds("tiny/w4/entry.json"));
  const auto at = entry.find("}},");
  ASSERT_NE(at, std::string::npos);
  entry.replace(at, 3,
                "}, \"memory_bytes\": {\"median\": 2000000, \"min\": 1900000, \"p10\": "
                "1950000, \"p90\": 2100000, \"samples\": 8}},");
  write_file_bytes(ds("tiny/w4/entry.json"), entry);
  ok({"dataset", "pack", "ds"});
  const auto r = ok({"dataset", "verify", "ds", "--report", "verify.json"});
  EXPECT_THAT(r.out, HasSubstr("memory      measured"));
  EXPECT_THAT(r.out, HasSubstr("not in the trace"));
  EXPECT_THAT(r.out, HasSubstr("activations not in the trace: the estimate leaves them out"));
  EXPECT_THAT(r.out, HasSubstr("  memory:  2 case(s), median |error| "));
  const auto report = nlohmann::json::parse(read_file_bytes(dir_ / "work/verify.json"));
  EXPECT_EQ(report["summary"]["memory"]["cases"], 2);
  int with_memory = 0;
  for (const auto& c : report["cases"]) {
    if (!c.contains("memory")) {
      EXPECT_NE(c["entry"], "tiny-w4") << c["case"];
      continue;
    }
    ++with_memory;
    EXPECT_EQ(c["entry"], "tiny-w4");
    EXPECT_EQ(c["memory"]["measured_median_bytes"], 2000000);
    EXPECT_EQ(c["memory"]["activations_known"], false);
    const std::string trace = "ds/" + c["trace"].get<std::string>();
    ok({"simulate", trace, "--scenario", "ds/tiny/w4/scenario.yaml", "--report", "sim.json", "-q"});
    const auto sim = nlohmann::json::parse(read_file_bytes(dir_ / "work/sim.json"));
    const auto predicted = c["memory"]["predicted_bytes"].get<std::int64_t>();
    EXPECT_EQ(predicted, sim["memory"]["total_bytes"]) << c["case"];
    EXPECT_NEAR(c["memory"]["error_percent"].get<double>(),
                (static_cast<double>(predicted) - 2e6) / 2e6 * 100, 1e-9);
  }
  EXPECT_EQ(with_memory, 2);
}

// --set: every entry replayed under a key of the user's, as simulate
// replays it with the same --set; said in the output and the report; a bad
// key named at --set.
TEST_F(DatasetCli, VerifySetsAKeyOnEveryEntry) {
  ok({"dataset", "pack", "ds"});
  const auto r = ok({"dataset", "verify", "ds", "--set", "perturb.compute_time_factor=2",
                     "--report", "twice.json"});
  EXPECT_THAT(r.out, HasSubstr("every entry's scenario with --set perturb.compute_time_factor=2"));
  const auto report = nlohmann::json::parse(read_file_bytes(dir_ / "work/twice.json"));
  EXPECT_EQ(report["scenario_sets"], nlohmann::json::array({"perturb.compute_time_factor=2"}));
  const auto& c = report["cases"][0];
  ok({"simulate", "ds/" + c["trace"].get<std::string>(), "--scenario",
      "ds/" + c["scenario"].get<std::string>(), "--set", "perturb.compute_time_factor=2",
      "--report", "sim.json", "-q"});
  const auto sim = nlohmann::json::parse(read_file_bytes(dir_ / "work/sim.json"));
  EXPECT_EQ(c["predicted_ns"], sim["iteration_time_ns"]);
  const auto bad = fails({"dataset", "verify", "ds", "--set", "perturb.nope=1"});
  EXPECT_THAT(bad.err, HasSubstr("--set: field 'perturb.nope'"));
}

TEST_F(DatasetCli, IntegrityProblemsExitTwoAndReplayNothing) {
  ok({"dataset", "pack", "ds"});
  std::string bytes = read_file_bytes(ds("tiny/w2/profile.csv"));
  bytes[bytes.size() - 2] = '9';
  write_file_bytes(ds("tiny/w2/profile.csv"), bytes);
  write_file_bytes(ds("extra.txt"), "x");
  const auto r = fails({"dataset", "verify", "ds", "--report", "r.json"});
  EXPECT_THAT(r.err, HasSubstr("ssgd: error: ds/extra.txt: not listed in ds/manifest.json"));
  EXPECT_THAT(r.err, HasSubstr("ssgd: error: ds/tiny/w2/profile.csv: field 'sha256': changed: "));
  EXPECT_THAT(r.err, HasSubstr("ssgd: error: ds/manifest.json: 2 problem(s): the folder does not "
                               "match its manifest; nothing was replayed"));
  EXPECT_FALSE(fs::exists(dir_ / "work/r.json"));
}

TEST_F(DatasetCli, AReportInsideTheDatasetIsWrittenWithAWarning) {
  ok({"dataset", "pack", "ds"});
  const auto r = ok({"dataset", "verify", "ds", "--no-replay", "--report", "ds/verify.json"});
  EXPECT_THAT(r.err, HasSubstr("ds/verify.json is inside the dataset folder: the next verify will "
                               "find it unlisted"));
  EXPECT_THAT(fails({"dataset", "verify", "ds", "--no-replay"}).err,
              HasSubstr("ds/verify.json: not listed in ds/manifest.json"));
  // A hidden report is not part of the dataset.
  fs::remove(ds("verify.json"));
  const auto hidden = ok({"dataset", "verify", "ds/", "--report", "ds/.verify.json"});
  EXPECT_THAT(hidden.err, Not(HasSubstr("inside the dataset folder")));
}

TEST_F(DatasetCli, SchemaProblemsExitTwo) {
  ok({"dataset", "pack", "ds"});
  write_file_bytes(ds("manifest.json"), "{\"format\": ");
  EXPECT_THAT(fails({"dataset", "verify", "ds"}).err,
              HasSubstr("ssgd: error: ds/manifest.json: not valid JSON: "));
  fs::remove(ds("manifest.json"));
  EXPECT_THAT(fails({"dataset", "verify", "ds"}).err,
              HasSubstr("ds/manifest.json: no manifest: run `ssgd dataset pack` on the folder "
                        "first"));
  EXPECT_THAT(fails({"dataset", "verify", "nowhere"}).err,
              HasSubstr("ssgd: error: nowhere/manifest.json: no manifest"));
  fails({"dataset", "verify", "ds", "--jobs", "0"});
  fails({"dataset"});
}

TEST_F(DatasetCli, PackFailsWithoutWritingAManifest) {
  std::string entry = read_file_bytes(ds("tiny/w2/entry.json"));
  entry.replace(entry.find("\"p90\": 9200"), 11, "\"p90\": 8000");
  write_file_bytes(ds("tiny/w2/entry.json"), entry);
  const auto r = fails({"dataset", "pack", "ds"});
  EXPECT_THAT(r.err, HasSubstr("ssgd: error: ds/tiny/w2/entry.json: field "
                               "'measured.iteration_ns.p90': 8000 is below median (9000)"));
  EXPECT_FALSE(fs::exists(ds("manifest.json")));
  EXPECT_THAT(fails({"dataset", "pack", "nowhere"}).err,
              HasSubstr("ssgd: error: nowhere: no such folder"));
}

}  // namespace
