// `ssgd dataset pack|verify` as library calls on the dataset of
// tests/support/dataset_builder.h: pack and check, byte-identical manifests,
// every rule of pack with its message, and the replays against
// `ssgd simulate`'s own path.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "simulator/dataset/dataset_pack.h"
#include "simulator/dataset/dataset_replay.h"
#include "simulator/input/scenario_inputs.h"
#include "simulator/replay/replay.h"
#include "presentation/report/dataset_report.h"
#include "tests/support/dataset_builder.h"
#include "tests/support/test_files.h"
#include "traces/dataset/dataset_check.h"

namespace ssgd::sim {
namespace {

namespace fs = std::filesystem;
using ssgd::testing::read_file_bytes;
using ssgd::testing::write_file_bytes;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Pack options with a name (or none) and a description, the tolerance left as it is.
DatasetPackOptions named(std::optional<std::string> name, std::string description) {
  DatasetPackOptions o;
  o.name = std::move(name);
  o.description = std::move(description);
  return o;
}

class Dataset : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    data_ = dir_ / "ds";
    testing::write_test_dataset(data_);
  }
  std::string pack_error() {
    try {
      pack_dataset(data_);
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no error)";
  }
  void edit(const std::string& rel, const std::string& from, const std::string& to) {
    std::string text = read_file_bytes(data_ / rel);
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    write_file_bytes(data_ / rel, text.replace(at, from.size(), to));
  }
  void write_manifest() {
    write_file_bytes(data_ / "manifest.json", trace::manifest_text(pack_dataset(data_)));
  }
  std::string file(const std::string& rel) const { return (data_ / rel).string(); }

  fs::path data_;
};

TEST_F(Dataset, PackListsEntriesByIdAndEveryFile) {
  const trace::DatasetManifest m = pack_dataset(data_, named(std::nullopt, "tests"));
  EXPECT_EQ(m.name, "ds") << "the folder's name by default";
  EXPECT_EQ(m.description, "tests");
  ASSERT_EQ(m.entries.size(), 3u);
  EXPECT_EQ(m.entries[0].id, "marked");
  EXPECT_EQ(m.entries[1].id, "tiny-w2");
  EXPECT_EQ(m.entries[2].trace, "tiny/w4/profile.csv");
  EXPECT_EQ(m.entries[2].predict_from, std::vector<std::string>{"tiny-w2"});
  std::vector<std::string> paths;
  for (const auto& f : m.files) paths.push_back(f.path);
  EXPECT_THAT(paths,
              ElementsAre("README.md", "marked/entry.json", "marked/marked.ssgdt",
                          "marked/scenario.yaml", "shared/network.yaml", "tiny/w2/entry.json",
                          "tiny/w2/profile.csv", "tiny/w2/scenario.yaml", "tiny/w4/entry.json",
                          "tiny/w4/profile.csv", "tiny/w4/scenario.yaml"));
}

TEST_F(Dataset, PackingTwiceGivesTheSameBytesAndKeepsNameAndDescription) {
  const std::string first = trace::manifest_text(pack_dataset(data_, named("cpu", "about")));
  write_file_bytes(data_ / "manifest.json", first);
  EXPECT_EQ(trace::manifest_text(pack_dataset(data_)), first);
  // A copy elsewhere, built again from scratch, packs to the same bytes.
  testing::write_test_dataset(dir_ / "again");
  EXPECT_EQ(trace::manifest_text(pack_dataset(dir_ / "again", named("cpu", "about"))), first);
}

TEST_F(Dataset, VerifyReplaysEveryEntryAndWhatIfCaseAsSimulateDoes) {
  write_manifest();
  const trace::DatasetCheck check = trace::check_dataset(data_);
  ASSERT_THAT(check.problems, ::testing::IsEmpty());
  const std::vector<DatasetCase> cases = replay_dataset(data_, check.manifest);
  ASSERT_EQ(cases.size(), 4u);
  EXPECT_EQ(cases[0].name(), "marked");
  EXPECT_EQ(cases[1].name(), "tiny-w2");
  EXPECT_EQ(cases[2].name(), "tiny-w4");
  EXPECT_EQ(cases[3].name(), "tiny-w4 <- tiny-w2");
  EXPECT_EQ(cases[3].kind, DatasetCaseKind::kWhatIf);
  EXPECT_EQ(cases[3].trace, "tiny/w2/profile.csv");
  EXPECT_EQ(cases[3].scenario, "tiny/w4/scenario.yaml");
  // Each prediction is what `ssgd simulate TRACE --scenario SCENARIO` computes.
  for (const DatasetCase& c : cases) {
    const ReplayInput input = load_replay_input(data_ / c.trace);
    const Scenario scenario = load_scenario(data_ / c.scenario, {});
    EXPECT_EQ(c.predicted, replay(input.profile, scenario).iteration_time) << c.name();
    const double median = static_cast<double>(c.measured.median.ns());
    EXPECT_DOUBLE_EQ(c.error_percent,
                     (static_cast<double>(c.predicted.ns()) - median) / median * 100)
        << c.name();
  }
  // The calibration that tiny-w2's scenario names is used: without it, the
  // prediction differs.
  Scenario uncalibrated = load_scenario(data_ / "tiny/w2/scenario.yaml", {});
  ASSERT_TRUE(uncalibrated.calibration.has_value());
  uncalibrated.calibration.reset();
  EXPECT_NE(cases[1].predicted,
            replay(load_replay_input(data_ / "tiny/w2/profile.csv").profile, uncalibrated)
                .iteration_time);
  // More threads give the same cases in the same order.
  DatasetReplayOptions three;
  three.jobs = 3;
  std::size_t calls = 0;
  three.progress = [&](const DatasetCase&, std::size_t done, std::size_t total, double) {
    EXPECT_EQ(done, ++calls);
    EXPECT_EQ(total, 4u);
  };
  const std::vector<DatasetCase> again = replay_dataset(data_, check.manifest, three);
  ASSERT_EQ(again.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(again[i].name(), cases[i].name());
    EXPECT_EQ(again[i].predicted, cases[i].predicted);
  }
  EXPECT_EQ(calls, 4u);
}

TEST_F(Dataset, SummaryTakesMedianAndWorstPerKind) {
  write_manifest();
  const trace::DatasetManifest m = trace::check_dataset(data_).manifest;
  std::vector<DatasetCase> cases(4);
  const double errors[] = {-1.0, 3.0, -8.0, 2.0};
  const char* const ids[] = {"e0", "e1", "e2", "e3"};
  for (std::size_t i = 0; i < 4; ++i) {
    cases[i].entry = ids[i];
    cases[i].from = i == 3 ? "e0" : cases[i].entry;
    cases[i].kind = i == 3 ? DatasetCaseKind::kWhatIf : DatasetCaseKind::kReplay;
    cases[i].error_percent = errors[i];
  }
  const report::DatasetSummary s = report::summarise_dataset(cases, m);
  EXPECT_EQ(s.replay.cases, 3u);
  EXPECT_DOUBLE_EQ(*s.replay.median_abs_error_percent, 3.0);
  EXPECT_DOUBLE_EQ(*s.replay.worst_abs_error_percent, 8.0);
  EXPECT_EQ(s.replay.worst_case, "e2");
  EXPECT_DOUBLE_EQ(*s.all.median_abs_error_percent, 2.5) << "mean of the middle two";
  EXPECT_EQ(s.what_if.worst_case, "e3 <- e0");
  // Each entry's p90 - p10 is 300 ns: 300/50000, 300/9000, 300/11000.
  EXPECT_DOUBLE_EQ(*s.median_noise_percent, 300.0 / 11000 * 100);
  EXPECT_FALSE(report::summarise_dataset({}, m).all.median_abs_error_percent.has_value());
}

TEST_F(Dataset, PackRefusesBadEntriesNamingFileAndField) {
  edit("tiny/w4/entry.json", "\"predict_from\": [\"tiny-w2\"]", "\"predict_from\": [\"nope\"]");
  EXPECT_EQ(pack_error(),
            file("tiny/w4/entry.json") + ": field 'predict_from[0]': no entry has the id 'nope'");
  edit("tiny/w4/entry.json", "\"nope\"", "\"tiny-w2\"");
  edit("marked/entry.json", "\"id\": \"marked\"", "\"id\": \"tiny-w2\"");
  EXPECT_EQ(pack_error(), file("tiny/w2/entry.json") +
                              ": field 'id': duplicate id 'tiny-w2': marked/entry.json has it too");
}

TEST_F(Dataset, PackRefusesMissingEscapingAndLinkedFiles) {
  edit("marked/entry.json", "\"marked.ssgdt\"", "\"gone.ssgdt\"");
  EXPECT_EQ(pack_error(), file("marked/entry.json") + ": field 'trace': '" +
                              file("marked/gone.ssgdt") + "' does not exist");
  edit("marked/entry.json", "\"gone.ssgdt\"", "\"../../outside.ssgdt\"");
  EXPECT_EQ(pack_error(), file("marked/entry.json") +
                              ": field 'trace': '../../outside.ssgdt' leaves the dataset folder");
  edit("marked/entry.json", "\"../../outside.ssgdt\"", "\"link.ssgdt\"");
  fs::copy_file(data_ / "marked/marked.ssgdt", dir_ / "outside.ssgdt");
  fs::create_symlink(dir_ / "outside.ssgdt", data_ / "marked/link.ssgdt");
  EXPECT_EQ(pack_error(), file("marked/link.ssgdt") +
                              ": is a symbolic link; a dataset holds regular files only, so that "
                              "nothing in it points outside");
}

TEST_F(Dataset, PackRefusesScenarioFilesOutsideTheDataset) {
  fs::copy_file(data_ / "shared/network.yaml", dir_ / "network.yaml");
  edit("tiny/w2/scenario.yaml", "../../shared/network.yaml", "../../../network.yaml");
  EXPECT_EQ(pack_error(), file("tiny/w2/scenario.yaml") + ": field 'network.calibration': '" +
                              (data_ / "tiny/w2/../../../network.yaml").string() +
                              "' is outside the dataset folder '" + data_.string() + "'");
  edit("tiny/w2/scenario.yaml", "../../../network.yaml", "../../shared/.network.yaml");
  fs::copy_file(data_ / "shared/network.yaml", data_ / "shared/.network.yaml");
  EXPECT_EQ(pack_error(), file("tiny/w2/scenario.yaml") +
                              ": field 'network.calibration': 'shared/.network.yaml' is hidden "
                              "(a name starting with '.'); hidden files are not part of a "
                              "dataset");
}

TEST_F(Dataset, PackRefusesUnreadableTracesAndScenarios) {
  write_file_bytes(data_ / "marked/marked.ssgdt", "not a trace");
  EXPECT_THAT(pack_error(), HasSubstr(file("marked/marked.ssgdt") + ":1: not a recognised input"));
  testing::write_test_dataset(dir_ / "fresh");
  data_ = dir_ / "fresh";
  edit("marked/scenario.yaml", "nodes: 1", "nodes: 0");
  EXPECT_THAT(pack_error(), HasSubstr(file("marked/scenario.yaml") +
                                      ":3: field 'cluster.nodes': must be between 1"));
}

TEST_F(Dataset, PackNeedsAnEntry) {
  fs::create_directories(dir_ / "empty");
  write_file_bytes(dir_ / "empty/README.md", "x");
  data_ = dir_ / "empty";
  EXPECT_EQ(pack_error(), data_.string() +
                              ": no entry.json in the folder: a dataset needs at "
                              "least one entry");
}

}  // namespace
}  // namespace ssgd::sim
