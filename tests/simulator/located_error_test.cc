// A model's complaint about a value names the key, where the user set it
// (file and line, or --set) and the value, whichever layer found it.
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "simulator/replay/replay.h"
#include "simulator/scenario/scenario.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

trace::LayerProfile two_layers() {
  trace::LayerProfile p;
  p.layers.push_back({0, "a", Duration(1'000'000), Duration(2'000'000), 4'000'000, std::nullopt});
  p.layers.push_back({1, "b", Duration(1'000'000), Duration(2'000'000), 4'000'000, std::nullopt});
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

}  // namespace
}  // namespace ssgd::sim
