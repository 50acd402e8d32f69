// A model's complaint about a value names the key, where the user set it
// (file and line, or --set) and the value, whichever layer found it.
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "simulator/input/scenario_inputs.h"
#include "simulator/replay/replay.h"
#include "simulator/scenario/scenario.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

trace::LayerProfile two_layers() {
  trace::LayerProfile p;
  p.layers.push_back({0, "a", Duration(1'000'000), Duration(2'000'000), 4'000'000, std::nullopt, std::nullopt, std::nullopt});
  p.layers.push_back({1, "b", Duration(1'000'000), Duration(2'000'000), 4'000'000, std::nullopt, std::nullopt, std::nullopt});
  return p;
}

InputError replay_error(const Scenario& s) {
  try {
    replay(two_layers(), s);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "the replay accepted the scenario";
  return InputError({}, "");
}

TEST(LocatedError, ASetNamesTheKeyAndTheValue) {
  const Scenario s =
      load_scenario(std::nullopt, {"platform.preset=dgx1", "platform.nvlink.ring_order=0,1"});
  const InputError e = replay_error(s);
  EXPECT_EQ(e.where().file, "--set");
  EXPECT_EQ(e.where().field, "platform.nvlink.ring_order");
  EXPECT_THAT(e.what(), HasSubstr("the ring order lists 2 GPUs but a node has 8"));
  EXPECT_THAT(e.what(), HasSubstr("value given: '0,1'"));
}

TEST(LocatedError, AFileKeyNamesItsFileAndLine) {
  const fs::path file = fs::path(::testing::TempDir()) / "ssgd_located_error.yaml";
  std::ofstream(file) << "platform:\n  preset: dgx1\n  pcie:\n    gpu_attach: 0,0,0,0,1,1,1,9\n";
  const InputError e = replay_error(load_scenario(file, {}));
  EXPECT_EQ(e.where().file, file.string());
  EXPECT_EQ(e.where().line, 4);
  EXPECT_EQ(e.where().field, "platform.pcie.gpu_attach");
  EXPECT_THAT(e.what(), HasSubstr("GPU 7 is attached to PCIe"));
  EXPECT_THAT(e.what(), HasSubstr("value given: '0,0,0,0,1,1,1,9'"));
}

TEST(LocatedError, AKeyNotSetIsNamedAtTheScenario) {
  Scenario s;
  const InputError e = located_error(s, ParameterError("platform.fabric.switch_latency", "bad"));
  EXPECT_EQ(e.where().file, "the scenario");
  EXPECT_EQ(e.where().field, "platform.fabric.switch_latency");
  EXPECT_THAT(e.what(), HasSubstr("bad (the key was not set"));
}

// Platform checks made when the platform is built (scenario_platform_spec,
// Platform) name the key, where it was set and the value.
TEST(LocatedError, AnNvlinkPairOutOfRangeNamesTheFlagTheKeyAndTheGpu) {
  const InputError e =
      replay_error(load_scenario(std::nullopt, {"platform.preset=dgx1", "platform.nvlink.pairs=0-99:2"}));
  EXPECT_EQ(std::string(e.what()),
            "--set: field 'platform.nvlink.pairs': NVLink pair 0-99: GPU 99 is out of range: a "
            "node has 8 GPUs (0..7) (value given: '0-99:2')");
  const InputError self =
      replay_error(load_scenario(std::nullopt, {"platform.preset=dgx1", "platform.nvlink.pairs=3-3"}));
  EXPECT_THAT(self.what(), HasSubstr("field 'platform.nvlink.pairs': NVLink pair 3-3 joins GPU 3 to "
                                     "itself"));
  const fs::path file = fs::path(::testing::TempDir()) / "ssgd_located_pairs.yaml";
  std::ofstream(file) << "platform:\n  preset: dgx1\n  nvlink:\n    pairs: 0-1,1-8\n";
  const InputError in_file = replay_error(load_scenario(file, {}));
  EXPECT_EQ(in_file.where().file, file.string());
  EXPECT_EQ(in_file.where().line, 4);
  EXPECT_THAT(in_file.what(), HasSubstr("GPU 8 is out of range"));
}

TEST(LocatedError, NvlinkPairsForAnotherTopologyAreRefusedNotIgnored) {
  const InputError e = replay_error(
      load_scenario(std::nullopt, {"platform.preset=hgx_h100", "platform.nvlink.pairs=0-1"}));
  EXPECT_EQ(e.where().field, "platform.nvlink.pairs");
  EXPECT_THAT(e.what(), HasSubstr("the NVLink topology is switch"));
  // A pair listed twice is refused as the scenario loads.
  EXPECT_THROW(load_scenario(std::nullopt, {"platform.nvlink.pairs=0-1,1-0"}), InputError);
}

TEST(LocatedError, PresetConflictsNameTheKeyThatWasSet) {
  const InputError latency = replay_error(
      load_scenario(std::nullopt, {"platform.preset=dgx1", "network.inter_node_latency=5us"}));
  EXPECT_EQ(latency.where().file, "--set");
  EXPECT_EQ(latency.where().field, "network.inter_node_latency");
  EXPECT_THAT(latency.what(), HasSubstr("describes the generic platform only"));
  const InputError gpus = replay_error(
      load_scenario(std::nullopt, {"platform.preset=dgx1", "cluster.gpus_per_node=12"}));
  EXPECT_EQ(gpus.where().field, "cluster.gpus_per_node");
  EXPECT_THAT(gpus.what(), HasSubstr("(value given: '12')"));
  const InputError transport = replay_error(load_scenario(
      std::nullopt,
      {"platform.preset=dgx1", "platform.nic.link=pcie3_x16", "platform.nic.transport=rdma"}));
  EXPECT_EQ(transport.where().field, "platform.nic.transport");
  const InputError topology = replay_error(
      load_scenario(std::nullopt, {"platform.preset=v100_pcie_4x_10gbe", "platform.nvlink.topology=mesh"}));
  EXPECT_EQ(topology.where().field, "platform.nvlink.topology");
  const InputError streams = replay_error(load_scenario(
      std::nullopt, {"platform.preset=v100_pcie_4x_10gbe", "platform.nic.tcp_streams=4"}));
  EXPECT_EQ(streams.where().field, "platform.nic.tcp_streams");
}

TEST(LocatedError, AGpuCutOffNamesItsAttachment) {
  const InputError e = replay_error(load_scenario(
      std::nullopt, {"platform.preset=v100_pcie_4x_10gbe", "platform.pcie.gpu_attach=0,0,0,-1"}));
  EXPECT_EQ(e.where().field, "platform.pcie.gpu_attach");
  EXPECT_THAT(e.what(), HasSubstr("cannot reach"));
  EXPECT_THAT(e.what(), HasSubstr("(value given: '0,0,0,-1')"));
}

TEST(LocatedError, AHugeValueGivenIsShownBounded) {
  // located_error's echo of the value is bounded.
  Scenario s = load_scenario(std::nullopt, {"platform.preset=dgx1"});
  s.origins["platform.nvlink.ring_order"] = KeyOrigin{{"--set", std::nullopt, std::nullopt,
                                                      "platform.nvlink.ring_order"},
                                                     std::string(50'000, '7')};
  const std::string what =
      located_error(s, ParameterError("platform.nvlink.ring_order", "bad")).what();
  EXPECT_LT(what.size(), 400U);
  EXPECT_THAT(what, HasSubstr("... (50000 bytes)')"));
}

}  // namespace
}  // namespace ssgd::sim
