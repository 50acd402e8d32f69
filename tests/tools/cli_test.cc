// The `ssgd` command line, run as a real process (SSGD_CLI) in a fresh
// temporary folder per test, with stdout and stderr captured apart.
//
// Negative cases: a bad trace, CSV, scenario or flag must give a non-zero
// exit status (2 for bad input) without a crash, a message on stderr that
// names the file and the line, record or field, nothing on stdout, and no
// output file, not even a temporary one.
// Positive cases: a replay writes a valid, deterministic report and timeline;
// `presets` lists the links; a B-Caffe import replays to its closed form.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/cli_runner.h"
#include "tests/support/test_files.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kSource = fs::path(SSGD_SOURCE_DIR);
const fs::path kProfiles = kSource / "tests/data/profiles";
const fs::path kScenarios = kSource / "tests/data/scenarios";
const fs::path kMarked = kSource / "tests/data/traces/marked.txtpb";
const fs::path kBcaffeLog = kSource / "../shared/data/bcaffe/tmp8comm.log";

constexpr int kBadInput = 2;

using ssgd::testing::read_file_bytes;

using ssgd::testing::write_file_bytes;

std::uint32_t u32_at(const std::string& bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes.at(at + i));
  return v;
}

// (file offset, compressed length) of each chunk of a .ssgdt file, walked
// by its layout (traces/container_format.h).
std::vector<std::pair<std::size_t, std::size_t>> chunks_of(const std::string& bytes) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::size_t at = 16 + u32_at(bytes, 12) + 4;  // fixed header, metadata, header CRC
  while (at + 24 <= bytes.size() && bytes.compare(at, 4, "CHNK") == 0) {
    const std::size_t compressed = u32_at(bytes, at + 4);
    out.emplace_back(at, compressed);
    at += 24 + compressed;
  }
  return out;
}

using Result = ssgd::testing::CliResult;

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("ssgd_cli_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    work_ = root_ / "work";
    fs::create_directories(work_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // Runs `ssgd args...` with the work folder as its working directory.
  Result ssgd(const std::vector<std::string>& args) {
    Result r = ssgd::testing::run_cli(SSGD_CLI, args, work_, root_);
    if (!r.exited && r.signal == 0) ADD_FAILURE() << "could not run " << SSGD_CLI;
    return r;
  }

  // `ssgd simulate args... --report OUT.json --timeline TL.json`, expected to
  // fail with `status`, printing nothing on stdout and writing nothing.
  Result simulate_fails(std::vector<std::string> args, int status = kBadInput) {
    args.insert(args.begin(), "simulate");
    for (const char* a : {"--report", "OUT.json", "--timeline", "TL.json"}) args.emplace_back(a);
    Result r = ssgd(args);
    EXPECT_TRUE(r.exited) << r;
    EXPECT_EQ(r.status, status) << r;
    EXPECT_EQ(r.out, "") << r;
    EXPECT_THAT(r.err, HasSubstr("ssgd: error: ")) << r;
    expect_no_outputs();
    return r;
  }

  void expect_no_outputs() {
    EXPECT_FALSE(fs::exists(work_ / "OUT.json"));
    EXPECT_FALSE(fs::exists(work_ / "TL.json"));
    expect_no_temporaries();
  }

  void expect_no_temporaries() {
    for (const auto& e : fs::directory_iterator(work_)) {
      EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos)
          << "left behind: " << e.path();
    }
  }

  // Packs marked.txtpb into work/name with two events per chunk; returns its bytes.
  std::string pack_marked(const std::string& name = "marked.ssgdt") {
    const Result r =
        ssgd({"pack", kMarked.string(), "-o", name, "--events-per-chunk", "2"});
    EXPECT_TRUE(r.exited && r.status == 0) << r;
    EXPECT_THAT(r.out, HasSubstr("81 events in 41 chunks"));
    return read_file_bytes(work_ / name);
  }

  fs::path root_;
  fs::path work_;
};

// ---------------------------------------------------------------- traces

class CliTraceTest : public CliTest {
 protected:
  // marked.ssgdt cut in the middle of the compressed data of its last chunk.
  void write_cut_trace() {
    const std::string bytes = pack_marked("whole.ssgdt");
    const auto chunks = chunks_of(bytes);
    ASSERT_EQ(chunks.size(), 41u);
    const auto [at, compressed] = chunks.back();
    write_file_bytes(work_ / "cut.ssgdt", bytes.substr(0, at + 24 + compressed / 2));
    fs::remove(work_ / "whole.ssgdt");
  }
};

TEST_F(CliTraceTest, WholeTraceReplays) {
  pack_marked();
  const Result r = ssgd({"simulate", "marked.ssgdt", "--report", "r.json"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  // One worker: the sum of the hand-computed per-layer averages (with the
  // idle time each kernel owns, tests/data/traces/marked.txtpb), and the
  // measured update (sgd_update, after the last backward range), which
  // stands for workload.update_time since the scenario does not set it.
  const auto report = nlohmann::json::parse(read_file_bytes(work_ / "r.json"));
  EXPECT_EQ(report["iteration_time_ns"], 1250 + 410 + 700 + 1200 + 1400 + 780 + 950);
  EXPECT_EQ(report["scenario"]["workload"]["update_time_ns"], 950);
  EXPECT_EQ(report["input"]["kind"], "ssgd-trace");
  EXPECT_THAT(r.err, Not(HasSubstr("outside every forward/backward range")));
  // Beside the trace's own iterations (9 us each, of which the work holds
  // 6.69): the replay of its own job, 25.7% shorter, says so.
  EXPECT_EQ(report["traced_steps"]["mean_ns"], 9000);
  EXPECT_EQ(report["traced_steps"]["count"], 2);
  EXPECT_NEAR(report["traced_steps"]["this_run_percent"].get<double>(), -25.67, 0.01);
  EXPECT_THAT(r.out, HasSubstr("the trace's own steps"));
  EXPECT_THAT(report["traced_steps"]["note"].get<std::string>(),
              HasSubstr("25.7% shorter than its steps"));
  // Another job (two workers) is compared, not judged.
  const Result two = ssgd(
      {"simulate", "marked.ssgdt", "--set", "cluster.gpus_per_node=2", "--report", "two.json"});
  ASSERT_TRUE(two.exited && two.status == 0) << two;
  const auto two_report = nlohmann::json::parse(read_file_bytes(work_ / "two.json"));
  EXPECT_EQ(two_report["traced_steps"]["note"], "");
  // Set, the scenario's update time wins.
  const Result set = ssgd({"simulate", "marked.ssgdt", "--set", "workload.update_time=0ns",
                           "--report", "s.json"});
  ASSERT_TRUE(set.exited && set.status == 0) << set;
  const auto with_set = nlohmann::json::parse(read_file_bytes(work_ / "s.json"));
  EXPECT_EQ(with_set["iteration_time_ns"], 1250 + 410 + 700 + 1200 + 1400 + 780);
  EXPECT_EQ(with_set["scenario"]["workload"]["update_time_ns"], 0);
}

TEST_F(CliTraceTest, TruncatedTraceFailsWithoutAllowTruncated) {
  write_cut_trace();
  const Result r = simulate_fails({"cut.ssgdt"});
  EXPECT_THAT(r.err, HasSubstr("ssgd: error: cut.ssgdt: record 40"));
  EXPECT_THAT(r.err, HasSubstr("cut short"));
  EXPECT_THAT(r.err, HasSubstr("inside the data of chunk 40"));
  EXPECT_THAT(r.err, HasSubstr("--allow-truncated"));
}

TEST_F(CliTraceTest, TruncatedTraceReplaysWithAllowTruncated) {
  write_cut_trace();
  const Result r = ssgd({"simulate", "cut.ssgdt", "--allow-truncated", "--report", "r.json",
                         "--timeline", "t.json"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.err, HasSubstr("cut short"));
  EXPECT_THAT(r.out, HasSubstr("iteration time"));
  const auto report = nlohmann::json::parse(read_file_bytes(work_ / "r.json"));
  EXPECT_TRUE(report.contains("iteration_time_ns"));
  EXPECT_TRUE(fs::exists(work_ / "t.json"));
}

// info ends with what a replay would take from the trace: its layers,
// iterations and per-iteration times and gradient bytes (or why none).
TEST_F(CliTraceTest, InfoSummarisesTheProfile) {
  pack_marked();
  const Result r = ssgd({"info", "marked.ssgdt"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.out, HasSubstr("as a profile     "));
  EXPECT_THAT(r.out, HasSubstr(" layer(s) over 1 rank(s), "));
  EXPECT_THAT(r.out, HasSubstr("an iteration"));
  // A trace of graph nodes has no layers: said so.
  ASSERT_EQ(ssgd({"pack", (kSource / "tests/data/traces/graph.txtpb").string(), "-o", "g.ssgdt"}).status, 0);
  EXPECT_THAT(ssgd({"info", "g.ssgdt"}).out, HasSubstr("as a profile     none: "));
  // A GPU capture: its kernels by class, on the GPU the trace names.
  const Result h200 =
      ssgd({"info", (kSource / "traces/datasets/h200-pytorch/resnet50-fp32/trace.ssgdt").string()});
  ASSERT_EQ(h200.status, 0) << h200;
  EXPECT_THAT(h200.out, HasSubstr("kernels on NVIDIA H200: gemm "));
  EXPECT_THAT(h200.out, HasSubstr("norm "));
}

// workload.fp32_matmul through simulate: the moved part is labelled with the
// unit it runs on, where the GPU has it, and the JSON report says the key.
TEST_F(CliTraceTest, Fp32MatmulIsShownWhereTheWorkRuns) {
  const std::string bert =
      (kSource / "traces/datasets/h200-pytorch/bert-base/trace.ssgdt").string();
  const Result a100 = ssgd({"simulate", bert, "--set", "platform.gpu.model=a100-sxm4-80gb", "--set",
                            "workload.fp32_matmul=tf32", "--report", "a100.json"});
  ASSERT_EQ(a100.status, 0) << a100;
  EXPECT_THAT(a100.out, HasSubstr("by rate: fp32 83.4% x0.429 (as tf32)"));
  const auto report = nlohmann::json::parse(read_file_bytes(work_ / "a100.json"));
  EXPECT_EQ(report.at("gpu").at("fp32_matmul"), "tf32");
  EXPECT_EQ(report.at("gpu").at("model_from"), "platform.gpu.model");
  // A V100 has no TF32 units: no label, and a note.
  const Result v100 = ssgd({"simulate", bert, "--set", "platform.gpu.model=v100-sxm2-16gb", "--set",
                            "workload.fp32_matmul=tf32"});
  ASSERT_EQ(v100.status, 0) << v100;
  EXPECT_THAT(v100.out, Not(HasSubstr("(as tf32)")));
  EXPECT_THAT(v100.out, HasSubstr("v100-sxm2-16gb has no tf32 units"));
  // No GPU named: the capture's own.
  const Result own =
      ssgd({"simulate", bert, "--set", "workload.fp32_matmul=tf32", "--report", "own.json"});
  ASSERT_EQ(own.status, 0) << own;
  EXPECT_THAT(own.out, HasSubstr("gpu: h200 (the capture's), measured on NVIDIA H200"));
  EXPECT_EQ(nlohmann::json::parse(read_file_bytes(work_ / "own.json")).at("gpu").at("model_from"),
            "capture");
}

TEST_F(CliTraceTest, InfoOnTruncatedTraceWarns) {
  write_cut_trace();
  const Result r = ssgd({"info", "cut.ssgdt"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.err, HasSubstr("cut.ssgdt: cut short"));
  EXPECT_THAT(r.out, HasSubstr("CUT SHORT"));
}

TEST_F(CliTraceTest, TraceCutInsideHeaderFails) {
  write_file_bytes(work_ / "head.ssgdt", pack_marked("whole.ssgdt").substr(0, 20));
  fs::remove(work_ / "whole.ssgdt");
  for (const auto& extra : {std::vector<std::string>{}, std::vector<std::string>{"--allow-truncated"}}) {
    std::vector<std::string> args{"head.ssgdt"};
    args.insert(args.end(), extra.begin(), extra.end());
    const Result r = simulate_fails(args);
    EXPECT_THAT(r.err, HasSubstr("head.ssgdt: header cut short"));
  }
  const Result info = ssgd({"info", "head.ssgdt"});
  EXPECT_TRUE(info.exited) << info;
  EXPECT_EQ(info.status, kBadInput) << info;
  EXPECT_THAT(info.err, HasSubstr("head.ssgdt: header cut short"));
}

TEST_F(CliTraceTest, WrongMagic) {
  std::string bytes = pack_marked("whole.ssgdt");
  fs::remove(work_ / "whole.ssgdt");
  bytes[0] = 'X';
  write_file_bytes(work_ / "magic.ssgdt", bytes);
  // A damaged magic is still taken for a trace, and the reader says what is wrong.
  const Result r = simulate_fails({"magic.ssgdt"});
  EXPECT_THAT(r.err, HasSubstr("magic.ssgdt: wrong magic"));
  const Result info = ssgd({"info", "magic.ssgdt"});
  EXPECT_TRUE(info.exited) << info;
  EXPECT_EQ(info.status, kBadInput) << info;
  EXPECT_THAT(info.err, HasSubstr("magic.ssgdt: wrong magic"));
  EXPECT_EQ(info.out, "");
}

TEST_F(CliTraceTest, CorruptedChunk) {
  std::string bytes = pack_marked("whole.ssgdt");
  fs::remove(work_ / "whole.ssgdt");
  const auto chunks = chunks_of(bytes);
  ASSERT_GE(chunks.size(), 2u);
  const auto [at, compressed] = chunks[1];
  bytes[at + 24 + compressed / 2] ^= 0x5A;
  write_file_bytes(work_ / "corrupt.ssgdt", bytes);
  for (const auto& extra : {std::vector<std::string>{}, std::vector<std::string>{"--allow-truncated"}}) {
    std::vector<std::string> args{"corrupt.ssgdt"};
    args.insert(args.end(), extra.begin(), extra.end());
    const Result r = simulate_fails(args);
    EXPECT_THAT(r.err, HasSubstr("corrupt.ssgdt: record 1: chunk 1 (byte offset " +
                                 std::to_string(at) + "): CRC-32C mismatch"));
  }
  const Result info = ssgd({"info", "corrupt.ssgdt"});
  EXPECT_TRUE(info.exited) << info;
  EXPECT_EQ(info.status, kBadInput) << info;
  EXPECT_THAT(info.err, HasSubstr("chunk 1"));
}

// ---------------------------------------------------------------- CSV

// A run refused as a list schedule (priority scheduling) runs again as
// events from the same build: what the build says it says once.
TEST_F(CliTest, ARunRefusedAsAListScheduleWarnsOnce) {
  const Result r = ssgd({"simulate", (kProfiles / "with_comm.csv").string(), "--set",
                         "cluster.nodes=4", "--set", "policy.overlap=priority", "-q"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  const std::string warning = "policy priority merges gradients";
  const auto first = r.err.find(warning);
  ASSERT_NE(first, std::string::npos) << r;
  EXPECT_EQ(r.err.find(warning, first + 1), std::string::npos) << r;
}

TEST_F(CliTest, CsvMissingColumn) {
  const Result r = simulate_fails({(kProfiles / "missing_column.csv").string()});
  EXPECT_THAT(r.err, HasSubstr("missing_column.csv:2: field 'grad_bytes': missing column"));
}

TEST_F(CliTest, CsvNegativeTime) {
  const Result r = simulate_fails({(kProfiles / "negative_time.csv").string()});
  EXPECT_THAT(r.err, HasSubstr("negative_time.csv:4: field 'backward_ns'"));
  EXPECT_THAT(r.err, HasSubstr("-5"));
}

TEST_F(CliTest, CsvNonNumeric) {
  const Result r = simulate_fails({(kProfiles / "non_numeric.csv").string()});
  EXPECT_THAT(r.err, HasSubstr("non_numeric.csv:3: field 'forward_ns'"));
  EXPECT_THAT(r.err, HasSubstr("'fast'"));
}

TEST_F(CliTest, CsvEmpty) {
  const Result r = simulate_fails({(kProfiles / "empty.csv").string()});
  EXPECT_THAT(r.err, HasSubstr("empty.csv: empty file"));
}

// ---------------------------------------------------------------- scenarios

const std::string kGood = (kProfiles / "good.csv").string();

TEST_F(CliTest, ScenarioUnknownKey) {
  const Result r =
      simulate_fails({kGood, "--scenario", (kScenarios / "unknown_key.yaml").string()});
  EXPECT_THAT(r.err, HasSubstr("unknown_key.yaml:4: field 'cluster.nodez'"));
  EXPECT_THAT(r.err, HasSubstr("did you mean 'cluster.nodes'"));
}

TEST_F(CliTest, ScenarioWrongType) {
  const Result r = simulate_fails({kGood, "--scenario", (kScenarios / "wrong_type.yaml").string()});
  EXPECT_THAT(r.err, HasSubstr("wrong_type.yaml:4: field 'cluster.nodes'"));
  EXPECT_THAT(r.err, HasSubstr("'four'"));
}

TEST_F(CliTest, ScenarioBadUnit) {
  const Result r = simulate_fails({kGood, "--scenario", (kScenarios / "bad_unit.yaml").string()});
  EXPECT_THAT(r.err, HasSubstr("bad_unit.yaml:4: field 'workload.io_time'"));
  EXPECT_THAT(r.err, HasSubstr("'parsecs'"));
}

TEST_F(CliTest, ScenarioZeroNodes) {
  const Result r = simulate_fails({kGood, "--scenario", (kScenarios / "zero_nodes.yaml").string()});
  EXPECT_THAT(r.err, HasSubstr("zero_nodes.yaml:4: field 'cluster.nodes'"));
  EXPECT_THAT(r.err, HasSubstr("got 0"));
}

TEST_F(CliTest, ScenarioNegativeNodes) {
  const Result r =
      simulate_fails({kGood, "--scenario", (kScenarios / "negative_nodes.yaml").string()});
  EXPECT_THAT(r.err, HasSubstr("negative_nodes.yaml:3: field 'cluster.nodes'"));
  EXPECT_THAT(r.err, HasSubstr("got -2"));
}

TEST_F(CliTest, SetZeroNodes) {
  const Result r = simulate_fails({kGood, "--set", "cluster.nodes=0"});
  EXPECT_THAT(r.err, HasSubstr("--set: field 'cluster.nodes'"));
  EXPECT_THAT(r.err, HasSubstr("got 0"));
}

TEST_F(CliTest, SetNegativeNodes) {
  const Result r = simulate_fails({kGood, "--set", "cluster.nodes=-3"});
  EXPECT_THAT(r.err, HasSubstr("--set: field 'cluster.nodes'"));
  EXPECT_THAT(r.err, HasSubstr("got -3"));
}

TEST_F(CliTest, SetOverridesScenarioFileAndIsChecked) {
  // A good file, then a bad --set: the --set is what is reported.
  const Result r = simulate_fails({kGood, "--scenario",
                                   (kSource / "scenarios/v100_4x4_10gbe.yaml").string(), "--set",
                                   "cluster.nodes=0"});
  EXPECT_THAT(r.err, HasSubstr("--set: field 'cluster.nodes'"));
}

TEST_F(CliTest, SetWithoutEquals) {
  const Result r = simulate_fails({kGood, "--set", "cluster.nodes"});
  EXPECT_THAT(r.err, HasSubstr("--set"));
  EXPECT_THAT(r.err, HasSubstr("key.path=value"));
  EXPECT_THAT(r.err, HasSubstr("'cluster.nodes'"));
}

// ---------------------------------------------------------------- other inputs

TEST_F(CliTest, MissingInputFile) {
  const Result r = simulate_fails({"no_such_input.csv"});
  EXPECT_THAT(r.err, HasSubstr("no_such_input.csv: no such file"));
}

TEST_F(CliTest, UnrecognisedInput) {
  write_file_bytes(work_ / "notes.txt", "The quick brown fox\njumps over the lazy dog.\n");
  const Result r = simulate_fails({"notes.txt"});
  EXPECT_THAT(r.err, HasSubstr("notes.txt:1: not a recognised input"));
}

TEST_F(CliTest, MissingScenarioFile) {
  const Result r = simulate_fails({kGood, "--scenario", "no_such_scenario.yaml"});
  EXPECT_THAT(r.err, HasSubstr("no_such_scenario.yaml"));
}

TEST_F(CliTest, NoSubcommandIsBadInput) {
  const Result r = ssgd({});
  EXPECT_TRUE(r.exited) << r;
  EXPECT_EQ(r.status, kBadInput) << r;
}

// ---------------------------------------------------------------- positive

std::vector<std::string> resnet_args(const std::string& report, const std::string& timeline) {
  return {"simulate",
          (kSource / "traces/datasets/resnet50_v100.csv").string(),
          "--scenario",
          (kSource / "scenarios/v100_4x4_10gbe.yaml").string(),
          "--report",
          report,
          "--timeline",
          timeline};
}

TEST_F(CliTest, SimulateWritesReportAndTimeline) {
  const Result r = ssgd(resnet_args("r.json", "t.json"));
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.out, HasSubstr("iteration time"));
  EXPECT_THAT(r.err, Not(HasSubstr("error")));
  const auto report = nlohmann::json::parse(read_file_bytes(work_ / "r.json"));
  for (const char* key : {"iteration_time_ns", "throughput_samples_per_s", "scaling_efficiency",
                          "breakdown"}) {
    EXPECT_TRUE(report.contains(key)) << key;
  }
  EXPECT_GT(report["iteration_time_ns"].get<std::int64_t>(), 0);
  EXPECT_GT(report["throughput_samples_per_s"].get<double>(), 0.0);
  EXPECT_GT(report["scaling_efficiency"].get<double>(), 0.0);
  EXPECT_LE(report["scaling_efficiency"].get<double>(), 1.0);
  for (const char* key : {"compute_ns", "exposed_comm_ns", "io_ns", "idle_ns"}) {
    ASSERT_TRUE(report["breakdown"].contains(key)) << key;
    EXPECT_GE(report["breakdown"][key].get<std::int64_t>(), 0) << key;
  }
  const auto timeline = nlohmann::json::parse(read_file_bytes(work_ / "t.json"));
  EXPECT_FALSE(timeline.empty());
  expect_no_temporaries();
}

TEST_F(CliTest, SharedFabricJobsAreReportedWithTheirSlowdown) {
  const std::vector<std::string> args = {
      "simulate", (kSource / "traces/datasets/resnet50_v100.csv").string(), "--scenario",
      (kSource / "scenarios/shared_fabric.yaml").string(), "--report", "r.json"};
  Result r = ssgd(args);
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.out, HasSubstr("shared fabric: 3 jobs on 8 nodes"));
  const auto report = nlohmann::json::parse(read_file_bytes(work_ / "r.json"));
  const auto& jobs = report.at("shared_fabric").at("jobs");
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0]["name"], "main");
  EXPECT_EQ(jobs[1]["name"], "vgg16");
  EXPECT_EQ(jobs[2]["kind"], "traffic");
  for (const auto& j : jobs) {
    EXPECT_GT(j["alone_ns"].get<std::int64_t>(), 0) << j;
    EXPECT_GE(j["shared_ns"].get<std::int64_t>(), j["alone_ns"].get<std::int64_t>()) << j;
    EXPECT_GT(j["slowdown"].get<double>(), 1.0) << j;  // all three cross leaf 1's uplinks
  }
  // A job whose profile cannot be read stops the run before anything is written.
  std::vector<std::string> bad = args;
  bad.insert(bad.end(), {"--set", "jobs.0.profile=missing.csv"});
  fs::remove(work_ / "r.json");
  r = ssgd(bad);
  EXPECT_EQ(r.status, kBadInput) << r;
  EXPECT_THAT(r.err, HasSubstr("missing.csv"));
  EXPECT_TRUE(r.out.empty()) << r;
  EXPECT_FALSE(fs::exists(work_ / "r.json"));
  expect_no_temporaries();
}

TEST_F(CliTest, OptimizeFindsTheFastestSettingOfTheCurveItPrints) {
  const std::string resnet = (kSource / "traces/datasets/resnet50_v100.csv").string();
  const std::vector<std::string> common = {"--set", "cluster.nodes=4", "--set",
                                           "cluster.gpus_per_node=4", "--set", "policy.overlap=ddp"};
  std::vector<std::string> args = {"optimize", resnet, "--param", "policy.bucket_cap",
                                   "--values", "1MiB,8MiB,64MiB", "--report", "opt.json"};
  args.insert(args.end(), common.begin(), common.end());
  Result r = ssgd(args);
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.out, HasSubstr("<- best"));
  const auto report = nlohmann::json::parse(read_file_bytes(work_ / "opt.json"));
  ASSERT_EQ(report["curve"].size(), 3u);
  std::int64_t best = INT64_MAX;
  for (const auto& p : report["curve"]) {
    // Each point is what `simulate` gives with that value.
    std::vector<std::string> sim = {"simulate", resnet, "-q", "--report", "one.json", "--set",
                                    "policy.bucket_cap=" + p["value"].get<std::string>()};
    sim.insert(sim.end(), common.begin(), common.end());
    ASSERT_EQ(ssgd(sim).status, 0);
    const auto one = nlohmann::json::parse(read_file_bytes(work_ / "one.json"));
    EXPECT_EQ(one["iteration_time_ns"], p["iteration_time_ns"]) << p;
    best = std::min(best, p["iteration_time_ns"].get<std::int64_t>());
  }
  EXPECT_EQ(report["best"]["iteration_time_ns"].get<std::int64_t>(), best);

  // Values spaced by ssgd are written in the largest unit that keeps them
  // exact, in the curve and in the suggestion.
  std::vector<std::string> spaced = {"optimize", resnet, "--param", "policy.bucket_cap", "--from",
                                     "1MiB", "--to", "64MiB", "--points", "4", "--report", "sp.json"};
  spaced.insert(spaced.end(), common.begin(), common.end());
  r = ssgd(spaced);
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.out, ::testing::MatchesRegex("(.|\n)*best: --set policy.bucket_cap=[0-9]+MiB:(.|\n)*"));
  std::vector<std::string> values;
  const auto spaced_report = nlohmann::json::parse(read_file_bytes(work_ / "sp.json"));
  for (const auto& p : spaced_report["curve"]) values.push_back(p["value"].get<std::string>());
  EXPECT_EQ(values, (std::vector<std::string>{"1MiB", "4MiB", "16MiB", "64MiB"}));
  std::vector<std::string> odd = {"optimize", resnet, "--param", "policy.bucket_cap", "--from",
                                  "1000B", "--to", "3000B", "--points", "2", "--linear",
                                  "--report", "odd.json"};
  odd.insert(odd.end(), common.begin(), common.end());
  ASSERT_EQ(ssgd(odd).status, 0);
  EXPECT_EQ(nlohmann::json::parse(read_file_bytes(work_ / "odd.json"))["curve"][1]["value"], "3000B");

  // Bad searches fail before anything runs, naming the flag.
  r = ssgd({"optimize", resnet, "--param", "policy.bucket_kap", "--values", "1MiB"});
  EXPECT_EQ(r.status, kBadInput) << r;
  EXPECT_THAT(r.err, HasSubstr("unknown scenario key 'policy.bucket_kap'"));
  r = ssgd({"optimize", resnet, "--param", "policy.bucket_cap", "--from", "8MiB", "--to", "1MiB"});
  EXPECT_EQ(r.status, kBadInput) << r;
  EXPECT_THAT(r.err, HasSubstr("field '--to'"));
  r = ssgd({"optimize", resnet, "--param", "policy.bucket_cap", "--values", "1MiB,0B"});
  EXPECT_EQ(r.status, kBadInput) << r;
  EXPECT_THAT(r.err, HasSubstr("policy.bucket_cap"));
  r = ssgd({"optimize", resnet, "--param", "policy.overlap", "--from", "a", "--to", "b"});
  EXPECT_EQ(r.status, kBadInput) << r;
  EXPECT_THAT(r.err, HasSubstr("give --values instead"));
  EXPECT_TRUE(r.out.empty());
}

// Strategy x prefetch, every combination, each with its memory per GPU; the
// best is the fastest that fits platform.gpu.memory, and when none fits the
// report says so.
TEST_F(CliTest, OptimizeSearchesStrategiesForTheFastestThatFits) {
  const std::string bert = (kSource / "traces/datasets/bert_base_v100.csv").string();
  const std::vector<std::string> base = {"optimize", bert, "--set", "platform.preset=hgx_h100",
                                         "--set", "cluster.nodes=2", "--set", "iterations=3",
                                         "--param", "sharding.strategy", "--values", "none,zero2,zero3",
                                         "--also", "sharding.forward_prefetch=0,1", "--report",
                                         "opt.json"};
  // 5 GiB a GPU: replicated BERT-base (1.6 GiB of state and 3.9 GiB of
  // activations) does not fit; sharded, it does.
  std::vector<std::string> args = base;
  args.insert(args.end(), {"--set", "platform.gpu.memory=5GiB"});
  Result r = ssgd(args);
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  auto report = nlohmann::json::parse(read_file_bytes(work_ / "opt.json"));
  ASSERT_EQ(report["curve"].size(), 6u);
  EXPECT_EQ(report["curve"][0]["value"], "none sharding.forward_prefetch=0");
  EXPECT_EQ(report["curve"][0]["fits"], false);
  EXPECT_EQ(report["gpu_memory_bytes"], 5LL << 30);
  std::int64_t best = INT64_MAX;
  for (const auto& p : report["curve"]) {
    EXPECT_GT(p["memory_bytes"].get<std::int64_t>(), 0) << p;
    EXPECT_EQ(p["activations_known"], true) << p;
    if (p["fits"] == true) best = std::min(best, p["iteration_time_ns"].get<std::int64_t>());
  }
  EXPECT_EQ(report["best"]["iteration_time_ns"].get<std::int64_t>(), best);
  EXPECT_EQ(report["best"]["fits"], true);
  EXPECT_EQ(report["none_fit"], false);
  EXPECT_THAT(r.out, HasSubstr("memory/GPU"));
  EXPECT_THAT(r.out, HasSubstr("memory left out"));
  // 1 MiB: nothing fits; the fastest of all is named, and said not to fit.
  args = base;
  args.insert(args.end(), {"--set", "platform.gpu.memory=1MiB"});
  r = ssgd(args);
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  report = nlohmann::json::parse(read_file_bytes(work_ / "opt.json"));
  EXPECT_EQ(report["none_fit"], true);
  EXPECT_THAT(r.out, HasSubstr("no setting fits"));
  // Bad --also values are named by the flag.
  for (const char* also : {"sharding.forward_prefetch", "sharding.forward_prefech=1",
                           "sharding.forward_prefetch=-1"}) {
    std::vector<std::string> bad = {"optimize", bert, "--param", "sharding.strategy", "--values",
                                    "zero3", "--also", also, "--set", "cluster.nodes=2"};
    r = ssgd(bad);
    EXPECT_EQ(r.status, kBadInput) << r;
    EXPECT_THAT(r.err, HasSubstr("field '--also'")) << also;
    EXPECT_TRUE(r.out.empty());
  }
}

TEST_F(CliTest, FailedTimelineLeavesNoReportEither) {
  const Result r = ssgd({"simulate", (kSource / "tests/data/profiles/good.csv").string(),
                         "--report", "OUT.json", "--timeline", "no_such_dir/TL.json"});
  EXPECT_TRUE(r.exited) << r;
  EXPECT_EQ(r.status, kBadInput) << r;
  EXPECT_THAT(r.err, HasSubstr("no_such_dir/TL.json: field '--timeline'"));
  EXPECT_THAT(r.err, HasSubstr("folder 'no_such_dir' does not exist"));
  EXPECT_FALSE(fs::exists(work_ / "OUT.json"));
  expect_no_temporaries();
}

TEST_F(CliTest, OutputsMustBeDistinctFiles) {
  const std::string good = (kSource / "tests/data/profiles/good.csv").string();
  Result r = ssgd({"simulate", good, "--report", "same.json", "--timeline", "./same.json"});
  EXPECT_EQ(r.status, kBadInput) << r;
  EXPECT_THAT(r.err, HasSubstr("--report and --timeline cannot be the same file"));
  fs::create_directory(work_ / "adir");
  r = ssgd({"simulate", good, "--report", "rep.json", "--timeline", "adir"});
  EXPECT_EQ(r.status, kBadInput) << r;
  EXPECT_THAT(r.err, HasSubstr("adir: field '--timeline': cannot write here: is a folder"));
  EXPECT_FALSE(fs::exists(work_ / "same.json"));
  EXPECT_FALSE(fs::exists(work_ / "rep.json"));
  expect_no_temporaries();
}

TEST_F(CliTest, DurationsThatWouldOverflowTheClockAreRefused) {
  const std::string good = (kSource / "tests/data/profiles/good.csv").string();
  const Result r = simulate_fails({good, "--set", "workload.io_time=9000000000s"});
  EXPECT_THAT(r.err, HasSubstr("field 'workload.io_time': must be at most 1000000s"));
}

TEST_F(CliTraceTest, TraceCutInFirstChunkSaysCutShort) {
  std::string bytes = pack_marked("whole.ssgdt");
  fs::remove(work_ / "whole.ssgdt");
  // Keep the header and half of chunk 0: no whole chunk is left.
  const auto header_end = bytes.find("CHNK");
  ASSERT_NE(header_end, std::string::npos);
  write_file_bytes(work_ / "first.ssgdt", bytes.substr(0, header_end + 30));
  for (const auto& extra : {std::vector<std::string>{}, std::vector<std::string>{"--allow-truncated"}}) {
    std::vector<std::string> args{"first.ssgdt"};
    args.insert(args.end(), extra.begin(), extra.end());
    const Result r = simulate_fails(args);
    EXPECT_THAT(r.err, HasSubstr("cut short"));
  }
}

TEST_F(CliTest, SimulateIsDeterministic) {
  const Result a = ssgd(resnet_args("r1.json", "t1.json"));
  ASSERT_TRUE(a.exited && a.status == 0) << a;
  const Result b = ssgd(resnet_args("r2.json", "t2.json"));
  ASSERT_TRUE(b.exited && b.status == 0) << b;
  const std::string r1 = read_file_bytes(work_ / "r1.json"), r2 = read_file_bytes(work_ / "r2.json");
  const std::string t1 = read_file_bytes(work_ / "t1.json"), t2 = read_file_bytes(work_ / "t2.json");
  EXPECT_FALSE(r1.empty());
  EXPECT_FALSE(t1.empty());
  EXPECT_TRUE(r1 == r2) << "reports differ";
  EXPECT_TRUE(t1 == t2) << "timelines differ";
}

TEST_F(CliTest, Presets) {
  const Result r = ssgd({"presets"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.out, HasSubstr("10gbe"));
  EXPECT_THAT(r.out, HasSubstr("wfbp"));
  EXPECT_THAT(r.out, HasSubstr("cluster.nodes"));
}

TEST_F(CliTest, BcaffeImportReplaysToClosedForm) {
  if (!fs::exists(kBcaffeLog)) {
    GTEST_SKIP() << "reference data not found at " << kBcaffeLog;
  }
  const Result imp = ssgd({"import", "bcaffe", kBcaffeLog.string(), "-o", "p.csv"});
  ASSERT_TRUE(imp.exited && imp.status == 0) << imp;
  ASSERT_TRUE(fs::exists(work_ / "p.csv"));
  const Result r = ssgd({"simulate", "p.csv", "--scenario",
                         (kSource / "scenarios/bcaffe_10gbe.yaml").string(), "--set",
                         "cluster.nodes=8", "--report", "r.json"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  const auto report = nlohmann::json::parse(read_file_bytes(work_ / "r.json"));
  EXPECT_EQ(report["workers"], 8);
  EXPECT_EQ(report["input"]["kind"], "layer-profile-csv");
  ASSERT_TRUE(report.contains("closed_form_iteration_time_ns"));
  EXPECT_GT(report["iteration_time_ns"].get<std::int64_t>(), 0);
  EXPECT_EQ(report["iteration_time_ns"], report["closed_form_iteration_time_ns"]);
}

}  // namespace
