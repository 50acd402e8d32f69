#pragma once
// A sweep grid (`ssgd sweep GRID.yaml`, docs/sweep.md): the input to replay,
// a base scenario, keys fixed for every point, and the swept keys, each point
// a full replay:
//
//   input: ../traces/datasets/resnet50_v100.csv   # relative to this file
//   scenario: ../scenarios/v100_4x4_10gbe.yaml     # optional
//   set:                                           # optional, every point
//     iterations: 5
//   grid:                                          # the cross product
//     cluster.nodes: [1, 2, 4, 8]
//     network.inter_node.preset: [10gbe, 100gbe]
//     perturb.compute_time_factor: {from: 0.5, to: 1.5, step: 0.25}
//   zip:                                           # optional: advanced together
//     - {workload.batch_per_gpu: [16, 32], policy.overlap: [wfbp, ddp]}
//
// Points are numbered from 0 with the first axis varying slowest: the axes of
// `grid` in the order written, then each group of `zip` as one axis.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ssgd::sim {

// At most this many points in one grid.
inline constexpr std::int64_t kMaxSweepPoints = 10000000;

// One axis: a key of `grid`, or a group of `zip` (several keys, one value
// of each per step).
struct SweepAxis {
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> values;  // values[step][key], text as --set takes it
};

struct SweepGrid {
  std::string file;                                // as given
  std::filesystem::path input;                     // relative to the grid's folder, resolved
  std::optional<std::filesystem::path> scenario;   // likewise
  std::vector<std::string> sets;                   // `set:`, as "key=value", in order
  std::vector<SweepAxis> axes;                     // first varies slowest
  std::map<std::string, std::int64_t, std::less<>> lines;  // where each key was given
  std::optional<std::int64_t> input_line;          // where input: and scenario: were given
  std::optional<std::int64_t> scenario_line;

  [[nodiscard]] std::int64_t point_count() const;
  [[nodiscard]] std::vector<std::string> swept_keys() const;  // in axis order
};

// One point: its number and the value of each swept key, in axis order.
struct SweepPoint {
  std::int64_t index = 0;
  std::vector<std::pair<std::string, std::string>> keys;
};

// Reads and checks GRID.yaml. Throws InputError naming the file, the line and
// the key. The keys' values are checked against the scenario schema only when
// the points are loaded (load_point_scenario).
SweepGrid read_sweep_grid(const std::filesystem::path& path);

// Checks that the grid's input and scenario files can be read, before
// anything reads them: a path that does not exist (or is not a regular
// file) is an InputError at the grid's line and key, e.g. "grid.yaml:2:
// field 'scenario': cannot read 'base.yaml': No such file or directory".
void check_grid_files(const SweepGrid& grid);

SweepPoint sweep_point(const SweepGrid& grid, std::int64_t index);

// Every --set of a point: the grid's `set:`, then the point's keys.
std::vector<std::string> point_sets(const SweepGrid& grid, const SweepPoint& point);

}  // namespace ssgd::sim
