#include "simulator/scenario/scenario.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "simulator/input/scenario_inputs.h"
#include "simulator/platform/link_preset.h"
#include "simulator/scenario/scenario_schema.h"

namespace ssgd::sim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

fs::path source_path(const std::string& relative) { return fs::path(SSGD_SOURCE_DIR) / relative; }
fs::path bad_file(const std::string& name) {
  return source_path("tests/data/scenarios/" + name);
}

// Writes `text` to a fresh file in the test's temporary folder.
fs::path write_yaml(const std::string& name, const std::string& text) {
  const fs::path dir = fs::path(::testing::TempDir()) / "ssgd_scenario_test";
  fs::create_directories(dir);
  const fs::path path = dir / name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

// The InputError that loading `file` with `sets` throws; fails the test if none.
InputError error_of(const std::optional<fs::path>& file, const std::vector<std::string>& sets) {
  try {
    (void)load_scenario(file, sets);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no InputError for " << (file ? file->string() : std::string("(no file)"));
  return InputError(InputLocation{}, "none");
}

InputError file_error(const fs::path& file) { return error_of(file, {}); }
InputError set_error(const std::string& flag) { return error_of(std::nullopt, {flag}); }

// Checks file, line and key path both in the location and in the message.
void expect_located(const InputError& e, const fs::path& file, std::optional<std::int64_t> line,
                    const std::string& field) {
  EXPECT_EQ(e.where().file, file.string());
  EXPECT_EQ(e.where().line, line);
  EXPECT_EQ(e.where().field, field);
  const std::string what = e.what();
  std::string prefix = file.string();
  if (line) prefix.append(":").append(std::to_string(*line));
  EXPECT_THAT(what, StartsWith(prefix + ":")) << what;
  if (!field.empty()) {
    EXPECT_THAT(what, HasSubstr("field '" + field + "'")) << what;
  }
}

TEST(Scenario, Defaults) {
  const Scenario s = load_scenario(std::nullopt, {});
  EXPECT_EQ(s.iterations, 10);
  EXPECT_EQ(s.nodes, 1);
  EXPECT_EQ(s.gpus_per_node, 1);
  EXPECT_EQ(s.workers(), 1);
  EXPECT_EQ(s.intra_node.preset, "pcie3_x16");
  EXPECT_FALSE(s.intra_node.bandwidth_bytes_per_s);
  EXPECT_FALSE(s.intra_node.latency);
  EXPECT_EQ(s.inter_node.preset, "10gbe");
  EXPECT_FALSE(s.inter_node.bandwidth_bytes_per_s);
  EXPECT_FALSE(s.inter_node.latency);
  EXPECT_EQ(s.overlap_policy, OverlapPolicy::kWfbp);
  EXPECT_FALSE(s.batch_per_gpu);
  EXPECT_EQ(s.io_time, Duration(0));
  EXPECT_EQ(s.h2d_time, Duration(0));
  EXPECT_EQ(s.update_time, Duration(0));
  EXPECT_FALSE(s.update_time_given);
  EXPECT_NE(find_link_preset(s.intra_node.preset), nullptr);
  EXPECT_NE(find_link_preset(s.inter_node.preset), nullptr);
}

// The defaults the docs show must be what a Scenario starts with: setting
// each key to its documented default changes nothing.
TEST(Scenario, DocumentedDefaultsMatchTheStruct) {
  for (const auto& key : scenario_keys()) {
    if (key.default_text.front() == '(') continue;  // "(preset)", "(input)": no value
    const std::string flag = std::string(key.path) + "=" + std::string(key.default_text);
    const Scenario s = load_scenario(std::nullopt, {flag});
    const Scenario d;
    EXPECT_EQ(s.iterations, d.iterations) << flag;
    EXPECT_EQ(s.nodes, d.nodes) << flag;
    EXPECT_EQ(s.gpus_per_node, d.gpus_per_node) << flag;
    EXPECT_EQ(s.intra_node.preset, d.intra_node.preset) << flag;
    EXPECT_EQ(s.inter_node.preset, d.inter_node.preset) << flag;
    EXPECT_EQ(s.overlap_policy, d.overlap_policy) << flag;
    EXPECT_EQ(s.io_time, d.io_time) << flag;
    EXPECT_EQ(s.h2d_time, d.h2d_time) << flag;
    EXPECT_EQ(s.update_time, d.update_time) << flag;
    EXPECT_EQ(s.platform.preset, d.platform.preset) << flag;
    EXPECT_EQ(s.network_model, d.network_model) << flag;
    EXPECT_EQ(s.algorithm, d.algorithm) << flag;
    EXPECT_EQ(s.servers, d.servers) << flag;
    EXPECT_EQ(s.servers_colocated, d.servers_colocated) << flag;
    EXPECT_EQ(s.platform.transport, d.platform.transport) << flag;
    EXPECT_EQ(s.perturb, d.perturb) << flag;
    EXPECT_EQ(s.scaling.mode, d.scaling.mode) << flag;
    EXPECT_EQ(s.scaling.fixed_fraction.value_or(0.0), d.scaling.fixed_fraction.value_or(0.0))
        << flag;
  }
}

TEST(Scenario, OverlapPolicyNames) {
  EXPECT_STREQ(to_string(OverlapPolicy::kBsp), "bsp");
  EXPECT_STREQ(to_string(OverlapPolicy::kWfbp), "wfbp");
}

TEST(Scenario, V100Example) {
  const Scenario s = load_scenario(source_path("scenarios/v100_4x4_10gbe.yaml"), {});
  EXPECT_EQ(s.iterations, 10);
  EXPECT_EQ(s.nodes, 4);
  EXPECT_EQ(s.gpus_per_node, 4);
  EXPECT_EQ(s.workers(), 16);
  EXPECT_EQ(s.intra_node.preset, "pcie3_x16");
  EXPECT_EQ(s.inter_node.preset, "10gbe");
  EXPECT_EQ(s.overlap_policy, OverlapPolicy::kWfbp);
  EXPECT_EQ(s.batch_per_gpu, 64);
}

TEST(Scenario, Dgx1Example) {
  const Scenario s = load_scenario(source_path("scenarios/dgx1_8x8_ib100.yaml"), {});
  EXPECT_EQ(s.nodes, 8);
  EXPECT_EQ(s.gpus_per_node, 8);
  EXPECT_EQ(s.workers(), 64);
  EXPECT_EQ(s.intra_node.preset, "nvlink2");
  EXPECT_EQ(s.inter_node.preset, "ib_edr100");
  EXPECT_FALSE(s.inter_node.bandwidth_bytes_per_s);
  EXPECT_EQ(s.overlap_policy, OverlapPolicy::kWfbp);
}

TEST(Scenario, BcaffeExample) {
  const Scenario s = load_scenario(source_path("scenarios/bcaffe_10gbe.yaml"), {});
  EXPECT_EQ(s.nodes, 4);
  EXPECT_EQ(s.gpus_per_node, 1);
  EXPECT_EQ(s.inter_node.preset, "10gbe");
  EXPECT_EQ(s.overlap_policy, OverlapPolicy::kWfbp);
  EXPECT_EQ(s.batch_per_gpu, 64);
}

TEST(Scenario, EveryKeyFromAFile) {
  const fs::path file = write_yaml("every_key.yaml", R"(iterations: 25
cluster:
  nodes: 16
  gpus_per_node: 8
network:
  intra_node: nvlink3
  intra_node_bandwidth: 200GB/s
  intra_node_latency: 1.5us
  inter_node: ib_hdr200
  inter_node_bandwidth: 200Gb/s
  inter_node_latency: 0ns
policy:
  overlap: bsp
workload:
  batch_per_gpu: 128
  io_time: 1.5ms
  h2d_time: 250 us
  update_time: 2ms
)");
  const Scenario s = load_scenario(file, {});
  EXPECT_EQ(s.iterations, 25);
  EXPECT_EQ(s.nodes, 16);
  EXPECT_EQ(s.gpus_per_node, 8);
  EXPECT_EQ(s.workers(), 128);
  EXPECT_EQ(s.intra_node.preset, "nvlink3");
  EXPECT_EQ(s.intra_node.bandwidth_bytes_per_s, 200e9);
  EXPECT_EQ(s.intra_node.latency, Duration(1'500));
  EXPECT_EQ(s.inter_node.preset, "ib_hdr200");
  EXPECT_EQ(s.inter_node.bandwidth_bytes_per_s, 25e9);
  EXPECT_EQ(s.inter_node.latency, Duration(0));
  EXPECT_EQ(s.overlap_policy, OverlapPolicy::kBsp);
  EXPECT_EQ(s.batch_per_gpu, 128);
  EXPECT_EQ(s.io_time, Duration(1'500'000));
  EXPECT_EQ(s.h2d_time, Duration(250'000));
  EXPECT_EQ(s.update_time, Duration(2'000'000));
}

TEST(Scenario, FlowStyleAndQuotedScalars) {
  const fs::path file = write_yaml("flow.yaml",
                                   "cluster: {nodes: 2, gpus_per_node: \"4\"}\n"
                                   "policy: {overlap: 'bsp'}\n");
  const Scenario s = load_scenario(file, {});
  EXPECT_EQ(s.nodes, 2);
  EXPECT_EQ(s.gpus_per_node, 4);
  EXPECT_EQ(s.overlap_policy, OverlapPolicy::kBsp);
}

TEST(Scenario, EveryKeyWithSet) {
  const Scenario s = load_scenario(
      std::nullopt, {"iterations=3", "cluster.nodes=2", "cluster.gpus_per_node=4",
                     "network.intra_node=nvlink2", "network.intra_node_bandwidth=900MiB/s",
                     "network.intra_node_latency=3us", "network.inter_node=100gbe",
                     "network.inter_node_bandwidth=10Gbps", "network.inter_node_latency=20 us",
                     "policy.overlap=bsp", "workload.batch_per_gpu=32", "workload.io_time=1ms",
                     "workload.h2d_time=0.5ms", "workload.update_time=100us"});
  EXPECT_EQ(s.iterations, 3);
  EXPECT_EQ(s.nodes, 2);
  EXPECT_EQ(s.gpus_per_node, 4);
  EXPECT_EQ(s.intra_node.preset, "nvlink2");
  EXPECT_EQ(s.intra_node.bandwidth_bytes_per_s, 900.0 * 1024 * 1024);
  EXPECT_EQ(s.intra_node.latency, Duration(3'000));
  EXPECT_EQ(s.inter_node.preset, "100gbe");
  EXPECT_EQ(s.inter_node.bandwidth_bytes_per_s, 1.25e9);
  EXPECT_EQ(s.inter_node.latency, Duration(20'000));
  EXPECT_EQ(s.overlap_policy, OverlapPolicy::kBsp);
  EXPECT_EQ(s.batch_per_gpu, 32);
  EXPECT_EQ(s.io_time, Duration(1'000'000));
  EXPECT_EQ(s.h2d_time, Duration(500'000));
  EXPECT_EQ(s.update_time, Duration(100'000));
  EXPECT_TRUE(s.update_time_given);
}

// A profile's measured update (a trace's) is the update time unless the
// scenario sets workload.update_time, even to its default.
TEST(Scenario, ProfileUpdateUnlessTheScenarioSetsTheKey) {
  trace::LayerProfile measured;
  measured.update = Duration(7'000);
  EXPECT_EQ(scenario_for_profile(Scenario{}, measured).update_time, Duration(7'000));
  EXPECT_EQ(scenario_for_profile(Scenario{}, trace::LayerProfile{}).update_time, Duration(0));
  const Scenario set = load_scenario(std::nullopt, {"workload.update_time=0ns"});
  EXPECT_EQ(scenario_for_profile(set, measured).update_time, Duration(0));
  const fs::path file = write_yaml("update.yaml", "workload:\n  update_time: 2us\n");
  EXPECT_EQ(scenario_for_profile(load_scenario(file, {}), measured).update_time, Duration(2'000));
}

// A trace of a job of several ranks: its world on nodes of the preset's
// GPUs, or of its host's; never over a cluster the scenario names.
TEST(Scenario, ATracesJobIsTheClusterUnlessTheScenarioNamesOne) {
  trace::LayerProfile p;
  p.traced.world = 16;
  p.traced.hosts = 1;
  p.traced.gpus_per_host = 8;
  Scenario s = load_scenario(std::nullopt, {});
  EXPECT_TRUE(scenario_for_traced_job(s, p).applied);
  EXPECT_EQ(s.nodes, 2);
  EXPECT_EQ(s.gpus_per_node, 8);
  // Fewer ranks than a node: part of one (the preset's node cut to them).
  p.traced.world = 2;
  Scenario hgx = load_scenario(std::nullopt, {"platform.preset=hgx_h100"});
  const TracedJob cut = scenario_for_traced_job(hgx, p);
  EXPECT_TRUE(cut.applied);
  EXPECT_EQ(hgx.workers(), 2);
  EXPECT_TRUE(hgx.gpus_per_node_given);
  EXPECT_THAT(cut.said, HasSubstr("a hgx_h100 node's 8 GPUs"));
  // Whole nodes or nothing: 12 ranks on nodes of 8 stay on the scenario's
  // cluster, and the message says how to replay the job.
  p.traced.world = 12;
  Scenario twelve = load_scenario(std::nullopt, {"platform.preset=hgx_h100"});
  const TracedJob no = scenario_for_traced_job(twelve, p);
  EXPECT_FALSE(no.applied);
  EXPECT_EQ(twelve.workers(), 8);
  EXPECT_THAT(no.said, HasSubstr("does not fill nodes of 8 GPUs"));
  // CPU ranks on hosts without GPUs: the ranks over the hosts recorded.
  trace::LayerProfile cpu;
  cpu.traced.world = 4;
  cpu.traced.hosts = 2;
  Scenario c = load_scenario(std::nullopt, {});
  EXPECT_TRUE(scenario_for_traced_job(c, cpu).applied);
  EXPECT_EQ(c.nodes, 2);
  EXPECT_EQ(c.gpus_per_node, 2);
  // A cluster the scenario names, or a trace of one rank: nothing.
  for (const char* key : {"cluster.nodes=1", "cluster.gpus_per_node=1"}) {
    Scenario named = load_scenario(std::nullopt, {key});
    const TracedJob none = scenario_for_traced_job(named, p);
    EXPECT_FALSE(none.applied);
    EXPECT_TRUE(none.said.empty());
    EXPECT_EQ(named.workers(), 1);
  }
  Scenario one = load_scenario(std::nullopt, {});
  EXPECT_TRUE(scenario_for_traced_job(one, trace::LayerProfile{}).said.empty());
  // A world size beyond the keys' bounds (a trace's metadata is untrusted):
  // the scenario's cluster, said.
  trace::LayerProfile huge;
  huge.traced.world = std::int64_t{1} << 40;
  huge.traced.gpus_per_host = 8;
  Scenario big = load_scenario(std::nullopt, {});
  const TracedJob refused = scenario_for_traced_job(big, huge);
  EXPECT_FALSE(refused.applied);
  EXPECT_THAT(refused.said, HasSubstr("beyond what cluster.nodes"));
  EXPECT_EQ(big.workers(), 1);
  huge.traced.world = 5000;  // no GPUs or hosts recorded: one node of 5000, too many
  huge.traced.gpus_per_host = 0;
  EXPECT_FALSE(scenario_for_traced_job(big, huge).applied);
}

TEST(Scenario, SetAppliesAfterTheFileInOrder) {
  const Scenario s = load_scenario(source_path("scenarios/v100_4x4_10gbe.yaml"),
                                   {"cluster.nodes=8", "policy.overlap=bsp", "cluster.nodes=2",
                                    " network.inter_node = 25gbe "});
  EXPECT_EQ(s.nodes, 2);
  EXPECT_EQ(s.gpus_per_node, 4);  // from the file
  EXPECT_EQ(s.overlap_policy, OverlapPolicy::kBsp);
  EXPECT_EQ(s.inter_node.preset, "25gbe");
}

TEST(Scenario, LimitsAreInclusive) {
  const Scenario s = load_scenario(std::nullopt, {"iterations=1000000", "cluster.nodes=1048576",
                                                  "cluster.gpus_per_node=1024"});
  EXPECT_EQ(s.iterations, 1'000'000);
  EXPECT_EQ(s.nodes, 1'048'576);
  EXPECT_EQ(s.gpus_per_node, 1'024);
  EXPECT_THAT(set_error("iterations=1000001").what(),
              HasSubstr("must be between 1 and 1000000, got 1000001"));
  EXPECT_THAT(set_error("iterations=0").what(), HasSubstr("must be between 1 and 1000000, got 0"));
  EXPECT_THAT(set_error("cluster.nodes=1048577").what(), HasSubstr("between 1 and 1048576"));
  EXPECT_THAT(set_error("cluster.gpus_per_node=1025").what(), HasSubstr("between 1 and 1024"));
  EXPECT_THAT(set_error("workload.batch_per_gpu=0").what(), HasSubstr("between 1 and"));
}

// --- the bad files under tests/data/scenarios ---

TEST(ScenarioFile, UnknownKey) {
  const fs::path file = bad_file("unknown_key.yaml");
  const InputError e = file_error(file);
  expect_located(e, file, 4, "cluster.nodez");
  EXPECT_EQ(e.reason(), "unknown key 'cluster.nodez' (did you mean 'cluster.nodes'?)");
}

TEST(ScenarioFile, WrongType) {
  const fs::path file = bad_file("wrong_type.yaml");
  const InputError e = file_error(file);
  expect_located(e, file, 4, "cluster.nodes");
  EXPECT_EQ(e.reason(), "expected an integer, got 'four'");
}

TEST(ScenarioFile, BadUnit) {
  const fs::path file = bad_file("bad_unit.yaml");
  const InputError e = file_error(file);
  expect_located(e, file, 4, "workload.io_time");
  EXPECT_EQ(e.reason(),
            "duration '5 parsecs': unknown unit 'parsecs'; write one of ns, us, \xC2\xB5s, ms, s "
            "(e.g. '1.5ms')");
}

TEST(ScenarioFile, ZeroNodes) {
  const fs::path file = bad_file("zero_nodes.yaml");
  const InputError e = file_error(file);
  expect_located(e, file, 4, "cluster.nodes");
  EXPECT_EQ(e.reason(), "must be between 1 and 1048576, got 0");
}

TEST(ScenarioFile, NegativeNodes) {
  const fs::path file = bad_file("negative_nodes.yaml");
  const InputError e = file_error(file);
  expect_located(e, file, 3, "cluster.nodes");
  EXPECT_EQ(e.reason(), "must be between 1 and 1048576, got -2");
}

TEST(ScenarioFile, NotAMapping) {
  const fs::path file = bad_file("not_a_mapping.yaml");
  const InputError e = file_error(file);
  expect_located(e, file, 2, "");
  EXPECT_EQ(e.reason(), "expected a mapping of scenario keys at the top level, got a sequence");
}

TEST(ScenarioFile, Malformed) {
  const fs::path file = bad_file("malformed.yaml");
  const InputError e = file_error(file);
  ASSERT_TRUE(e.where().line.has_value());
  expect_located(e, file, e.where().line, "");
  EXPECT_GE(*e.where().line, 4);  // the unclosed '{' is on line 4; the parser notices later
  EXPECT_THAT(e.reason(), StartsWith("not valid YAML: "));
}

// --- other bad files, written by the tests ---

TEST(ScenarioFile, MissingFile) {
  const fs::path file = write_yaml("placeholder.yaml", "") .parent_path() / "no_such_file.yaml";
  const InputError e = file_error(file);
  expect_located(e, file, std::nullopt, "");
  EXPECT_EQ(e.reason(), "cannot open the scenario file: no such file");
}

TEST(ScenarioFile, Directory) {
  const fs::path dir = write_yaml("placeholder.yaml", "").parent_path();
  const InputError e = file_error(dir);
  expect_located(e, dir, std::nullopt, "");
  EXPECT_EQ(e.reason(), "is a directory, not a scenario file");
}

TEST(ScenarioFile, EmptyFile) {
  const fs::path file = write_yaml("empty.yaml", "# only a comment\n");
  const InputError e = file_error(file);
  expect_located(e, file, std::nullopt, "");
  EXPECT_THAT(e.reason(), HasSubstr("empty"));
}

TEST(ScenarioFile, TwoDocuments) {
  const fs::path file = write_yaml("two.yaml", "iterations: 1\n---\niterations: 2\n");
  const InputError e = file_error(file);
  expect_located(e, file, std::nullopt, "");
  EXPECT_EQ(e.reason(), "holds more than one YAML document; a scenario file holds one");
}

TEST(ScenarioFile, ScalarDocument) {
  const fs::path file = write_yaml("scalar.yaml", "\n\njust text\n");
  const InputError e = file_error(file);
  expect_located(e, file, 3, "");
  EXPECT_EQ(e.reason(),
            "expected a mapping of scenario keys at the top level, got the scalar 'just text' (a scenario "
      "is YAML such as 'cluster: {nodes: 4}'; a profile or trace is the command's input, not its "
      "--scenario)");
}

TEST(ScenarioFile, ScalarWhereASectionBelongs) {
  const fs::path file = write_yaml("scalar_section.yaml", "iterations: 2\ncluster: 4\n");
  const InputError e = file_error(file);
  expect_located(e, file, 2, "cluster");
  EXPECT_EQ(e.reason(),
            "'cluster' is a section: expected a mapping of its keys (nodes, gpus_per_node), got "
            "the scalar '4'");
}

TEST(ScenarioFile, EmptySection) {
  const fs::path file = write_yaml("empty_section.yaml", "workload:\n");
  const InputError e = file_error(file);
  expect_located(e, file, 1, "workload");
  EXPECT_THAT(e.reason(), HasSubstr("got nothing (null)"));
}

TEST(ScenarioFile, MappingWhereAScalarBelongs) {
  const fs::path file = write_yaml("mapping_value.yaml", "cluster:\n  nodes:\n    count: 4\n");
  const InputError e = file_error(file);
  expect_located(e, file, 2, "cluster.nodes");
  EXPECT_EQ(e.reason(), "expected a value of type int, got a mapping");
}

TEST(ScenarioFile, SequenceWhereAScalarBelongs) {
  const fs::path file = write_yaml("sequence_value.yaml", "workload:\n  io_time: [1ms, 2ms]\n");
  const InputError e = file_error(file);
  expect_located(e, file, 2, "workload.io_time");
  EXPECT_EQ(e.reason(), "expected a value of type duration, got a sequence");
}

TEST(ScenarioFile, NullValue) {
  for (const char* value : {"", " ~", " null"}) {
    const fs::path file = write_yaml("null_value.yaml", std::string("iterations:") + value + "\n");
    const InputError e = file_error(file);
    expect_located(e, file, 1, "iterations");
    EXPECT_EQ(e.reason(), "expected a value of type int, got nothing (null)") << value;
  }
}

TEST(ScenarioFile, FractionalNodes) {
  const fs::path file = write_yaml("fraction.yaml", "cluster:\n  nodes: 2.5\n");
  const InputError e = file_error(file);
  expect_located(e, file, 2, "cluster.nodes");
  EXPECT_EQ(e.reason(), "expected an integer, got '2.5'");
}

TEST(ScenarioFile, BareNumberDuration) {
  const fs::path file = write_yaml("bare.yaml", "workload:\n  batch_per_gpu: 8\n  io_time: 5\n");
  const InputError e = file_error(file);
  expect_located(e, file, 3, "workload.io_time");
  EXPECT_THAT(e.reason(), StartsWith("duration '5': missing unit"));
}

TEST(ScenarioFile, NegativeDuration) {
  const fs::path file = write_yaml("negative.yaml", "workload:\n  update_time: -1ms\n");
  const InputError e = file_error(file);
  expect_located(e, file, 2, "workload.update_time");
  EXPECT_EQ(e.reason(), "duration '-1ms': must not be negative");
}

TEST(ScenarioFile, ZeroBandwidth) {
  const fs::path file = write_yaml("zero_bw.yaml", "network:\n  inter_node_bandwidth: 0GB/s\n");
  const InputError e = file_error(file);
  expect_located(e, file, 2, "network.inter_node_bandwidth");
  EXPECT_EQ(e.reason(), "must be greater than zero, got '0GB/s'");
}

TEST(ScenarioFile, BandwidthWithoutPerSecond) {
  const fs::path file = write_yaml("bw_unit.yaml", "network:\n  intra_node_bandwidth: 12GB\n");
  const InputError e = file_error(file);
  expect_located(e, file, 2, "network.intra_node_bandwidth");
  EXPECT_THAT(e.reason(), StartsWith("rate '12GB': unknown unit 'GB'"));
}

TEST(ScenarioFile, UnknownPreset) {
  const fs::path file = write_yaml("preset.yaml", "network:\n  inter_node: 40gbe\n");
  const InputError e = file_error(file);
  expect_located(e, file, 2, "network.inter_node");
  EXPECT_EQ(e.reason(), "unknown link preset '40gbe'; known presets: " + link_preset_names());
}

TEST(ScenarioFile, UnknownPolicy) {
  const fs::path file = write_yaml("policy.yaml", "policy:\n  overlap: WFBP\n");
  const InputError e = file_error(file);
  expect_located(e, file, 2, "policy.overlap");
  EXPECT_EQ(e.reason(), "unknown overlap policy 'WFBP'; expected one of bsp, wfbp, mgwfbp, ddp, horovod, single, priority");
}

TEST(ScenarioFile, KeyInTheWrongSection) {
  const fs::path file = write_yaml("wrong_section.yaml", "network:\n  nodes: 4\n");
  const InputError e = file_error(file);
  expect_located(e, file, 2, "network.nodes");
  EXPECT_EQ(e.reason(), "unknown key 'network.nodes' (did you mean 'cluster.nodes'?)");
}

TEST(ScenarioFile, UnknownTopLevelKeys) {
  {
    const fs::path file = write_yaml("misspelt_section.yaml", "clustr:\n  nodes: 4\n");
    const InputError e = file_error(file);
    expect_located(e, file, 1, "clustr");
    EXPECT_EQ(e.reason(), "unknown key 'clustr' (did you mean 'cluster'?)");
  }
  {
    const fs::path file = write_yaml("far_key.yaml", "iterations: 3\nsomething_else: 1\n");
    const InputError e = file_error(file);
    expect_located(e, file, 2, "something_else");
    EXPECT_EQ(e.reason(),
              "unknown key 'something_else' (top-level keys: iterations, cluster, platform, "
              "network, policy, workload, sharding, perturb, interference, scaling)");
  }
  {
    const fs::path file = write_yaml("short_leaf.yaml", "cluster:\n  gpus: 4\n");
    const InputError e = file_error(file);
    expect_located(e, file, 2, "cluster.gpus");
    EXPECT_EQ(e.reason(), "unknown key 'cluster.gpus' (did you mean 'cluster.gpus_per_node'?)");
  }
  {
    const fs::path file = write_yaml("far_leaf.yaml", "cluster:\n  size: 4\n");
    const InputError e = file_error(file);
    expect_located(e, file, 2, "cluster.size");
    EXPECT_EQ(e.reason(), "unknown key 'cluster.size' (keys under 'cluster': nodes, gpus_per_node)");
  }
}

TEST(ScenarioFile, TypoInALongKey) {
  const fs::path file = write_yaml("typo.yaml", "network:\n  intra_node_bandwith: 12GB/s\n");
  const InputError e = file_error(file);
  expect_located(e, file, 2, "network.intra_node_bandwith");
  EXPECT_EQ(e.reason(),
            "unknown key 'network.intra_node_bandwith' (did you mean "
            "'network.intra_node_bandwidth'?)");
}

TEST(ScenarioFile, DuplicateKey) {
  const fs::path file = write_yaml("duplicate.yaml", "cluster:\n  nodes: 4\n  nodes: 8\n");
  const InputError e = file_error(file);
  expect_located(e, file, 3, "cluster.nodes");
  EXPECT_EQ(e.reason(), "duplicate key 'cluster.nodes' (first given at line 2)");
}

TEST(ScenarioFile, DuplicateSection) {
  const fs::path file =
      write_yaml("duplicate_section.yaml", "cluster:\n  nodes: 4\niterations: 2\ncluster:\n  gpus_per_node: 2\n");
  const InputError e = file_error(file);
  expect_located(e, file, 4, "cluster");
  EXPECT_EQ(e.reason(), "duplicate key 'cluster' (first given at line 1)");
}

TEST(ScenarioFile, DottedKeyInAFile) {
  const fs::path file = write_yaml("dotted.yaml", "cluster.nodes: 4\n");
  const InputError e = file_error(file);
  expect_located(e, file, 1, "cluster.nodes");
  EXPECT_THAT(e.reason(), HasSubstr("contains '.'"));
}

TEST(ScenarioFile, NonScalarKey) {
  const fs::path file = write_yaml("complex_key.yaml", "cluster:\n  ? [a, b]\n  : 4\n");
  const InputError e = file_error(file);
  expect_located(e, file, 2, "cluster");
  EXPECT_EQ(e.reason(), "keys must be plain names, got a sequence");
}

TEST(ScenarioFile, ErrorAfterValidKeysNamesTheRightLine) {
  const fs::path file = write_yaml("late_error.yaml", R"(# comment
iterations: 5
cluster:
  nodes: 2
  gpus_per_node: 2
network:
  intra_node: nvlink2
  inter_node_latency: 5 lightyears
)");
  const InputError e = file_error(file);
  expect_located(e, file, 8, "network.inter_node_latency");
}

// --- --set ---

TEST(ScenarioSet, SameRangeCheckAsFiles) {
  const InputError e = set_error("cluster.nodes=0");
  expect_located(e, "--set", std::nullopt, "cluster.nodes");
  EXPECT_EQ(e.reason(), "must be between 1 and 1048576, got 0");
  EXPECT_EQ(std::string(e.what()),
            "--set: field 'cluster.nodes': must be between 1 and 1048576, got 0");
}

TEST(ScenarioSet, WrongTypeAndUnit) {
  {
    const InputError e = set_error("cluster.nodes=four");
    expect_located(e, "--set", std::nullopt, "cluster.nodes");
    EXPECT_EQ(e.reason(), "expected an integer, got 'four'");
  }
  {
    const InputError e = set_error("workload.io_time=5");
    expect_located(e, "--set", std::nullopt, "workload.io_time");
    EXPECT_THAT(e.reason(), StartsWith("duration '5': missing unit"));
  }
}

TEST(ScenarioSet, MissingEquals) {
  const InputError e = set_error("cluster.nodes");
  expect_located(e, "--set", std::nullopt, "cluster.nodes");
  EXPECT_EQ(e.reason(), "expected key.path=value, got 'cluster.nodes'");
  EXPECT_EQ(set_error("=4").reason(), "expected key.path=value, got '=4'");
}

TEST(ScenarioSet, EmptyValue) {
  const InputError e = set_error("cluster.nodes=");
  expect_located(e, "--set", std::nullopt, "cluster.nodes");
  EXPECT_EQ(e.reason(), "has no value; expected a value of type int");
}

TEST(ScenarioSet, UnknownKey) {
  const InputError e = set_error("cluster.node=4");
  expect_located(e, "--set", std::nullopt, "cluster.node");
  EXPECT_EQ(e.reason(), "unknown key 'cluster.node' (did you mean 'cluster.nodes'?)");
  EXPECT_EQ(set_error("nodes=4").reason(), "unknown key 'nodes' (did you mean 'cluster.nodes'?)");
}

TEST(ScenarioSet, SectionIsNotAKey) {
  const InputError e = set_error("cluster=4");
  expect_located(e, "--set", std::nullopt, "cluster");
  EXPECT_EQ(e.reason(),
            "'cluster' is a section; set one of its keys as cluster.<key>=value (nodes, "
            "gpus_per_node)");
}

TEST(ScenarioSet, FirstBadFlagWins) {
  const InputError e =
      error_of(std::nullopt, {"cluster.nodes=2", "policy.overlap=none", "iterations=0"});
  expect_located(e, "--set", std::nullopt, "policy.overlap");
}

TEST(ScenarioSet, FileErrorsComeFirst) {
  const fs::path file = bad_file("zero_nodes.yaml");
  const InputError e = error_of(file, {"cluster.nodes=4"});
  expect_located(e, file, 4, "cluster.nodes");
}

// --- the key table ---

TEST(ScenarioKeys, DescribesEveryKeyAligned) {
  const std::string table = describe_scenario_keys();
  std::vector<std::string> lines;
  for (std::size_t start = 0; start < table.size();) {
    const auto end = table.find('\n', start);
    ASSERT_NE(end, std::string::npos) << "the table ends with a newline";
    lines.push_back(table.substr(start, end - start));
    start = end + 1;
  }
  ASSERT_EQ(lines.size(), scenario_keys().size() + job_keys().size() + 1);
  EXPECT_THAT(lines[0], StartsWith("key "));
  const auto type_column = lines[0].find("type");
  const auto default_column = lines[0].find("default");
  const auto description_column = lines[0].find("description");
  for (std::size_t i = 0; i < scenario_keys().size(); ++i) {
    const auto& key = scenario_keys()[i];
    const std::string& line = lines[i + 1];
    EXPECT_THAT(line, StartsWith(std::string(key.path) + " "));
    EXPECT_EQ(line.substr(type_column, key.type.size()), key.type) << line;
    EXPECT_EQ(line.substr(default_column, key.default_text.size()), key.default_text) << line;
    EXPECT_EQ(line.substr(description_column), key.description) << line;
  }
  for (std::size_t i = 0; i < job_keys().size(); ++i) {
    const auto& key = job_keys()[i];
    const std::string& line = lines[scenario_keys().size() + i + 1];
    EXPECT_THAT(line, StartsWith("jobs[]." + std::string(key.name) + " "));
    EXPECT_EQ(line.substr(type_column, key.type.size()), key.type) << line;
    EXPECT_EQ(line.substr(description_column), key.description) << line;
  }
}

TEST(ScenarioKeys, SchemaCoversTheDocumentedKeys) {
  for (const char* path : {"iterations",
                           "cluster.nodes",
                           "cluster.gpus_per_node",
                           "network.intra_node",
                           "network.intra_node_bandwidth",
                           "network.intra_node_latency",
                           "network.inter_node",
                           "network.inter_node_bandwidth",
                           "network.inter_node_latency",
                           "policy.overlap",
                           "workload.batch_per_gpu",
                           "workload.io_time",
                           "workload.h2d_time",
                           "workload.update_time",
                           "platform.preset",
                           "platform.nic.transport",
                           "platform.fabric.oversubscription",
                           "network.model",
                           "network.algorithm",
                           "network.calibration",
                           "network.cpu_servers",
                           "platform.nic.tcp_streams",
                           "platform.nic.tcp_stream_rate",
                           "platform.nic.tcp_preset",
                           "perturb.compute_time_factor",
                           "perturb.layer_factors",
                           "perturb.class_factors",
                           "perturb.mixed_precision",
                           "perturb.mixed_precision_speedup",
                           "perturb.bandwidth_factors",
                           "perturb.latency_factors",
                           "perturb.stragglers",
                           "perturb.imbalance",
                           "perturb.jitter",
                           "perturb.jitter_draw",
                           "perturb.seed",
                           "perturb.repeats",
                           "policy.partition_size",
                           "policy.credit_size",
                           "policy.partition_overhead",
                           "policy.schedule_overhead",
                           "policy.update",
                           "policy.prefetch_depth",
                           "policy.bucket_view",
                           "scaling.mode",
                           "scaling.global_batch",
                           "scaling.fixed_fraction",
                           "scaling.second_profile",
                           "platform.gpu.memory",
                           "platform.gpu.model",
                           "workload.precision",
                           "workload.reduce_dtype",
                           "workload.gather_dtype",
                           "workload.optimizer",
                           "workload.accumulation",
                           "workload.no_sync",
                           "workload.activation_checkpointing",
                           "sharding.strategy",
                           "sharding.group",
                           "sharding.units",
                           "sharding.forward_prefetch",
                           "sharding.backward_prefetch",
                           "sharding.reshard_after_forward",
                           "sharding.max_gathers_in_flight",
                           "sharding.separate_streams",
                           "sharding.gradient_reduction",
                           "interference.model",
                           "interference.resource",
                           "interference.gpu.compute",
                           "interference.gpu.memory",
                           "interference.gpu.comm",
                           "interference.host.compute",
                           "interference.host.comm",
                           "interference.host.concurrent",
                           "interference.host.cpu_per_byte",
                           "workload.tracer_overhead",
                           "workload.fp32_matmul"}) {
    EXPECT_NE(find_scenario_key(path), nullptr) << path;
  }
  EXPECT_EQ(scenario_keys().size(), 111U);
  EXPECT_TRUE(is_scenario_section("platform.fabric"));
  EXPECT_EQ(find_scenario_key("cluster"), nullptr);
  EXPECT_TRUE(is_scenario_section("network"));
  EXPECT_FALSE(is_scenario_section("iterations"));
}

// Every key that README.md should document is documented there.
TEST(ScenarioKeys, ReadmeNamesEveryKey) {
  std::ifstream in(source_path("scenarios/README.md"));
  ASSERT_TRUE(in) << "scenarios/README.md";
  const std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& key : scenario_keys()) {
    const std::string quoted = std::string("`").append(key.path).append("`");
    EXPECT_THAT(readme, HasSubstr(quoted)) << key.path;
  }
  for (const auto& key : job_keys()) {
    const std::string quoted = std::string("`jobs[].").append(key.name).append("`");
    EXPECT_THAT(readme, HasSubstr(quoted)) << key.name;
  }
}

}  // namespace
}  // namespace ssgd::sim

namespace ssgd::sim {
namespace {

constexpr const char* kJobsYaml = R"(network:
  model: flow
cluster:
  nodes: 2
jobs:
  - name: other
    kind: training
    profile: other.csv
    nodes: 3
    policy: bsp
    iterations: 4
  - kind: traffic
    bytes: 64MiB
    period: 10ms
    nodes: 5
    op: all_gather
    algorithm: ring
)";

TEST(ScenarioJobs, ReadsTrainingAndTrafficJobsWithDefaults) {
  const fs::path file = write_yaml("jobs.yaml", kJobsYaml);
  const Scenario s = load_scenario(file, {});
  ASSERT_EQ(s.jobs.size(), 2u);
  const JobSpec& t = s.jobs[0];
  EXPECT_EQ(t.name, "other");
  EXPECT_EQ(t.kind, JobKind::kTraining);
  EXPECT_EQ(t.nodes, 3);
  EXPECT_EQ(t.first_node, 2);  // right after the scenario's own 2 nodes
  EXPECT_EQ(t.profile, file.parent_path() / "other.csv");  // relative to the file
  EXPECT_EQ(t.overlap, OverlapPolicy::kBsp);
  EXPECT_EQ(t.iterations, 4);
  EXPECT_EQ(t.line, 6);
  const JobSpec& g = s.jobs[1];
  EXPECT_EQ(g.name, "job2");
  EXPECT_EQ(g.kind, JobKind::kTraffic);
  EXPECT_EQ(g.first_node, 0);
  EXPECT_EQ(g.bytes, 64LL << 20);
  EXPECT_EQ(g.period, Duration(10'000'000));
  EXPECT_EQ(g.op, CollectiveOp::kAllGather);
  EXPECT_EQ(g.algorithm, CollectiveAlgorithm::kRing);
}

TEST(ScenarioJobs, SetChangesAndAddsJobs) {
  const fs::path file = write_yaml("jobs_set.yaml", kJobsYaml);
  const Scenario s = load_scenario(
      file, {"jobs.0.nodes=1", "jobs.2.kind=training", "jobs.2.nodes=2", "jobs.2.profile=x.csv"});
  ASSERT_EQ(s.jobs.size(), 3u);
  EXPECT_EQ(s.jobs[0].nodes, 1);
  EXPECT_EQ(s.jobs[2].first_node, 3);  // after 'other' on node 2
  EXPECT_EQ(s.jobs[2].profile, fs::path("x.csv"));  // a flag's path is as given
  EXPECT_EQ(s.jobs[2].file, "--set");
}

TEST(ScenarioJobs, BadJobsAreLocated) {
  const auto job_error = [](const std::string& name, const std::string& jobs,
                            const std::vector<std::string>& sets = {}) {
    const fs::path file = write_yaml(name, "network:\n  model: flow\njobs:\n" + jobs);
    return std::make_pair(file, error_of(file, sets));
  };
  {
    const auto [file, e] = job_error("j1.yaml", "  - nodes: 2\n    bytes: 1MiB\n");
    expect_located(e, file, 4, "jobs[0].kind");
    EXPECT_THAT(e.what(), HasSubstr("kind: training"));
  }
  {
    const auto [file, e] = job_error("j2.yaml", "  - kind: traffic\n    nodes: 2\n    bytes: 1MiB\n"
                                                "    profile: a.csv\n");
    expect_located(e, file, 4, "jobs[0].profile");
    EXPECT_THAT(e.what(), HasSubstr("'profile' is a training job key"));
  }
  {
    const auto [file, e] = job_error("j3.yaml", "  - kind: training\n    nodes: 2\n");
    expect_located(e, file, 4, "jobs[0].profile");
  }
  {
    const auto [file, e] =
        job_error("j4.yaml", "  - kind: training\n    nodes: 2\n    profile: a.csv\n    first_node: 0\n");
    expect_located(e, file, 4, "jobs[0].first_node");
    EXPECT_THAT(e.what(), HasSubstr("overlaps training job 'main' on nodes 0..0"));
  }
  {
    const auto [file, e] = job_error("j5.yaml", "  - kind: traffic\n    nodes: 2\n    bytess: 1MiB\n");
    expect_located(e, file, 6, "jobs[0].bytess");
    EXPECT_THAT(e.what(), HasSubstr("did you mean 'bytes'"));
  }
  {
    const auto [file, e] = job_error("j6.yaml", "  - kind: traffic\n    nodes: 2\n    bytes: 0\n");
    expect_located(e, file, 6, "jobs[0].bytes");
  }
  {
    const auto [file, e] = job_error("j7.yaml", "  kind: traffic\n");
    expect_located(e, file, 3, "jobs");
    EXPECT_THAT(e.what(), HasSubstr("expected a sequence of jobs"));
  }
  {
    const auto [file, e] = job_error("j8.yaml", "  - name: main\n");
    EXPECT_THAT(e.what(), HasSubstr("'main' is the scenario's own"));
  }
  {
    const auto [file, e] = job_error("j9.yaml", "  - kind: traffic\n    nodes: 2\n    bytes: 1MiB\n",
                                     {"network.model=analytical"});
    EXPECT_EQ(e.where().field, "jobs");
    EXPECT_THAT(e.what(), HasSubstr("set network.model: flow"));
  }
  {
    const auto [file, e] = job_error("j10.yaml", "  - kind: traffic\n    nodes: 1\n    bytes: 1MiB\n");
    expect_located(e, file, 4, "jobs[0].nodes");
    EXPECT_THAT(e.what(), HasSubstr("at least 2"));
  }
  {
    const auto [file, e] = job_error(
        "j11.yaml", "  - kind: traffic\n    nodes: 2\n    bytes: 1MiB\n  - name: job1\n    kind: traffic\n"
                    "    nodes: 2\n    bytes: 1MiB\n");
    EXPECT_THAT(e.what(), HasSubstr("job name 'job1' is used twice"));
  }
  EXPECT_THAT(set_error("jobs.1.nodes=2").what(), HasSubstr("the next one is jobs.0"));
  EXPECT_THAT(set_error("jobs.x.nodes=2").what(), HasSubstr("jobs.<index>.<key>"));
  EXPECT_THAT(set_error("jobs=2").what(), HasSubstr("jobs.<index>.<key>"));
}

// --- scaling.* ---

TEST(ScenarioScaling, ReadsTheKeys) {
  const fs::path file = write_yaml("scaling.yaml",
                                   "cluster:\n  nodes: 4\nscaling:\n  mode: strong\n"
                                   "  global_batch: 250\n  second_profile: other/at128.csv\n");
  // load_scenario reads the second profile: it must exist and give its batch.
  fs::create_directories(file.parent_path() / "other");
  fs::copy_file("tests/data/profiles/good.csv", file.parent_path() / "other/at128.csv",
                fs::copy_options::overwrite_existing);
  const Scenario s = load_scenario(file, {});
  EXPECT_EQ(s.scaling.mode, ScalingMode::kStrong);
  EXPECT_EQ(s.scaling.global_batch, 250);
  EXPECT_FALSE(s.scaling.fixed_fraction);
  // Relative to the scenario file's folder, as network.calibration.
  EXPECT_EQ(*s.scaling.second_profile, file.parent_path() / "other/at128.csv");
  // The last --set wins; --set paths stay relative to the current directory.
  const Scenario t = load_scenario(file, {"scaling.mode=weak", "scaling.global_batch=8",
                                          "scaling.mode = strong",
                                          "scaling.second_profile=tests/data/profiles/good.csv"});
  EXPECT_EQ(t.scaling.mode, ScalingMode::kStrong);
  EXPECT_EQ(t.scaling.global_batch, 8);
  EXPECT_EQ(*t.scaling.second_profile, fs::path("tests/data/profiles/good.csv"));
  ASSERT_TRUE(t.files.second_profile);
  EXPECT_EQ(t.files.second_profile->source, "tests/data/profiles/good.csv");
  EXPECT_EQ(load_scenario(std::nullopt, {"scaling.fixed_fraction=0.25"}).scaling.fixed_fraction,
            0.25);
}

TEST(ScenarioScaling, BadValuesNameTheKey) {
  expect_located(set_error("scaling.mode=medium"), "--set", std::nullopt, "scaling.mode");
  EXPECT_THAT(set_error("scaling.mode=medium").what(), HasSubstr("expected weak or strong"));
  EXPECT_THAT(set_error("scaling.global_batch=0").what(),
              HasSubstr("field 'scaling.global_batch': must be between 1"));
  EXPECT_THAT(set_error("scaling.global_batch=64.5").what(), HasSubstr("expected an integer"));
  EXPECT_THAT(set_error("scaling.fixed_fraction=1").what(),
              HasSubstr("field 'scaling.fixed_fraction': must be at least 0 and below 1, got 1"));
  EXPECT_THAT(set_error("scaling.fixed_fraction=-0.1").what(), HasSubstr("scaling.fixed_fraction"));
  EXPECT_THAT(set_error("scaling.fixed_fraction=half").what(), HasSubstr("expected a number"));
  EXPECT_THAT(set_error("scaling.second_profile=").what(), HasSubstr("scaling.second_profile"));
  EXPECT_THAT(set_error("scaling.global_bach=64").what(),
              HasSubstr("did you mean 'scaling.global_batch'"));
  EXPECT_THAT(set_error("scaling.strong=true").what(),
              HasSubstr("keys under 'scaling': mode, global_batch, fixed_fraction, second_profile"));
}

TEST(ScenarioScaling, KeysThatContradictEachOtherAreRefused) {
  // A global batch in weak mode.
  InputError e = error_of(std::nullopt, {"scaling.global_batch=256"});
  expect_located(e, "--set", std::nullopt, "scaling.global_batch");
  EXPECT_THAT(e.reason(), HasSubstr("scaling.mode is weak"));
  // Fewer samples than GPUs, whatever order the keys come in.
  e = error_of(std::nullopt, {"scaling.global_batch=8", "scaling.mode=strong", "cluster.nodes=4",
                              "cluster.gpus_per_node=4"});
  expect_located(e, "--set", std::nullopt, "scaling.global_batch");
  EXPECT_THAT(e.reason(), HasSubstr("8 samples cannot be split over 16 GPUs (4 node(s) x 4)"));
  // A file's keys are named with the file.
  const fs::path file = write_yaml(
      "few.yaml", "cluster:\n  nodes: 4\nscaling:\n  mode: strong\n  global_batch: 3\n");
  expect_located(file_error(file), file, std::nullopt, "scaling.global_batch");
  // Both sources of the compute model.
  e = error_of(std::nullopt, {"scaling.fixed_fraction=0.2", "scaling.second_profile=b.csv"});
  expect_located(e, "--set", std::nullopt, "scaling.fixed_fraction");
  EXPECT_THAT(e.reason(), HasSubstr("not both"));
  // Strong scaling and jobs on a shared fabric.
  e = error_of(std::nullopt, {"network.model=flow", "scaling.mode=strong", "jobs.0.kind=traffic",
                              "jobs.0.nodes=2", "jobs.0.bytes=1MiB"});
  expect_located(e, "--set", std::nullopt, "scaling.mode");
  // Enough samples, or the default, are fine.
  EXPECT_NO_THROW(load_scenario(std::nullopt,
                                {"scaling.mode=strong", "cluster.nodes=4", "scaling.global_batch=4"}));
  EXPECT_NO_THROW(load_scenario(std::nullopt, {"scaling.mode=strong", "cluster.nodes=4"}));
}

TEST(ScenarioJobs, KeysAreDescribed) {
  const std::string keys = describe_scenario_keys();
  for (const auto& k : job_keys()) EXPECT_THAT(keys, HasSubstr("jobs[]." + std::string(k.name)));
}

// Scenario strings reach reports and traces, which are UTF-8 (issue 15).
TEST(ScenarioErrors, TextThatIsNotUtf8IsRefusedAtItsLine) {
  const fs::path file = write_yaml("bad_utf8.yaml", "cluster:\n  nodes: 2\njobs:\n  - name: a\xFF\n");
  const InputError e = error_of(file, {});
  EXPECT_EQ(e.where().line, 4);
  EXPECT_THAT(e.what(), ::testing::HasSubstr("the scenario file is not valid UTF-8 (byte 0xff"));
  const InputError s = error_of(std::nullopt, {"jobs.0.name=b\xC0\xAF"});
  EXPECT_EQ(s.where().file, "--set");
  EXPECT_THAT(s.what(), ::testing::HasSubstr("the value is not valid UTF-8"));
}

// YAML text holds no control characters but tab and line breaks; yaml-cpp
// turns some (NUL) into bytes that are not UTF-8 (fuzz/sweep_grid_fuzzer).
TEST(ScenarioErrors, AControlCharacterIsRefusedAtItsLine) {
  const char text[] = "cluster:\n  nodes: 2\njobs:\n  - name: a\x00" "b\n";
  const InputError e = error_of(write_yaml("control.yaml", std::string(text, sizeof text - 1)), {});
  EXPECT_EQ(e.where().line, 4);
  EXPECT_THAT(e.what(), HasSubstr("the scenario file holds the control character 0x00"));
}

// yaml-cpp 0.7's LoadAll loops without end on a document that starts with
// ',' (fuzz/scenario_yaml_fuzzer): refused at once, naming the line.
TEST(ScenarioErrors, ADocumentThatStartsWithACommaIsRefused) {
  const InputError e = error_of(write_yaml("comma.yaml", ",\n"), {});
  EXPECT_THAT(e.what(), HasSubstr("not valid YAML"));
  const InputError second = error_of(write_yaml("comma2.yaml", "iterations: 2\n---\n,\n"), {});
  EXPECT_THAT(second.what(), HasSubstr("more than one YAML document"));
}


// ---------------------------------------------------------------- files keys name

// A missing file that a key names is refused at the key (file and line, or
// --set), with the path as resolved; a reader's complaint about such a file
// says which key named it and where.
TEST(ScenarioNamedFiles, AMissingCalibrationIsNamedAtItsKeyAndLine) {
  const fs::path file = write_yaml("missing_calibration.yaml",
                                   "iterations: 3\nnetwork:\n  calibration: no_such_cal.yaml\n");
  const InputError e = file_error(file);
  expect_located(e, file, 3, "network.calibration");
  EXPECT_THAT(e.what(), HasSubstr("cannot read '" + (file.parent_path() / "no_such_cal.yaml").string() +
                                  "': No such file or directory"));
  const InputError s = set_error("network.calibration=no_such_cal.yaml");
  EXPECT_EQ(s.where().file, "--set");
  EXPECT_EQ(s.where().field, "network.calibration");
  EXPECT_EQ(std::string(s.what()),
            "--set: field 'network.calibration': cannot read 'no_such_cal.yaml': No such file or "
            "directory");
}

TEST(ScenarioNamedFiles, AMissingSecondProfileIsNamedAtItsKey) {
  const InputError e = set_error("scaling.second_profile=no_such_profile.csv");
  EXPECT_EQ(std::string(e.what()),
            "--set: field 'scaling.second_profile': cannot read 'no_such_profile.csv': No such "
            "file or directory");
}

TEST(ScenarioNamedFiles, ABadCalibrationSaysWhichKeyNamedIt) {
  write_yaml("not_a_calibration.yaml", "just: text\n");
  const fs::path file =
      write_yaml("bad_calibration.yaml", "network:\n  calibration: not_a_calibration.yaml\n");
  const InputError e = file_error(file);
  // Located in the calibration file itself, and the key that named it.
  EXPECT_EQ(e.where().file, (file.parent_path() / "not_a_calibration.yaml").string());
  EXPECT_THAT(e.what(), HasSubstr("(the file network.calibration names, at " + file.string() + ":2)"));
  const InputError folder = set_error("network.calibration=" + file.parent_path().string());
  EXPECT_THAT(folder.what(), HasSubstr("field 'network.calibration': is a folder"));
  EXPECT_THAT(folder.what(), HasSubstr("(the file network.calibration names, given with --set)"));
}

TEST(ScenarioNamedFiles, AJobsKeysAreRecordedWhereTheyWereGiven) {
  const fs::path file = write_yaml("job_origins.yaml",
                                   "network:\n  model: flow\njobs:\n  - kind: training\n"
                                   "    nodes: 1\n    profile: other.csv\n");
  const Scenario s = load_scenario(file, {"jobs.1.kind=training", "jobs.1.nodes=1",
                                          "jobs.1.profile=x.csv"});
  const InputLocation profile = key_location(s, "jobs.0.profile");
  EXPECT_EQ(profile.file, file.string());
  EXPECT_EQ(profile.line, 6);
  EXPECT_EQ(profile.field, "jobs[0].profile");
  EXPECT_EQ(key_location(s, "jobs.1.profile").file, "--set");
  EXPECT_EQ(key_location(s, "jobs.1.profile").field, "jobs.1.profile");
  // The job's profile is read by the command that runs jobs: missing, it is
  // named at its key there (check_named_file).
  try {
    check_named_file(s, scenario_files(s).at(0));
    ADD_FAILURE() << "a missing job profile passed";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              file.string() + ":6: field 'jobs[0].profile': cannot read '" +
                  (file.parent_path() / "other.csv").string() + "': No such file or directory");
  }
}

// ---------------------------------------------------------------- long text

// Untrusted text is echoed bounded: a 2 MB value, key or path (the bound
// does not depend on the length; yaml-cpp takes seconds over 20 MB) makes a
// message of a few hundred bytes that still says how long it was.
TEST(ScenarioEchoes, AHugeValueOrPathIsShownBounded) {
  const std::string huge(2 * 1024 * 1024, 'a');
  const fs::path value_file = write_yaml("huge_value.yaml", "cluster:\n  nodes: " + huge + "\n");
  const InputError value = file_error(value_file);
  EXPECT_LT(std::string(value.what()).size(), 600U) << std::string(value.what()).substr(0, 600);
  EXPECT_THAT(value.what(), HasSubstr("field 'cluster.nodes': expected an integer, got 'aaaa"));
  EXPECT_THAT(value.what(), HasSubstr("... (2097152 bytes)'"));

  const fs::path path_file =
      write_yaml("huge_path.yaml", "network:\n  calibration: " + huge + "\n");
  const InputError path = file_error(path_file);
  EXPECT_LT(std::string(path.what()).size(), 600U);
  EXPECT_THAT(path.what(), HasSubstr("field 'network.calibration': cannot read '"));
  EXPECT_THAT(path.what(), HasSubstr(" bytes)': File name too long"));

  const std::string big(100'000, '9');
  for (const std::string& flag :
       {"cluster.nodes=" + big, big + "=1", "platform.nvlink.pairs=0-" + big,
        "workload.io_time=5" + big, "perturb.layer_factors=x:" + big, "cluster.nodes" + big}) {
    const std::string what = set_error(flag).what();
    EXPECT_LT(what.size(), 1000U) << what.substr(0, 1000);
    EXPECT_THAT(what, HasSubstr("... (1000"));
  }
}

}  // namespace
}  // namespace ssgd::sim
