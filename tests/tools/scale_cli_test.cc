// `ssgd scale` and the scaling section of `ssgd simulate`, run as real
// processes (SSGD_CLI) in a fresh folder per test: a row per GPU count that
// agrees with `ssgd simulate` at that count, strong scaling's fixed global
// batch, and bad flags and scaling keys refused with a message naming them,
// exit status 2, nothing on stdout and no report file.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/cli_runner.h"
#include "tests/support/test_files.h"

namespace {

namespace fs = std::filesystem;
using ssgd::testing::read_file_bytes;
using ssgd::testing::write_file_bytes;
using ::testing::HasSubstr;

const fs::path kSource = fs::path(SSGD_SOURCE_DIR);
const std::string kResnet = (kSource / "traces/datasets/resnet50_v100.csv").string();
constexpr int kBadInput = 2;

class ScaleCliTest : public ssgd::testing::CliTempDirTest {
 protected:
  ssgd::testing::CliResult ssgd(const std::vector<std::string>& args) {
    return run_ssgd(SSGD_CLI, args);
  }
  nlohmann::json json(const std::string& name) {
    return nlohmann::json::parse(read_file_bytes(dir_ / name));
  }

  // `ssgd scale args... --report OUT.json` fails with exit status 2 and a
  // message naming `field`, printing nothing and writing nothing.
  void expect_refused(std::vector<std::string> args, const std::string& field,
                      const std::string& reason) {
    args.insert(args.begin(), "scale");
    args.insert(args.end(), {"--report", "OUT.json"});
    const auto r = ssgd(args);
    EXPECT_TRUE(r.exited) << r;
    EXPECT_EQ(r.status, kBadInput) << r;
    EXPECT_EQ(r.out, "") << r;
    EXPECT_THAT(r.err, HasSubstr("field '" + field + "'")) << r;
    EXPECT_THAT(r.err, HasSubstr(reason)) << r;
    EXPECT_FALSE(fs::exists(dir_ / "OUT.json"));
    for (const auto& e : fs::directory_iterator(dir_)) {
      EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
    }
  }
};

const std::vector<std::string> kCluster = {"--set", "cluster.gpus_per_node=4", "--set",
                                           "network.inter_node=25gbe"};

TEST_F(ScaleCliTest, WeakScalingPrintsARowPerGpuCountThatSimulateAgreesWith) {
  std::vector<std::string> args = {"scale",      kResnet,    "--gpus",
                                   "1,2,4,8,16", "--report", "scale.json"};
  args.insert(args.end(), kCluster.begin(), kCluster.end());
  const auto r = ssgd(args);
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.out, HasSubstr("weak scaling at 64 samples per GPU"));
  for (const char* row : {"\n       1      1          64            64 ",
                          "\n       2      1          64           128 ",
                          "\n       4      1          64           256 ",
                          "\n       8      2          64           512 ",
                          "\n      16      4          64          1024 "}) {
    EXPECT_THAT(r.out, HasSubstr(row)) << r;
  }
  const auto report = json("scale.json");
  EXPECT_EQ(report["mode"], "weak");
  const auto& rows = report.at("rows");
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0]["speedup"], 1.0);
  EXPECT_EQ(rows[0]["scaling_efficiency"], 1.0);
  EXPECT_EQ(rows[0]["iteration_time_ns"], report["single_gpu"]["iteration_time_ns"]);
  // Each row is what `ssgd simulate` reports on that many GPUs.
  for (const auto& row : rows) {
    std::vector<std::string> sim = {
        "simulate",
        kResnet,
        "-q",
        "--report",
        "one.json",
        "--set",
        "cluster.nodes=" + std::to_string(row["nodes"].get<std::int64_t>()),
        "--set",
        "network.inter_node=25gbe",
        "--set",
        "cluster.gpus_per_node=" + std::to_string(row["gpus_per_node"].get<std::int64_t>())};
    ASSERT_EQ(ssgd(sim).status, 0);
    const auto one = json("one.json");
    EXPECT_EQ(one["iteration_time_ns"], row["iteration_time_ns"]) << row;
    EXPECT_EQ(one["scaling"]["speedup"], row["speedup"]) << row;
    EXPECT_EQ(one["scaling"]["scaling_efficiency"], row["scaling_efficiency"]) << row;
    EXPECT_EQ(one["scaling"]["global_batch"], row["global_batch"]) << row;
    EXPECT_EQ(one["throughput_samples_per_s"], row["throughput_samples_per_s"]) << row;
  }
  // Scaling out over 10/25 GbE costs something: efficiency falls below 1 past one node.
  EXPECT_LT(rows[4]["scaling_efficiency"].get<double>(),
            rows[2]["scaling_efficiency"].get<double>());
}

// Under a platform preset, counts below one node run on the first GPUs of a
// node (the node cut to them), as `simulate --set cluster.gpus_per_node=G`
// does; 16 is two whole nodes.
TEST_F(ScaleCliTest, CountsBelowOnePresetNodeRunOnPartOfANode) {
  const auto r = ssgd({"scale", kResnet, "--gpus", "1,2,4,16", "--set", "platform.preset=dgx1",
                       "--report", "scale.json"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  const auto rows = json("scale.json").at("rows");
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& row : rows) {
    const auto gpus = row["gpus"].get<std::int64_t>();
    EXPECT_EQ(row["gpus_per_node"], gpus == 16 ? 8 : gpus) << row;
    EXPECT_EQ(row["nodes"], gpus == 16 ? 2 : 1) << row;
    if (gpus == 1 || gpus == 16) continue;
    const auto sim = ssgd({"simulate", kResnet, "--report", "one.json", "--set",
                           "platform.preset=dgx1", "--set",
                           "cluster.gpus_per_node=" + std::to_string(gpus)});
    ASSERT_EQ(sim.status, 0) << sim;
    EXPECT_THAT(sim.out, HasSubstr(fmt::format("dgx1 ({} of a node's 8 GPUs): 1 node x {} GPUs", gpus,
                                               gpus)));
    EXPECT_EQ(json("one.json")["iteration_time_ns"], row["iteration_time_ns"]) << row;
  }
}

TEST_F(ScaleCliTest, StrongScalingSplitsOneGlobalBatch) {
  std::vector<std::string> args = {
      "scale",    kResnet,          "--gpus", "1,2,3,8", "--mode",
      "strong",   "--global-batch", "256",    "--set",   "scaling.fixed_fraction=0.2",
      "--report", "strong.json"};
  const auto r = ssgd(args);
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.out, HasSubstr("strong scaling of a global batch of 256 samples"));
  EXPECT_THAT(r.out, HasSubstr("fixed fraction f = 0.2"));
  EXPECT_THAT(r.out, HasSubstr("85..86"));  // 256 over 3 GPUs: 86, 85, 85
  const auto rows = json("strong.json").at("rows");
  ASSERT_EQ(rows.size(), 4u);
  const std::int64_t per_gpu[] = {256, 128, 86, 32};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i]["global_batch"], 256) << i;
    EXPECT_EQ(rows[i]["per_gpu_batch"], per_gpu[i]) << i;
    EXPECT_DOUBLE_EQ(
        rows[i]["speedup"].get<double>(),
        rows[0]["iteration_time_ns"].get<double>() / rows[i]["iteration_time_ns"].get<double>());
  }
  EXPECT_EQ(rows[2]["min_per_gpu_batch"], 85);
  // The same scenario through `ssgd simulate` on 8 GPUs.
  const auto sim = ssgd({"simulate", kResnet, "-q", "--report", "eight.json", "--set",
                         "cluster.nodes=8", "--set", "scaling.mode=strong", "--set",
                         "scaling.global_batch=256", "--set", "scaling.fixed_fraction=0.2"});
  ASSERT_EQ(sim.status, 0) << sim;
  const auto eight = json("eight.json");
  EXPECT_EQ(eight["scaling"]["per_gpu_batch"], 32);
  EXPECT_EQ(eight["scaling"]["single_gpu"]["per_gpu_batch"], 256);
  EXPECT_EQ(eight["iteration_time_ns"], rows[3]["iteration_time_ns"]);
  EXPECT_EQ(eight["speedup"], rows[3]["speedup"]);
}

// --mode overrides the scenario's scaling.mode, so one file sweeps both ways.
TEST_F(ScaleCliTest, ModeFlagOverridesTheScenario) {
  const std::string scenario = (kSource / "scenarios/strong_scaling.yaml").string();
  auto r = ssgd({"scale", kResnet, "--scenario", scenario, "--gpus", "4,16", "--report", "s.json"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("strong scaling of a global batch of 1024 samples"));
  EXPECT_EQ(json("s.json")["rows"][0]["per_gpu_batch"], 256);
  r = ssgd({"scale", kResnet, "--scenario", scenario, "--gpus", "4,16", "--mode", "weak",
            "--report", "w.json"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("weak scaling at 64 samples per GPU"));
  EXPECT_THAT(r.err, HasSubstr("the scenario's scaling.global_batch (1024) is not used"));
  const auto w = json("w.json");
  EXPECT_EQ(w["mode"], "weak");
  EXPECT_EQ(w["rows"][0]["per_gpu_batch"], 64);
  // At 16 GPUs both split 1024 samples into 64 each: the same run.
  EXPECT_EQ(w["rows"][1]["iteration_time_ns"], json("s.json")["rows"][1]["iteration_time_ns"]);
}

TEST_F(ScaleCliTest, SimulatePrintsTheScalingSection) {
  const auto r =
      ssgd({"simulate", kResnet, "--set", "cluster.nodes=4", "--set", "scaling.mode=strong"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  EXPECT_THAT(r.out, HasSubstr("scaling: strong, global batch 256 fixed"));
  EXPECT_THAT(r.out, HasSubstr("this run      4      4          64           256"));
  EXPECT_THAT(r.out, HasSubstr("1 GPU         1      1         256           256"));
  EXPECT_THAT(r.out, HasSubstr("strong scaling: speedup / 4 GPUs"));
}

TEST_F(ScaleCliTest, BadFlagsAreRefusedNamingTheFlag) {
  expect_refused({kResnet, "--gpus", "1,x,4"}, "--gpus", "item 2 ('x')");
  expect_refused({kResnet, "--gpus", "0"}, "--gpus", "expected a GPU count from 1");
  expect_refused({kResnet, "--gpus=-4"}, "--gpus", "expected a GPU count");
  expect_refused({kResnet, "--gpus", ""}, "--gpus", "expected GPU counts");
  expect_refused({kResnet, "--gpus", "2,4,2"}, "--gpus", "listed twice");
  expect_refused({kResnet, "--gpus", "1,6", "--set", "cluster.gpus_per_node=4"}, "--gpus",
                 "6 GPUs is not a multiple of cluster.gpus_per_node (4)");
  expect_refused({kResnet, "--gpus", "1,12", "--set", "platform.preset=dgx1"}, "--gpus",
                 "12 GPUs is not a multiple of cluster.gpus_per_node (8)");
  expect_refused({kResnet, "--gpus", "1,2", "--mode", "medium"}, "--mode",
                 "unknown scaling mode 'medium'");
  expect_refused({kResnet, "--gpus", "1,2", "--mode", "strong", "--global-batch", "lots"},
                 "--global-batch", "expected a number of samples");
  expect_refused({kResnet, "--gpus", "1,2", "--mode", "strong", "--global-batch", "0"},
                 "--global-batch", "expected a number of samples");
  expect_refused({kResnet, "--gpus", "1,2", "--global-batch", "64"}, "--global-batch",
                 "use --mode strong");
  expect_refused({kResnet, "--gpus", "1,8", "--mode", "strong", "--global-batch", "4"}, "--gpus",
                 "the global batch of 4 samples cannot be split");
  expect_refused({kResnet, "--gpus", "1,2", "--set", "scaling.fixed_fraction=1.5"},
                 "scaling.fixed_fraction", "must be between 0 and 1");
}

TEST_F(ScaleCliTest, StrongScalingNeedsTheInputsBatch) {
  write_file_bytes(dir_ / "nobatch.csv",
                   "layer,name,forward_ns,backward_ns,grad_bytes\n0,conv,1000,2000,64\n");
  expect_refused({"nobatch.csv", "--gpus", "1,2", "--mode", "strong"}, "batch_per_gpu",
                 "nobatch.csv: field 'batch_per_gpu': scaling.mode strong needs the per-GPU batch");
  // workload.batch_per_gpu supplies it.
  const auto r = ssgd({"scale", "nobatch.csv", "--gpus", "1,2", "--mode", "strong", "--set",
                       "workload.batch_per_gpu=8"});
  EXPECT_EQ(r.status, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("global batch of 8 samples"));
  // A second profile that is not the same model names its file, layer and field.
  write_file_bytes(
      dir_ / "at8.csv",
      "# batch_per_gpu: 8\nlayer,name,forward_ns,backward_ns,grad_bytes\n0,conv,1000,2000,64\n");
  write_file_bytes(
      dir_ / "at16.csv",
      "# batch_per_gpu: 16\nlayer,name,forward_ns,backward_ns,grad_bytes\n0,fc,1900,3900,64\n");
  expect_refused(
      {"at8.csv", "--gpus", "1,2", "--mode", "strong", "--set", "scaling.second_profile=at16.csv"},
      "name", "at16.csv: field 'name': layer 0 is 'fc', the input's is 'conv'");
}

}  // namespace
