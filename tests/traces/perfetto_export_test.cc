// `ssgd export perfetto`'s converter: small hand-written traces packed and
// exported, compared byte for byte with golden JSON files under
// tests/data/export/ (SSGD_UPDATE_GOLDEN=1 rewrites them; review the diff),
// then read as JSON to check the structure the viewers rely on: every
// process and track named and sorted, every slice on a named track, flow
// ends paired, ids unique.
#include "traces/export/perfetto/perfetto_export.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>

#include "common/chrome_trace_writer.h"
#include "common/error.h"
#include "common/gzip_stream.h"
#include "tests/support/test_files.h"
#include "traces/trace_dump.h"

namespace ssgd::trace {
namespace {

namespace fs = std::filesystem;
const fs::path kSource = fs::path(SSGD_SOURCE_DIR);

class PerfettoExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ssgd_perfetto_export_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path pack(const std::string& name) {
    const fs::path out = dir_ / (name + ".ssgdt");
    TraceWriterOptions options;
    options.events_per_chunk = 4;
    pack_text_trace(kSource / "tests/data/traces" / (name + ".txtpb"), out, options);
    return out;
  }

  static std::string export_to_string(const fs::path& trace, PerfettoExportResult* result = nullptr) {
    auto reader = TraceReader::open(trace);
    std::ostringstream json;
    ChromeTraceWriter writer(json, false);
    const auto r = export_perfetto(reader, writer);
    writer.finish();
    if (result) *result = r;
    return json.str();
  }

  static void expect_golden(const std::string& json, const std::string& name) {
    const fs::path golden = kSource / "tests/data/export" / name;
    if (std::getenv("SSGD_UPDATE_GOLDEN") != nullptr) ssgd::testing::write_file_bytes(golden, json);
    EXPECT_EQ(json, ssgd::testing::read_file_bytes(golden)) << "differs from " << golden;
  }

  fs::path dir_;
};

// The checks every export must pass, whatever its input.
void expect_well_formed(const nlohmann::json& j, std::size_t expected_flows) {
  std::set<std::int64_t> named_processes, sorted_processes;
  std::set<std::pair<std::int64_t, std::int64_t>> named_tracks, sorted_tracks;
  std::map<std::uint64_t, std::set<std::string>> flow_phases;
  for (const auto& e : j.at("traceEvents")) {
    const std::string ph = e.at("ph");
    const auto pid = e.at("pid").get<std::int64_t>();
    if (ph == "M") {
      const std::string name = e.at("name");
      if (name == "process_name") named_processes.insert(pid);
      if (name == "process_sort_index") sorted_processes.insert(pid);
      if (name == "thread_name") named_tracks.insert({pid, e.at("tid").get<std::int64_t>()});
      if (name == "thread_sort_index") sorted_tracks.insert({pid, e.at("tid").get<std::int64_t>()});
      continue;
    }
    const std::pair<std::int64_t, std::int64_t> track{pid, e.at("tid").get<std::int64_t>()};
    EXPECT_TRUE(named_processes.count(pid)) << "process named after its first event: " << e;
    EXPECT_TRUE(named_tracks.count(track)) << "track named after its first event: " << e;
    if (ph == "s" || ph == "f") {
      EXPECT_TRUE(flow_phases[e.at("id").get<std::uint64_t>()].insert(ph).second)
          << "flow id used twice: " << e;
      if (ph == "f") {
        EXPECT_EQ(e.at("bp"), "e");
      }
    } else {
      EXPECT_TRUE(ph == "X" || ph == "i") << e;
    }
  }
  EXPECT_EQ(named_processes, sorted_processes);
  EXPECT_EQ(named_tracks, sorted_tracks);
  EXPECT_EQ(flow_phases.size(), expected_flows);
  for (const auto& [id, phases] : flow_phases) {
    EXPECT_EQ(phases, (std::set<std::string>{"s", "f"})) << "flow " << id << " is not a pair";
  }
}

TEST_F(PerfettoExportTest, GraphNodesAreSlicesOnATrackPerKind) {
  PerfettoExportResult r;
  const auto j = nlohmann::json::parse(export_to_string(pack("graph"), &r));
  expect_well_formed(j, 0);
  EXPECT_EQ(r.ranks, 2);
  EXPECT_EQ(r.skipped, 0u);
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> tracks;
  for (const auto& e : j["traceEvents"]) {
    if (e["name"] == "thread_name") tracks[{e["pid"], e["tid"]}] = e["args"]["name"];
  }
  int slices = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++slices;
    EXPECT_EQ(e["cat"], "graph_node");
    if (e["name"] == "ar" && e["pid"] == 2) {
      EXPECT_EQ((tracks[{2, e["tid"]}]), "graph COLLECTIVE");
      EXPECT_EQ(e["args"]["op"], "ALL_REDUCE");
      EXPECT_EQ(e["args"]["size_bytes"], 1048576);
      EXPECT_EQ(e["args"]["data_deps"], 1);
    }
  }
  EXPECT_EQ(slices, 4);
}

TEST_F(PerfettoExportTest, SmallTraceMatchesGoldenWithTracksAndFlows) {
  PerfettoExportResult r;
  const std::string json = export_to_string(pack("small"), &r);
  expect_golden(json, "small.json");
  const auto j = nlohmann::json::parse(json);
  // Rank 0's memcpy and first kernel were launched by API calls; its second
  // kernel and memset and the DTOH copy have no API call in the trace.
  expect_well_formed(j, 2);
  EXPECT_EQ(r.flows, 2u);
  EXPECT_EQ(r.ranks, 2);
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> tracks;
  std::map<std::int64_t, std::string> processes;
  for (const auto& e : j["traceEvents"]) {
    if (e["name"] == "thread_name") tracks[{e["pid"], e["tid"]}] = e["args"]["name"];
    if (e["name"] == "process_name") processes[e["pid"]] = e["args"]["name"];
  }
  // Two hosts with one GPU each: rank r is on hosts[r].
  const std::map<std::int64_t, std::string> want{{1, "rank 0 (node0)"}, {2, "rank 1 (node1)"}};
  EXPECT_EQ(processes, want);
  std::set<std::string> names;
  for (const auto& [key, name] : tracks) names.insert(name);
  EXPECT_EQ(names, (std::set<std::string>{"thread 4242 markers", "thread 4242 CUDA API",
                                          "GPU 0 stream 7", "GPU 0 stream 9"}));
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["name"] == "nccl ALL_REDUCE" && e["pid"] == 1) {
      EXPECT_EQ((tracks[{1, e["tid"]}]), "GPU 0 stream 9");
      EXPECT_EQ(e["args"]["sequence_number"], 0);
      EXPECT_EQ(e["args"]["communicator_id"], "12345678901234");
      EXPECT_EQ(e["args"]["size_bytes"], 4194304);
    }
    if (e["name"] == "fc1_forward" && e["pid"] == 1) {
      EXPECT_EQ(e["args"]["grid"], (nlohmann::json::array({128, 1, 1})));
      EXPECT_EQ(e["args"]["correlation_id"], 2);
    }
  }
  EXPECT_NE(json.find(R"("ts":12.500,"dur":8.000)"), std::string::npos);  // ns kept
}

TEST_F(PerfettoExportTest, MarkedTraceMatchesGolden) {
  PerfettoExportResult r;
  const std::string json = export_to_string(pack("marked"), &r);
  expect_golden(json, "marked.json");
  // Every kernel and collective of marked.txtpb has its launch call.
  expect_well_formed(nlohmann::json::parse(json), 30);
  EXPECT_EQ(r.unmatched, 0u);
}

TEST_F(PerfettoExportTest, OutputIsDeterministic) {
  const fs::path trace = pack("marked");
  EXPECT_EQ(export_to_string(trace), export_to_string(trace));
}

TEST_F(PerfettoExportTest, GzipOutputDecompressesToTheSameJson) {
  const fs::path trace = pack("small");
  const std::string plain = export_to_string(trace);
  {
    auto reader = TraceReader::open(trace);
    ChromeTraceFile file(dir_ / "small.json.gz");
    export_perfetto(reader, file.writer());
    file.commit();
  }
  const std::string gz = ssgd::testing::read_file_bytes(dir_ / "small.json.gz");
  ASSERT_GE(gz.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
  GzipReader in(dir_ / "small.json.gz");
  std::string back;
  char buf[4096];
  for (std::size_t n; (n = in.read(buf, sizeof buf)) > 0;) back.append(buf, n);
  EXPECT_EQ(back, plain);
}

TEST_F(PerfettoExportTest, TruncatedTraceIsAnErrorUnlessAllowed) {
  const fs::path whole = pack("marked");
  const std::string bytes = ssgd::testing::read_file_bytes(whole);
  const fs::path cut = dir_ / "cut.ssgdt";
  ssgd::testing::write_file_bytes(cut, bytes.substr(0, bytes.size() - 40));  // inside the footer
  {
    auto reader = TraceReader::open(cut);
    std::ostringstream json;
    ChromeTraceWriter writer(json, false);
    try {
      export_perfetto(reader, writer);
      FAIL() << "expected an InputError";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("cut.ssgdt"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("--allow-truncated"), std::string::npos) << e.what();
    }
  }
  auto reader = TraceReader::open(cut);
  std::ostringstream json;
  ChromeTraceWriter writer(json, false);
  const auto r = export_perfetto(reader, writer, {true});
  writer.finish();
  EXPECT_TRUE(r.truncated);
  EXPECT_GT(r.slices, 0u);
  EXPECT_TRUE(nlohmann::json::accept(json.str()));
}

}  // namespace
}  // namespace ssgd::trace
