// Fuzz target: sweep grids and sweep results (simulator/sweep).
//
// Input: the grid's YAML; from the first line that is exactly "#--results"
// (a YAML comment) on, the rest is a results file (JSON lines) to resume from.
//
// Promise: read_sweep_grid returns a grid of 1 to kMaxSweepPoints points whose
// axes each have values, one per key, whose keys are unique, whose keys and
// values are valid UTF-8, and whose first and last points can be made; or
// throws an InputError naming the grid.
// read_sweep_results returns records that belong to the grid, which written
// back (sweep_jsonl) read back the same; or throws an InputError naming the
// results file. sweep_csv has a row per record.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "common/utf8.h"
#include "fuzz/fuzz_support.h"
#include "simulator/sweep/sweep_grid.h"
#include "simulator/sweep/sweep_results.h"

using ssgd::fuzz::finding;

namespace {
constexpr std::string_view kResultsLine = "#--results\n";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ssgd::fuzz::clear_scratch();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto [yaml, results_text] = ssgd::fuzz::split_at_marker_line(text, kResultsLine);
  const auto grid_path = ssgd::fuzz::write_scratch("grid.yaml", yaml);

  ssgd::sim::SweepGrid grid;
  if (!ssgd::fuzz::accepts("read_sweep_grid", {grid_path.string()},
                           [&] { grid = ssgd::sim::read_sweep_grid(grid_path); })) {
    return 0;
  }
  const std::int64_t points = grid.point_count();
  if (grid.axes.empty() || points < 1 || points > ssgd::sim::kMaxSweepPoints) {
    finding("read_sweep_grid accepted a grid of " + std::to_string(points) + " points");
  }
  std::set<std::string> keys;
  for (const auto& axis : grid.axes) {
    if (axis.values.empty()) finding("read_sweep_grid accepted an axis without values");
    for (const auto& values : axis.values) {
      if (values.size() != axis.keys.size()) finding("an axis step without a value per key");
    }
    for (const auto& key : axis.keys) {
      if (!keys.insert(key).second) finding("read_sweep_grid accepted key " + key + " twice");
      if (!ssgd::is_valid_utf8(key)) finding("read_sweep_grid accepted a key that is not UTF-8");
    }
    for (const auto& values : axis.values) {
      for (const auto& value : values) {
        if (!ssgd::is_valid_utf8(value)) finding("read_sweep_grid accepted a value not UTF-8");
      }
    }
  }
  for (const std::int64_t index : {std::int64_t{0}, points - 1}) {
    const auto point = ssgd::sim::sweep_point(grid, index);
    if (point.keys.size() != keys.size()) finding("a point without a value for every key");
    if (ssgd::sim::point_sets(grid, point).size() != grid.sets.size() + keys.size()) {
      finding("point_sets lost a key");
    }
  }
  if (!results_text) return 0;

  const auto results_path = ssgd::fuzz::write_scratch("results.jsonl", *results_text);
  ssgd::sim::SweepResults results;
  if (!ssgd::fuzz::accepts("read_sweep_results", {results_path.string()}, [&] {
        results = ssgd::sim::read_sweep_results(results_path, grid);
      })) {
    return 0;
  }
  for (const auto& [index, line] : results.lines) {
    if (index < 0 || index >= points) finding("read_sweep_results kept point " + std::to_string(index));
  }
  const auto again_path = ssgd::fuzz::write_scratch("again.jsonl", ssgd::sim::sweep_jsonl(results));
  ssgd::sim::SweepResults again;
  try {
    again = ssgd::sim::read_sweep_results(again_path, grid);
  } catch (const std::exception& e) {
    ssgd::fuzz::step_failed("reading back sweep_jsonl", &e);
  }
  if (again.lines != results.lines || !again.warnings.empty()) {
    finding("sweep_jsonl did not read back the same records");
  }
  const std::string csv = ssgd::sim::sweep_csv(grid, results);
  std::size_t rows = 0;
  for (const char c : csv) rows += c == '\n' ? 1 : 0;
  // Quoted text may hold line breaks, so a record is at least one line.
  if (rows < results.lines.size() + 1) finding("sweep_csv has fewer lines than records");
  return 0;
}
