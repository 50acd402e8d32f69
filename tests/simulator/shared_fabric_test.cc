#include "simulator/replay/shared_fabric.h"

#include <stdexcept>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "simulator/input/scenario_inputs.h"
#include "simulator/replay/replay.h"

namespace ssgd::sim {
namespace {

using ::testing::HasSubstr;

// `layers` layers of 1 ms forward, 2 ms backward and `grad_bytes` each.
trace::LayerProfile profile(int layers, std::int64_t grad_bytes) {
  trace::LayerProfile p;
  for (int l = 0; l < layers; ++l) {
    p.layers.push_back({l, fmt::format("l{}", l), Duration(1'000'000), Duration(2'000'000),
                        grad_bytes, std::nullopt, std::nullopt, std::nullopt});
  }
  return p;
}

Scenario scenario(std::vector<std::string> sets) {
  sets.insert(sets.begin(), "network.model=flow");
  return load_scenario(std::nullopt, sets);
}

const JobOutcome& job(const SharedFabricResult& r, const std::string& name) {
  for (const auto& o : r.jobs) {
    if (o.name == name) return o;
  }
  throw std::out_of_range("no job " + name);
}

TEST(SharedFabric, JobsOnTheirOwnNodesOfOneSwitchDoNotSlowEachOther) {
  const Scenario s = scenario({"platform.preset=v100_pcie_4x_100gbe", "cluster.nodes=2",
                               "iterations=3", "jobs.0.kind=training", "jobs.0.nodes=3",
                               "jobs.0.profile=other.csv", "jobs.0.policy=bsp"});
  const auto main_profile = profile(6, 8 << 20);
  const SharedFabricResult r = run_shared_fabric(main_profile, s, {profile(4, 32 << 20)});
  EXPECT_EQ(r.platform_nodes, 5);
  ASSERT_EQ(r.jobs.size(), 2u);
  for (const auto& o : r.jobs) {
    EXPECT_EQ(o.alone, o.shared) << o.name;
    EXPECT_DOUBLE_EQ(o.slowdown, 1.0) << o.name;
  }
  EXPECT_EQ(job(r, "job1").first_node, 2);
  EXPECT_EQ(job(r, "job1").workers, 12);
  // Alone on the larger platform, the scenario's job takes what replay() gives.
  EXPECT_EQ(job(r, "main").alone, replay(main_profile, s).iteration_time);
}

TEST(SharedFabric, AnOversubscribedUplinkSlowsBothJobsThatCrossIt) {
  // Leaves of three nodes: main (0-3) and job1 (4-7) both use leaf 1's uplinks.
  const std::vector<std::string> sets = {
      "platform.preset=v100_pcie_4x_100gbe", "platform.fabric.kind=fat_tree",
      "platform.fabric.nodes_per_leaf=3",    "platform.fabric.oversubscription=3",
      "network.algorithm=ring",              "policy.overlap=bsp",
      "cluster.nodes=4",                     "iterations=3",
      "jobs.0.kind=training",                "jobs.0.nodes=4",
      "jobs.0.profile=same.csv"};
  const auto p = profile(2, 256 << 20);
  const SharedFabricResult r = run_shared_fabric(p, scenario(sets), {p});
  EXPECT_GT(job(r, "main").slowdown, 1.1);
  EXPECT_GT(job(r, "job1").slowdown, 1.1);
  // Moved to leaves of their own (first_node 6: leaves 2 and 3), it shares nothing.
  auto apart = sets;
  apart.push_back("jobs.0.first_node=6");
  const SharedFabricResult r2 = run_shared_fabric(p, scenario(apart), {p});
  EXPECT_DOUBLE_EQ(job(r2, "main").slowdown, 1.0);
  EXPECT_DOUBLE_EQ(job(r2, "job1").slowdown, 1.0);
}

// Background traffic that never pauses shares every link with the job's
// collectives, which then get half the bandwidth: a job that is all
// communication takes twice as long.
TEST(SharedFabric, BackToBackTrafficOnTheSameLinksHalvesTheJobsBandwidth) {
  const Scenario s = scenario({"cluster.nodes=2", "cluster.gpus_per_node=1", "iterations=3",
                               "network.algorithm=ring", "policy.overlap=bsp",
                               "jobs.0.name=background", "jobs.0.kind=traffic",
                               "jobs.0.nodes=2", "jobs.0.bytes=4GiB", "jobs.0.algorithm=ring"});
  trace::LayerProfile p = profile(1, 1LL << 30);
  p.layers[0].forward = p.layers[0].backward = Duration(1'000);
  const SharedFabricResult r = run_shared_fabric(p, s, {trace::LayerProfile{}});
  const JobOutcome& main = job(r, "main");
  EXPECT_GT(main.slowdown, 1.95);
  EXPECT_LE(main.slowdown, 2.0 + 1e-9);
  const JobOutcome& bg = job(r, "background");
  EXPECT_EQ(bg.kind, JobKind::kTraffic);
  EXPECT_GE(bg.count, 1);
  EXPECT_GT(bg.slowdown, 1.0);
  EXPECT_EQ(bg.measure, "collective");
}

TEST(SharedFabric, RunsAreDeterministicAndTrafficStopsWithTheTraining) {
  const Scenario s = scenario({"platform.preset=dgx1", "cluster.nodes=2", "iterations=4",
                               "jobs.0.kind=traffic", "jobs.0.nodes=2", "jobs.0.bytes=16MiB",
                               "jobs.0.period=5ms", "jobs.1.kind=training", "jobs.1.nodes=1",
                               "jobs.1.profile=x.csv"});
  const auto p = profile(5, 4 << 20);
  const auto a = run_shared_fabric(p, s, {trace::LayerProfile{}, p});
  const auto b = run_shared_fabric(p, s, {trace::LayerProfile{}, p});
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].shared, b.jobs[i].shared);
    EXPECT_EQ(a.jobs[i].alone, b.jobs[i].alone);
    EXPECT_EQ(a.jobs[i].count, b.jobs[i].count);
  }
  EXPECT_EQ(a.events, b.events);
  // Four iterations of about 15 ms: a collective every 5 ms, not forever.
  const JobOutcome& traffic = job(a, "job1");
  EXPECT_GE(traffic.count, 5);
  EXPECT_LE(traffic.count, 30);
}

TEST(SharedFabric, ATrafficJobWhoseAlgorithmCannotRunItsOpIsNamed) {
  const Scenario s = scenario({"cluster.nodes=2", "jobs.0.name=pushes", "jobs.0.kind=traffic",
                               "jobs.0.nodes=2", "jobs.0.bytes=1MiB", "jobs.0.op=all_gather",
                               "jobs.0.algorithm=parameter_server"});
  try {
    (void)run_shared_fabric(profile(1, 1024), s, {trace::LayerProfile{}});
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("traffic job 'pushes'"));
    EXPECT_THAT(e.what(), HasSubstr("does not implement all_gather"));
  }
}

}  // namespace
}  // namespace ssgd::sim
