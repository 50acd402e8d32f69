// `ssgd export chakra`, `ssgd import chakra` and `ssgd simulate` of an
// execution graph, run as real processes (SSGD_CLI) in a fresh folder per
// test: the round trip gives the iteration time to the nanosecond, and bad
// input is refused with a message naming it and exit status 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tests/support/cli_runner.h"
#include "traces/chakra/et_file.h"
#include "tests/support/test_files.h"

namespace {

namespace fs = std::filesystem;
using ssgd::testing::read_file_bytes;
using ssgd::testing::write_file_bytes;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kSource = fs::path(SSGD_SOURCE_DIR);
const std::string kResnet = (kSource / "traces/datasets/resnet50_v100.csv").string();
const std::string kScenario = (kSource / "scenarios/v100_4x4_10gbe.yaml").string();
constexpr int kBadInput = 2;

class ChakraCliTest : public ssgd::testing::CliTempDirTest {
 protected:
  ssgd::testing::CliResult ssgd(const std::vector<std::string>& args) {
    return run_ssgd(SSGD_CLI, args);
  }
  nlohmann::json json(const std::string& name) {
    return nlohmann::json::parse(read_file_bytes(dir_ / name));
  }
};

// The promise: export, import and replay give the iteration time
// `ssgd simulate` gives, to the nanosecond, under the same scenario.
TEST_F(ChakraCliTest, ExportImportSimulateRoundTripsToTheNanosecond) {
  for (const std::string policy : {"wfbp", "mgwfbp", "ddp"}) {
    SCOPED_TRACE(policy);
    const std::vector<std::string> scenario = {
        "--scenario", kScenario, "--set", "policy.overlap=" + policy, "--set", "iterations=4"};
    std::vector<std::string> sim = {"simulate", kResnet, "--report", "direct.json", "-q"};
    sim.insert(sim.end(), scenario.begin(), scenario.end());
    ASSERT_EQ(ssgd(sim).status, 0);
    fs::remove_all(dir_ / "et");
    std::vector<std::string> exp = {"export", "chakra", kResnet, "-o", "et"};
    exp.insert(exp.end(), scenario.begin(), scenario.end());
    const auto e = ssgd(exp);
    ASSERT_EQ(e.status, 0) << e;
    EXPECT_TRUE(fs::exists(dir_ / "et/ssgd.15.et"));
    const auto i = ssgd({"import", "chakra", "et", "-o", "g.ssgdt"});
    ASSERT_EQ(i.status, 0) << i;
    EXPECT_THAT(i.out, HasSubstr("16 files"));
    std::vector<std::string> replay = {"simulate", "g.ssgdt", "--report", "graph.json", "-q"};
    replay.insert(replay.end(), scenario.begin(), scenario.end());
    const auto s = ssgd(replay);
    ASSERT_EQ(s.status, 0) << s;
    const auto direct = json("direct.json");
    const auto graph = json("graph.json");
    EXPECT_EQ(graph["kind"], "graph");
    EXPECT_EQ(graph["iteration_time_ns"], direct["iteration_time_ns"]);
    EXPECT_EQ(graph["iteration_times_ns"], direct["iteration_times_ns"]);
    EXPECT_EQ(graph["comm"]["replayed"], 0);
  }
}

// 4 nodes x 4 GPUs stay 4 x 4: the export records the shape, the import
// keeps it, and the replay takes it when the scenario does not say, so the
// graph replays as the run it came from with no scenario at all.
TEST_F(ChakraCliTest, TheShapeOfTheNodesSurvivesTheRoundTrip) {
  ASSERT_EQ(ssgd({"export", "chakra", kResnet, "-o", "et", "--scenario", kScenario}).status, 0);
  const auto i = ssgd({"import", "chakra", "et", "-o", "g.ssgdt"});
  ASSERT_EQ(i.status, 0) << i;
  EXPECT_THAT(i.out, HasSubstr("shape        4 nodes x 4 GPUs (recorded by ssgd export chakra)"));
  const auto s = ssgd({"simulate", "g.ssgdt", "--set", "network.inter_node=10gbe"});
  ASSERT_EQ(s.status, 0) << s;
  EXPECT_THAT(s.out, HasSubstr("4 nodes x 4 GPUs"));
  EXPECT_THAT(s.err, Not(HasSubstr("does not record how its")));
  // Under a preset of 8-GPU nodes the ranks keep nodes of 4: the first 4 GPUs of each.
  const auto p = ssgd({"simulate", "g.ssgdt", "--set", "platform.preset=dgx1"});
  ASSERT_EQ(p.status, 0) << p;
  EXPECT_THAT(p.out, HasSubstr("dgx1 (4 of a node's 8 GPUs): 4 nodes x 4 GPUs"));
  // The preset's GPU does not move a graph's recorded times, and it is said;
  // asked for by name, it is refused.
  EXPECT_THAT(p.err, HasSubstr("not on the preset's v100-sxm2-16gb"));
  const auto g = ssgd({"simulate", "g.ssgdt", "--set", "platform.gpu.model=h100-sxm"});
  EXPECT_EQ(g.status, 2) << g;
  EXPECT_THAT(g.err, HasSubstr("platform.gpu.model"));
  EXPECT_THAT(g.err, HasSubstr("moving its times to another GPU is not yet replayed"));
  // The scenario's own count wins, and it is said.
  const auto o = ssgd({"simulate", "g.ssgdt", "--set", "cluster.gpus_per_node=8"});
  ASSERT_EQ(o.status, 0) << o;
  EXPECT_THAT(o.out, HasSubstr("2 nodes x 8 GPUs"));
}

// Another tool's graph records no shape: the replay runs it on the
// scenario's nodes and says so, rather than guessing in silence.
TEST_F(ChakraCliTest, AGraphWithoutAShapeIsReplayedOnTheScenariosNodesWithAWarning) {
  fs::create_directories(dir_ / "other");
  for (int r = 0; r < 4; ++r) {
    ssgd::chakra::ExecutionTrace et;
    ssgd::chakra::Node n;
    n.id = 1;
    n.name = "gemm";
    n.type = static_cast<std::int32_t>(ssgd::chakra::NodeType::kComp);
    n.duration_micros = 100;
    et.nodes = {n};
    ssgd::chakra::write_execution_trace(dir_ / "other" / fmt::format("job.{}.et", r), et);
  }
  ASSERT_EQ(ssgd({"import", "chakra", "other", "-o", "g.ssgdt"}).status, 0);
  const auto s = ssgd({"simulate", "g.ssgdt"});
  ASSERT_EQ(s.status, 0) << s;
  EXPECT_THAT(s.err, HasSubstr("the graph does not record how its 4 ranks sat on nodes: replayed "
                               "on nodes of 1 GPU (the default; set cluster.gpus_per_node"));
  const auto g = ssgd({"simulate", "g.ssgdt", "--set", "cluster.gpus_per_node=4"});
  ASSERT_EQ(g.status, 0) << g;
  EXPECT_THAT(g.err, Not(HasSubstr("does not record")));
}

TEST_F(ChakraCliTest, TheFlowModelRoundTripsToo) {
  const std::vector<std::string> scenario = {"--scenario",   kScenario, "--set",
                                             "iterations=3", "--set",   "network.model=flow"};
  std::vector<std::string> sim = {"simulate", kResnet, "--report", "direct.json", "-q"};
  sim.insert(sim.end(), scenario.begin(), scenario.end());
  ASSERT_EQ(ssgd(sim).status, 0);
  std::vector<std::string> exp = {"export", "chakra", kResnet, "-o", "et", "--gzip"};
  exp.insert(exp.end(), scenario.begin(), scenario.end());
  ASSERT_EQ(ssgd(exp).status, 0);
  EXPECT_TRUE(fs::exists(dir_ / "et/ssgd.0.et.gz"));
  ASSERT_EQ(ssgd({"import", "chakra", "et", "-o", "g.ssgdt"}).status, 0);
  std::vector<std::string> replay = {"simulate", "g.ssgdt", "--report", "graph.json", "-q"};
  replay.insert(replay.end(), scenario.begin(), scenario.end());
  ASSERT_EQ(ssgd(replay).status, 0);
  EXPECT_EQ(json("graph.json")["iteration_time_ns"], json("direct.json")["iteration_time_ns"]);
  EXPECT_EQ(json("graph.json")["scenario"]["network"]["model"], "flow");
}

// A graph's replay measures its links as a profile's does: the same
// collectives put the same bytes on the same links, under either model, and
// a timeline of the graph shows the links' tracks.
TEST_F(ChakraCliTest, TheGraphsLinksCarryWhatTheProfilesDo) {
  for (const std::string model : {"analytical", "flow"}) {
    const std::vector<std::string> scenario = {"--scenario",   kScenario, "--set",
                                               "iterations=3", "--set",   "network.model=" + model};
    std::vector<std::string> sim = {"simulate", kResnet, "--report", "direct-" + model + ".json",
                                    "-q"};
    sim.insert(sim.end(), scenario.begin(), scenario.end());
    ASSERT_EQ(ssgd(sim).status, 0);
    std::vector<std::string> exp = {"export", "chakra", kResnet, "-o", "et-" + model};
    exp.insert(exp.end(), scenario.begin(), scenario.end());
    ASSERT_EQ(ssgd(exp).status, 0);
    ASSERT_EQ(ssgd({"import", "chakra", "et-" + model, "-o", model + ".ssgdt"}).status, 0);
    std::vector<std::string> replay = {
        "simulate", model + ".ssgdt", "--report",        model + ".json",
        "-q",       "--timeline",     model + "_tl.json"};
    replay.insert(replay.end(), scenario.begin(), scenario.end());
    ASSERT_EQ(ssgd(replay).status, 0);
    const auto direct = json("direct-" + model + ".json")["links"]["by_kind"];
    const auto graph = json(model + ".json")["links"]["by_kind"];
    ASSERT_EQ(graph.size(), direct.size()) << model;
    for (std::size_t k = 0; k < graph.size(); ++k) {
      EXPECT_EQ(graph[k]["kind"], direct[k]["kind"]) << model;
      EXPECT_NEAR(graph[k]["bytes"].get<double>(), direct[k]["bytes"].get<double>(),
                  1e-9 * direct[k]["bytes"].get<double>())
          << model << " " << graph[k]["kind"];
    }
    EXPECT_THAT(read_file_bytes(dir_ / (model + "_tl.json")), HasSubstr("nic0 -> switch")) << model;
  }
}

TEST_F(ChakraCliTest, AnotherNetworkChangesTheGraphsCollectivesOnly) {
  ASSERT_EQ(ssgd({"export", "chakra", kResnet, "--scenario", kScenario, "-o", "et"}).status, 0);
  ASSERT_EQ(ssgd({"import", "chakra", "et", "-o", "g.ssgdt"}).status, 0);
  ASSERT_EQ(
      ssgd({"simulate", "g.ssgdt", "--scenario", kScenario, "--report", "slow.json", "-q"}).status,
      0);
  ASSERT_EQ(ssgd({"simulate", "g.ssgdt", "--scenario", kScenario, "--set",
                  "network.inter_node=ib_edr100", "--report", "fast.json", "-q"})
                .status,
            0);
  const auto slow = json("slow.json");
  const auto fast = json("fast.json");
  EXPECT_LT(fast["iteration_time_ns"], slow["iteration_time_ns"]);
  EXPECT_LT(fast["comm"]["total_ns"], slow["comm"]["total_ns"]);
  EXPECT_EQ(fast["nodes"], slow["nodes"]);
}

TEST_F(ChakraCliTest, OnlySimulateTakesAGraph) {
  ASSERT_EQ(ssgd({"export", "chakra", kResnet, "--scenario", kScenario, "-o", "et"}).status, 0);
  ASSERT_EQ(ssgd({"import", "chakra", "et", "-o", "g.ssgdt"}).status, 0);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"scale", "g.ssgdt", "--gpus", "1,2"},
        std::vector<std::string>{"optimize", "g.ssgdt", "--param", "policy.bucket_cap", "--values",
                                 "1MiB,2MiB"},
        std::vector<std::string>{"export", "chakra", "g.ssgdt", "-o", "again"}}) {
    const auto r = ssgd(args);
    EXPECT_EQ(r.status, kBadInput) << r;
    EXPECT_THAT(r.err, HasSubstr("g.ssgdt: is an execution graph")) << r;
  }
}

// What a graph's replay does not do yet comes from one list, with one
// message, before anything runs: at the key where the scenario gave it, or
// at the flag.
TEST_F(ChakraCliTest, WhatAGraphsReplayDoesNotDoYetIsRefusedWithOneMessage) {
  ASSERT_EQ(ssgd({"export", "chakra", kResnet, "--scenario", kScenario, "-o", "et"}).status, 0);
  ASSERT_EQ(ssgd({"import", "chakra", "et", "-o", "g.ssgdt"}).status, 0);
  const std::string one = "an execution graph replays its own nodes and their recorded times: ";
  struct Ask {
    std::vector<std::string> args;
    std::string where;
    std::string what;
  };
  for (const Ask& ask :
       {Ask{{"--trace", "t.ssgdt"}, "--trace", "a simulated trace is not yet replayed"},
        Ask{{"--set", "network.model=flow", "--set", "jobs.0.kind=traffic", "--set",
             "jobs.0.nodes=2", "--set", "jobs.0.bytes=1MiB"},
            "field 'jobs", "other jobs sharing the fabric is not yet replayed"},
        Ask{{"--set", "interference.model=contention", "--set", "interference.gpu.compute=0.1"},
            "field 'interference.model'", "interference between compute and communication"}}) {
    std::vector<std::string> args = {"simulate", "g.ssgdt", "--report", "r.json"};
    args.insert(args.end(), ask.args.begin(), ask.args.end());
    const auto r = ssgd(args);
    SCOPED_TRACE(r.err);
    EXPECT_EQ(r.status, kBadInput) << r;
    EXPECT_THAT(r.err, HasSubstr(ask.where));
    EXPECT_THAT(r.err, HasSubstr(one + ask.what));
    EXPECT_FALSE(fs::exists(dir_ / "r.json"));
    EXPECT_FALSE(fs::exists(dir_ / "t.ssgdt"));
  }
}

// A graph's replay is estimated before it is built, as a profile's is
// (simulator/replay/replay_estimate.h): too large for the memory at hand,
// it is refused naming the input, unless --allow-large.
TEST_F(ChakraCliTest, AGraphTooLargeForTheMemoryIsRefusedUnlessAllowed) {
  ASSERT_EQ(ssgd({"export", "chakra", kResnet, "--scenario", kScenario, "-o", "et"}).status, 0);
  ASSERT_EQ(ssgd({"import", "chakra", "et", "-o", "g.ssgdt"}).status, 0);
  ::setenv("SSGD_AVAILABLE_MEMORY", "1MiB", 1);
  const auto r = ssgd({"simulate", "g.ssgdt", "--report", "r.json"});
  const auto a = ssgd({"simulate", "g.ssgdt", "--allow-large", "-q"});
  ::unsetenv("SSGD_AVAILABLE_MEMORY");
  EXPECT_EQ(r.status, kBadInput) << r;
  EXPECT_THAT(r.err, HasSubstr("g.ssgdt: "));
  EXPECT_THAT(r.err, HasSubstr("an execution graph of"));
  EXPECT_THAT(r.err, HasSubstr("more than the 1.0 MiB this machine has available"));
  EXPECT_THAT(r.err, HasSubstr("--allow-large"));
  EXPECT_FALSE(fs::exists(dir_ / "r.json"));
  EXPECT_EQ(a.status, 0) << a;
}

// A graph's timeline keeps --timeline-ranks ranks, as a profile's does, and
// says so (it said nothing before).
TEST_F(ChakraCliTest, AGraphsTimelineSaysWhichRanksItHolds) {
  ASSERT_EQ(ssgd({"export", "chakra", kResnet, "--scenario", kScenario, "-o", "et"}).status, 0);
  ASSERT_EQ(ssgd({"import", "chakra", "et", "-o", "g.ssgdt"}).status, 0);
  const auto r = ssgd({"simulate", "g.ssgdt", "--timeline", "tl.json", "--timeline-ranks", "4"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_THAT(r.err, HasSubstr("timeline holds ranks 0-3 of 16"));
  EXPECT_TRUE(fs::exists(dir_ / "tl.json"));
}

TEST_F(ChakraCliTest, ExportRefusesStaleRanksOfAnEarlierExport) {
  fs::create_directories(dir_ / "et");
  write_file_bytes(dir_ / "et/ssgd.99.et", "old");
  const auto r = ssgd({"export", "chakra", kResnet, "--scenario", kScenario, "-o", "et"});
  EXPECT_EQ(r.status, kBadInput) << r;
  EXPECT_THAT(r.err, HasSubstr("ssgd.99.et"));
  EXPECT_THAT(r.err, HasSubstr("is rank 99 of an earlier export"));
  EXPECT_FALSE(fs::exists(dir_ / "et/ssgd.0.et"));
}

TEST_F(ChakraCliTest, ImportRefusesDamagedFilesNamingThem) {
  fs::create_directories(dir_ / "et");
  write_file_bytes(dir_ / "et/job.0.et", std::string("\x05\x0a\x09", 3));
  const auto r = ssgd({"import", "chakra", "et", "-o", "g.ssgdt"});
  EXPECT_EQ(r.status, kBadInput) << r;
  EXPECT_THAT(r.err, HasSubstr("job.0.et"));
  EXPECT_THAT(r.err, HasSubstr("truncated"));
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(fs::exists(dir_ / "g.ssgdt"));
}

TEST_F(ChakraCliTest, ImportOfAFolderWithoutEtFilesIsAnError) {
  fs::create_directories(dir_ / "empty");
  const auto r = ssgd({"import", "chakra", "empty", "-o", "g.ssgdt"});
  EXPECT_EQ(r.status, kBadInput) << r;
  EXPECT_THAT(r.err, HasSubstr("holds no Chakra ET file"));
}

TEST_F(ChakraCliTest, AGraphOfAnotherRankCountThanTheClusterIsRefused) {
  ASSERT_EQ(ssgd({"export", "chakra", kResnet, "--scenario", kScenario, "-o", "et"}).status, 0);
  ASSERT_EQ(ssgd({"import", "chakra", "et", "-o", "g.ssgdt"}).status, 0);
  const auto r =
      ssgd({"simulate", "g.ssgdt", "--set", "cluster.nodes=2", "--set", "cluster.gpus_per_node=4"});
  EXPECT_EQ(r.status, kBadInput) << r;
  EXPECT_THAT(r.err, HasSubstr("field 'cluster.nodes'"));
  EXPECT_THAT(r.err, HasSubstr("the graph has 16 ranks"));
}

}  // namespace
