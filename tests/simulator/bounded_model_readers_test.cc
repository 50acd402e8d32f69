// Bounded readers (docs/reliability.md), the model side: scenario, sweep
// grid and calibration YAML, OSU and nccl-tests measurements (text and
// JSON), sweep results and `ssgd report`'s input, each fed a large
// degenerate input in a child whose heap is limited
// (tests/support/heap_limit.h). Each is refused, naming the file, with its
// peak heap under a bound per byte of input. Before the YAML bound, "- "
// lines or "[{},{},...]" as a scenario took yaml-cpp about 150 bytes of heap
// a byte (a 20 MB file: out of memory at 3 GB), and 20 MB of "[" took the
// JSON readers about 75 bytes a byte.
#include <gtest/gtest.h>

#include <string>

#include "simulator/calibration/bounded_yaml.h"
#include "simulator/input/scenario_inputs.h"
#include "traces/import/measurement_files.h"
#include "simulator/calibration/network_calibration.h"
#include "presentation/html/report_input.h"
#include "simulator/scenario/scenario.h"
#include "simulator/sweep/sweep_grid.h"
#include "tests/support/degenerate_inputs.h"
#include "tests/support/heap_limit.h"
#include "tests/support/test_files.h"

namespace ssgd::sim {
namespace {

using ssgd::testing::kMiB;
using ssgd::testing::repeated;
using ssgd::testing::TempDirTest;

class BoundedModelReaders : public TempDirTest {
 protected:
  // Refused naming the file, with `expect` in the message, the peak under
  // `per_byte` bytes a byte (tests/support/heap_limit.h).
  void expect_refused(const std::string& name, const std::string& bytes, double per_byte,
                      const std::string& expect,
                      const std::function<void(const std::filesystem::path&)>& read) {
    ssgd::testing::expect_refused_in_bounded_memory(dir_ / name, bytes, per_byte, expect, read);
  }

  // The YAML shapes every YAML reader meets: a run of "- " items, a flow
  // sequence of empty mappings, deep nesting, many keys.
  void degenerate_yaml(const std::function<void(const std::filesystem::path&)>& read) {
    const std::size_t size = 16 * kMiB;
    // The text is read into memory, checked for UTF-8 and control
    // characters and scanned: a few bytes a byte, not yaml-cpp's 150.
    expect_refused("items.yaml", repeated("", "- \n", size), 6, "more than 100000 YAML values",
                   read);
    expect_refused("flow.yaml", repeated("[", "{},", size, "{}]"), 6,
                   "more than 100000 YAML values", read);
    expect_refused("deep.yaml", std::string(size, '['), 6, "nested deeper than 64 levels", read);
    std::string keys;
    for (int i = 0; keys.size() < size; ++i) {
      keys += 'k';  // not "k" + std::to_string(i): GCC 12's false -Wrestrict
      keys += std::to_string(i);
      keys += ": 1\n";
    }
    expect_refused("keys.yaml", keys, 6, "keys.yaml:50000: more than 100000 YAML values", read);
  }
};

TEST_F(BoundedModelReaders, TheScenarioYamlIsBoundedBeforeItIsBuilt) {
  degenerate_yaml([](const std::filesystem::path& p) { load_scenario(p, {}); });
}

TEST_F(BoundedModelReaders, TheSweepGridYamlIsBoundedBeforeItIsBuilt) {
  degenerate_yaml([](const std::filesystem::path& p) { read_sweep_grid(p); });
}

TEST_F(BoundedModelReaders, TheCalibrationYamlIsBoundedBeforeItIsBuilt) {
  degenerate_yaml([](const std::filesystem::path& p) { read_network_calibration(p); });
}

TEST_F(BoundedModelReaders, MeasurementsRefuseNewlinesCommasEmptyObjectsAndDeepNesting) {
  const auto as = [](trace::MeasurementFormat format) {
    return [format](const std::filesystem::path& p) {
      trace::MeasurementOptions options;
      options.format = format;
      trace::read_measurements(p, options);
    };
  };
  for (const auto format : {trace::MeasurementFormat::kOsu, trace::MeasurementFormat::kNcclTests}) {
    SCOPED_TRACE(to_string(format));
    expect_refused("newlines.log", std::string(32 * kMiB, '\n'), 4, "no usable measurements",
                   as(format));
    expect_refused("commas.log", std::string(32 * kMiB, ','), 4, "commas.log", as(format));
  }
  const auto json = as(trace::MeasurementFormat::kNcclJson);
  // The text is read whole (about 3 bytes a byte), then refused before
  // nlohmann builds anything.
  expect_refused("objs.json", repeated("[", "{},", 32 * kMiB, "{}]"), 4, "expected a JSON object",
                 json);
  expect_refused("deep.json", std::string(32 * kMiB, '['), 4, "expected a JSON object", json);
  expect_refused("deepobj.json", repeated("{\"a\":", "[", 32 * kMiB), 4,
                 "nested deeper than 64 levels (at byte 68)", json);
}

TEST_F(BoundedModelReaders, TheReportInputRefusesDeepNestingAndEmptyLines) {
  const auto read = [](const std::filesystem::path& p) { html::read_report_input(p.string()); };
  expect_refused("deep.json", std::string(32 * kMiB, '['), 4, "nested deeper than 64", read);
  expect_refused("newlines.json", std::string(32 * kMiB, '\n'), 4, "empty", read);
  expect_refused("lines.jsonl", repeated("", "{}\n", 32 * kMiB), 4, "lines.jsonl:2", read);
  // An array of empty objects is parsed whole (nlohmann's values, about 25
  // bytes a byte) before it is found to be no report.
  expect_refused("objs.json", repeated("[", "{},", 8 * kMiB, "{}]"), 48, "got an array", read);
}

}  // namespace
}  // namespace ssgd::sim
