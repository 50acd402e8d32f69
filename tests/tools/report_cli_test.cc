// `ssgd report` run as a process (SSGD_CLI) in a fresh folder per test: every
// kind of input, several runs, bad inputs refused with a message naming the
// file and field (exit status 2, no output file), outputs checked before any
// work, and the same inputs giving the same bytes from any folder.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "common/gzip_stream.h"
#include "tests/support/cli_runner.h"
#include "tests/support/test_files.h"

namespace {

namespace fs = std::filesystem;
using ssgd::testing::read_file_bytes;
using ssgd::testing::write_file_bytes;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kSource = fs::path(SSGD_SOURCE_DIR);
const std::string kSimulate =
    (kSource / "tests/data/golden/simulate/scenario_v100_4x4_10gbe.json").string();
const std::string kSimulate2 =
    (kSource / "tests/data/golden/simulate/scenario_dgx1_8x8_ib100.json").string();
const std::string kScale =
    (kSource / "tests/data/golden/scale/resnet50_v100_4x4_10gbe.json").string();
const std::string kOptimize = (kSource / "tests/data/report/optimize.json").string();
const std::string kSweep = (kSource / "tests/data/report/sweep.jsonl").string();
constexpr int kBadInput = 2;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class ReportCliTest : public ssgd::testing::CliTempDirTest {
 protected:
  ssgd::testing::CliResult ssgd(std::vector<std::string> args) {
    args.insert(args.begin(), "report");
    return run_ssgd(SSGD_CLI, args);
  }
  std::string page(const std::string& name = "out.html") { return read_file_bytes(dir_ / name); }

  void expect_refused(const std::vector<std::string>& inputs, const std::string& message) {
    std::vector<std::string> args = inputs;
    args.insert(args.end(), {"-o", "out.html"});
    const auto r = ssgd(args);
    EXPECT_TRUE(r.exited) << r;
    EXPECT_EQ(r.status, kBadInput) << r;
    EXPECT_EQ(r.out, "") << r;
    EXPECT_THAT(r.err, HasSubstr(message)) << r;
    EXPECT_FALSE(fs::exists(dir_ / "out.html"));
    for (const auto& e : fs::directory_iterator(dir_)) {
      EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
    }
  }
};

TEST_F(ReportCliTest, OneSimulateRunGivesAPageWithItsChartsAndTables) {
  const auto r = ssgd({kSimulate, "-o", "out.html"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("ssgd report: 1 input -> out.html"));
  const std::string html = page();
  EXPECT_THAT(html, HasSubstr("<!DOCTYPE html>"));
  EXPECT_THAT(html, HasSubstr("(simulate report)"));
  EXPECT_THAT(html, HasSubstr("Iteration time breakdown"));
  EXPECT_THAT(html,
              HasSubstr("Critical path by task kind, per iteration (mean over 10 iterations)"));
  EXPECT_THAT(html, HasSubstr("Collectives of the last iteration"));
  EXPECT_THAT(html, HasSubstr("Link utilisation by kind"));
  EXPECT_THAT(html, HasSubstr("node1/nic0 -&gt; switch"));  // busiest links, escaped
  EXPECT_THAT(html, HasSubstr("<details><summary>Scenario (as replayed)</summary>"));
  EXPECT_THAT(html, HasSubstr("Made by ssgd "));
  EXPECT_THAT(html, HasSubstr("scenario_v100_4x4_10gbe.json"));
  EXPECT_EQ(count(html, "class=\"chart\""), 5u);  // breakdown, iterations, path, collectives, links
  EXPECT_EQ(html.find("Comparison of"), std::string::npos);
  EXPECT_EQ(html.find("<script src"), std::string::npos);
}

TEST_F(ReportCliTest, SeveralRunsAreComparedWithTheFirst) {
  const auto r = ssgd({kSimulate, kSimulate2, "-o", "out.html"});
  ASSERT_EQ(r.status, 0) << r;
  const std::string html = page();
  EXPECT_THAT(html, HasSubstr("Comparison of the 2 simulate runs"));
  EXPECT_THAT(html, HasSubstr("<td class=\"num\">reference</td>"));
  // Named by what tells them apart (their scenario files), not "1: file.json".
  EXPECT_THAT(html, HasSubstr("<tr><td>scenario=v100_4x4_10gbe.yaml</td>"));
  EXPECT_THAT(html, HasSubstr("<tr><td>scenario=dgx1_8x8_ib100.yaml</td>"));
  EXPECT_THAT(html, Not(HasSubstr("1: scenario_v100_4x4_10gbe.json")));
  EXPECT_EQ(count(html, "class=\"chart\""), 11u);  // the comparison, then 5 per run
}

// README's example: one input under two what-ifs, compared.
TEST_F(ReportCliTest, TwoWhatIfsOfOneInputAreNamedByTheKeysThatDiffer) {
  for (const auto& [out, overlap, network] :
       {std::tuple{"wfbp.json", "wfbp", "10gbe"}, std::tuple{"bsp.json", "bsp", "100gbe"}}) {
    const auto r = run_ssgd(
        SSGD_CLI, {"simulate", (kSource / "traces/datasets/resnet50_v100.csv").string(),
                   "--scenario", (kSource / "scenarios/v100_4x4_10gbe.yaml").string(), "--set",
                   std::string("policy.overlap=") + overlap, "--set",
                   std::string("network.inter_node=") + network, "--report", out, "-q"});
    ASSERT_TRUE(r.exited && r.status == 0) << r;
  }
  const auto r = ssgd({"wfbp.json", "bsp.json", "-o", "cmp.html"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  const std::string html = page("cmp.html");
  const std::string b = "policy.overlap=bsp, network.inter_node=100gbe";
  // The comparison table, the charts, the heading.
  EXPECT_THAT(html, HasSubstr("<tr><td>" + b + "</td>"));
  EXPECT_THAT(html, HasSubstr("\"run\":\"" + b + "\""));
  EXPECT_THAT(html, HasSubstr("2. " + b + " (simulate report, bsp.json)"));
  EXPECT_THAT(html, HasSubstr("<tr><td>policy.overlap</td><td>wfbp</td><td>bsp</td></tr>"));
  // Each report records its --set lines; the page names runs by the scenario's keys, not by them.
  EXPECT_THAT(page("bsp.json"), HasSubstr("\"policy.overlap=bsp\""));
  EXPECT_THAT(html, Not(HasSubstr("sets=")));
}

TEST_F(ReportCliTest, ASharedFabricRunShowsEachJobAloneAndShared) {
  const auto sim = run_ssgd(
      SSGD_CLI, {"simulate", (kSource / "traces/datasets/resnet50_v100.csv").string(),
                 "--scenario", (kSource / "scenarios/shared_fabric.yaml").string(), "--report",
                 "shared.json", "-q"});
  ASSERT_TRUE(sim.exited && sim.status == 0) << sim;
  ASSERT_EQ(ssgd({"shared.json", "-o", "out.html"}).status, 0);
  const std::string html = page();
  EXPECT_THAT(html, HasSubstr("<h3>Shared fabric</h3>"));
  EXPECT_THAT(html, HasSubstr("<tr><td>vgg16</td><td>training</td><td class=\"num\">4-7</td>"));
  EXPECT_THAT(html, HasSubstr("<tr><td>checkpoint</td><td>traffic</td>"));
  EXPECT_THAT(html, HasSubstr("Slowdown of each job on the shared fabric"));
}

TEST_F(ReportCliTest, ScaleAndOptimizeReportsOfOneKindAreOverlaid) {
  const auto scale = run_ssgd(
      SSGD_CLI, {"scale", (kSource / "traces/datasets/resnet50_v100.csv").string(), "--scenario",
                 (kSource / "scenarios/v100_4x4_10gbe.yaml").string(), "--set",
                 "policy.overlap=bsp", "--gpus", "1,2,4,8,16,32", "--report", "bsp.json", "-q"});
  ASSERT_TRUE(scale.exited && scale.status == 0) << scale;
  ASSERT_EQ(ssgd({kScale, "bsp.json", "-o", "out.html"}).status, 0);
  std::string html = page();
  EXPECT_THAT(html, HasSubstr("Comparison of the 2 scale reports"));
  EXPECT_EQ(count(html, "class=\"chart\""), 2u);  // one speedup, one efficiency chart
  EXPECT_THAT(html, HasSubstr("\"series\":\"policy=bsp\""));

  const auto opt = run_ssgd(
      SSGD_CLI, {"optimize", (kSource / "traces/datasets/resnet50_v100.csv").string(),
                 "--scenario", (kSource / "scenarios/dgx1_8x8_ib100.yaml").string(), "--set",
                 "policy.overlap=ddp", "--param", "policy.bucket_cap", "--from", "1MiB", "--to",
                 "64MiB", "--points", "5", "--report", "opt.json", "-q"});
  ASSERT_TRUE(opt.exited && opt.status == 0) << opt;
  ASSERT_EQ(ssgd({kOptimize, "opt.json", "-o", "opt.html"}).status, 0);
  html = page("opt.html");
  EXPECT_THAT(html, HasSubstr("Comparison of the 2 optimize reports of policy.bucket_cap"));
  EXPECT_EQ(count(html, "class=\"chart\""), 1u);
  EXPECT_THAT(html, HasSubstr("\"title\":\"policy.bucket_cap (MiB)\""));
}

// A scale report records its --set lines (the scenario itself is not in it):
// reports that differ by one are named by its key, and each lists them.
TEST_F(ReportCliTest, ScaleReportsThatDifferByASetAreNamedByIt) {
  for (const std::string net : {"10gbe", "100gbe"}) {
    const auto r =
        run_ssgd(SSGD_CLI, {"scale", (kSource / "traces/datasets/resnet50_v100.csv").string(),
                            "--scenario", (kSource / "scenarios/v100_4x4_10gbe.yaml").string(),
                            "--set", "network.inter_node=" + net, "--set", "policy.overlap=bsp",
                            "--gpus", "4,8", "--report", net + ".json", "-q"});
    ASSERT_TRUE(r.exited && r.status == 0) << r;
  }
  EXPECT_THAT(page("100gbe.json"),
              HasSubstr("\"scenario_sets\": [\n    \"network.inter_node=100gbe\""));
  ASSERT_EQ(ssgd({"10gbe.json", "100gbe.json", "-o", "out.html"}).status, 0);
  const std::string html = page();
  // policy.overlap is the report's own `policy`: the same in both, and not twice.
  EXPECT_THAT(html, HasSubstr("\"series\":\"network.inter_node=100gbe\""));
  EXPECT_THAT(
      html,
      HasSubstr("<tr><td>--set</td><td>network.inter_node=100gbe, policy.overlap=bsp</td></tr>"));
}

TEST_F(ReportCliTest, DatasetVerifyAndDiffReportsArePredictedAgainstMeasured) {
  const std::string verify =
      (kSource / "tests/data/golden/dataset_verify/cpu-cluster.json").string();
  const std::string diff = (kSource / "tests/data/report/diff.json").string();
  const auto r = ssgd({verify, diff, "-o", "ok.html"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  const std::string html = page("ok.html");
  EXPECT_THAT(html, HasSubstr("cpu-cluster.json</a> (dataset verify report)"));
  EXPECT_THAT(html, HasSubstr("diff.json</a> (diff report)"));
  EXPECT_THAT(html, HasSubstr("Error per case: (predicted - measured) / measured; median |error|"));
  EXPECT_THAT(html, HasSubstr("<tr><td>mlp-w2-unshaped-nooverlap</td><td>replay</td>"));
  EXPECT_THAT(html, HasSubstr("Measured against simulated: the iteration"));
  EXPECT_EQ(count(html, "class=\"chart\""), 4u);
  // A bad field of either is refused, naming the file and the field.
  std::string bad = read_file_bytes(diff);
  bad.replace(bad.find("\"busy_ns\": "), 11, "\"busy_ns\": -");
  write_file_bytes(dir_ / "bad-diff.json", bad);
  expect_refused({"bad-diff.json"},
                 "bad-diff.json: field 'matched[0].measured.busy_ns': must not be negative");
}

TEST_F(ReportCliTest, ScaleOptimizeAndSweepEachGetTheirCharts) {
  const auto r = ssgd({kScale, kOptimize, kSweep, "-o", "out.html"});
  ASSERT_EQ(r.status, 0) << r;
  const std::string html = page();
  EXPECT_THAT(html, HasSubstr("Speedup against GPUs (weak scaling)"));
  EXPECT_THAT(html, HasSubstr("Scaling efficiency against GPUs"));
  EXPECT_THAT(html, HasSubstr("\"ideal (speedup = GPUs)\""));
  EXPECT_THAT(html, HasSubstr("Iteration time against policy.bucket_cap"));
  EXPECT_THAT(html, HasSubstr("\"title\":\"policy.bucket_cap (MiB)\""));
  EXPECT_THAT(html, HasSubstr("datum.best"));
  EXPECT_THAT(html, HasSubstr("Iteration time against cluster.nodes"));
  EXPECT_THAT(html, HasSubstr("Throughput against cluster.nodes"));
  EXPECT_THAT(html, HasSubstr("coloured by policy.overlap"));
  EXPECT_EQ(count(html, "class=\"chart\""), 5u);
}

// What `ssgd sweep` writes, a failed point included, is what `ssgd report`
// reads: the failed point is in the table with its error, not in the charts.
TEST_F(ReportCliTest, ASweepsOwnResultsWithAFailedPointMakeAPage) {
  write_file_bytes(dir_ / "grid.yaml",
                   "input: " + (kSource / "traces/datasets/resnet50_v100.csv").string() +
                       "\nset:\n  iterations: 2\n  cluster.gpus_per_node: 2\n"
                       "  scaling.mode: strong\ngrid:\n  cluster.nodes: [1, 32]\n"
                       "  scaling.global_batch: [256, 32]\n");
  const auto sweep = run_ssgd(SSGD_CLI, {"sweep", "grid.yaml", "-o", "sweep.jsonl", "-q"});
  ASSERT_TRUE(sweep.exited && sweep.status == 0) << sweep;
  const auto r = ssgd({"sweep.jsonl", "-o", "out.html"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  const std::string html = page();
  EXPECT_THAT(html, HasSubstr("4 points; the keys that vary: cluster.nodes, scaling.global_batch"));
  EXPECT_THAT(html, HasSubstr("1 point failed (the table gives the error) and is not plotted"));
  EXPECT_THAT(html, HasSubstr("32 samples cannot be split over 64 GPUs"));
}

TEST_F(ReportCliTest, TheSameInputsGiveTheSameBytesFromAnyFolder) {
  ASSERT_EQ(ssgd({kSimulate, kScale, kOptimize, kSweep, "-o", "a.html"}).status, 0);
  fs::create_directories(dir_ / "sub");
  ASSERT_EQ(ssgd({kSimulate, kScale, kOptimize, kSweep, "-o", "sub/b.html"}).status, 0);
  EXPECT_EQ(page("a.html"), page("sub/b.html"));
}

TEST_F(ReportCliTest, RefusesInputsThatAreNotReports) {
  write_file_bytes(dir_ / "bad.json", "{\"iteration_time_ns\": 5}\n");
  expect_refused({"bad.json"}, "bad.json: expected a report of ssgd simulate");
  write_file_bytes(dir_ / "broken.json", "{\n\"ssgd_report_version\": 1,\n");
  expect_refused({kSimulate, "broken.json"}, "broken.json:3: not valid JSON");
  write_file_bytes(dir_ / "typed.json", "{\"ssgd_report_version\": 1, \"workers\": \"four\"}");
  expect_refused({"typed.json"},
                 "typed.json: field 'workers': expected a whole number, got the string \"four\"");
  expect_refused({kSource.string() + "/traces/datasets/resnet50_v100.csv"}, "not valid JSON");
  expect_refused({"missing.json"}, "missing.json");
  fs::create_directories(dir_ / "folder");
  expect_refused({"folder"}, "folder: field 'REPORT': is a folder");
}

TEST_F(ReportCliTest, RefusesInputsTooLargeToRead) {
  {
    std::ofstream big(dir_ / "big.json", std::ios::binary);
    big.seekp((64 << 20) + 1);
    big.put(' ');
  }
  expect_refused({"big.json"},
                 "big.json: 67108866 bytes; ssgd report reads inputs of at most 64 MiB");
}

TEST_F(ReportCliTest, ASimulateRunAndItsTimelineMakeAPageWithOneIterationPerRankGroup) {
  // ResNet-50 on 2 nodes x 2 GPUs of v100_4x4_10gbe, with `more` flags.
  const auto simulate = [&](std::vector<std::string> more) {
    std::vector<std::string> args = {
        "simulate", (kSource / "traces/datasets/resnet50_v100.csv").string(), "--scenario",
        (kSource / "scenarios/v100_4x4_10gbe.yaml").string(), "--set", "cluster.nodes=2", "--set",
        "cluster.gpus_per_node=2", "-q"};
    args.insert(args.end(), more.begin(), more.end());
    const auto r = run_ssgd(SSGD_CLI, args);
    EXPECT_TRUE(r.exited && r.status == 0) << r;
    return r.exited && r.status == 0;
  };
  const std::vector<std::string> straggler = {"--set", "iterations=3", "--set",
                                              "perturb.stragglers=2:30"};
  std::vector<std::string> first = straggler;
  first.insert(first.end(), {"--report", "r.json", "--timeline", "t.json.gz"});
  ASSERT_TRUE(simulate(first));
  const auto r = ssgd({"r.json", "t.json.gz", "-o", "out.html"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  const std::string html = page();
  EXPECT_THAT(html, HasSubstr("t.json.gz</a> (timeline)"));
  EXPECT_THAT(html, HasSubstr("Timeline of iteration 2 of t.json.gz"));
  EXPECT_THAT(html, HasSubstr("4 ranks in 2 groups"));
  EXPECT_THAT(html, HasSubstr("ranks 0-1, 3 (3 identical)"));
  EXPECT_THAT(html, HasSubstr("<tr><td>rank 2</td>"));
  EXPECT_THAT(html, HasSubstr("The simulate report before it on the command line: r.json."));
  EXPECT_THAT(html, HasSubstr("network \u00b7 all-reduce"));
  // Rates in decimal units, as the command line prints them (1 GB/s = 1e9 B/s).
  EXPECT_THAT(html, HasSubstr("1.1 GB/s"));
  EXPECT_THAT(html, Not(HasSubstr("iB/s")));
  // The timeline comes right after its run: the run's section, then the timeline's.
  EXPECT_LT(html.find("1. r.json (simulate report)"), html.find("2. t.json.gz (timeline)"));
  // The same without gzip: the same timeline.
  std::vector<std::string> plain = straggler;
  plain.insert(plain.end(), {"--timeline", "t.json"});
  ASSERT_TRUE(simulate(plain));
  ASSERT_EQ(ssgd({"t.json", "-o", "plain.html"}).status, 0);
  EXPECT_THAT(page("plain.html"), HasSubstr("4 ranks in 2 groups"));
  EXPECT_THAT(page("plain.html"), Not(HasSubstr("The file holds")));
  // A timeline of 2 of the job's 4 ranks says so.
  ASSERT_TRUE(simulate({"--set", "iterations=2", "--timeline", "cut.json", "--timeline-ranks", "2"}));
  ASSERT_EQ(ssgd({"cut.json", "-o", "cut.html"}).status, 0);
  EXPECT_THAT(page("cut.html"),
              HasSubstr("The file holds 2 of the job&#39;s 4 ranks (ssgd simulate --timeline-ranks"));
}

TEST_F(ReportCliTest, RefusesTimelinesThatAreNotSsgdsOrTooLarge) {
  // ssgd export's Chrome trace of a captured trace: not a simulated timeline.
  expect_refused({(kSource / "tests/data/export/small.json").string()},
                 "small.json: field 'traceEvents[4].args.iteration': missing: not a timeline of "
                 "ssgd simulate --timeline");
  write_file_bytes(dir_ / "t.json", "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":\"late\"}]}");
  expect_refused({"t.json"}, "t.json: field 'traceEvents[0].cat': missing");
  {
    std::ofstream out(dir_ / "cut.json.gz", std::ios::binary);
    ssgd::GzipWriter gz(out);
    gz.write("{\"traceEvents\":[");
    gz.finish();
  }
  expect_refused({"cut.json.gz"}, "cut.json.gz:1: not valid JSON");
  {
    // 65 MiB of spaces, a few dozen KiB compressed: the uncompressed size counts.
    std::ofstream out(dir_ / "bomb.json.gz", std::ios::binary);
    ssgd::GzipWriter gz(out, 1);
    const std::string spaces(1 << 20, ' ');
    for (int i = 0; i < 65; ++i) gz.write(spaces);
    gz.finish();
  }
  expect_refused({"bomb.json.gz"},
                 "bomb.json.gz: more than 64 MiB uncompressed; ssgd report reads inputs of at most "
                 "64 MiB");
}

TEST_F(ReportCliTest, ChecksTheOutputBeforeAnyWork) {
  write_file_bytes(dir_ / "r.json", read_file_bytes(kSimulate));
  const auto same = ssgd({"r.json", "-o", "r.json"});
  EXPECT_EQ(same.status, kBadInput) << same;
  EXPECT_THAT(same.err, HasSubstr("r.json: field '--output': is one of the command's inputs")) << same;
  EXPECT_EQ(read_file_bytes(dir_ / "r.json"), read_file_bytes(kSimulate));
  const auto r = ssgd({"r.json", "-o", "nowhere/out.html"});
  EXPECT_EQ(r.status, kBadInput) << r;
  EXPECT_THAT(r.err, HasSubstr("nowhere/out.html: field '--output': cannot write here: folder "
                               "'nowhere' does not exist"));
  const auto no_output = ssgd({"r.json"});
  EXPECT_EQ(no_output.status, kBadInput) << no_output;
  EXPECT_THAT(no_output.err, HasSubstr("--output is required"));
}

}  // namespace
