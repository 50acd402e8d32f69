#pragma once
// The results of a sweep: one record per point, as a JSON line
//
//   {"ssgd_sweep_version":1,"point":3,"keys":{"cluster.nodes":4,...},
//    "figures":{"iteration_time_ns":...,"breakdown.compute_ns":...,...}}
//
// or, for a point whose scenario or replay failed, "error" (the located
// message) in place of "figures". `figures` holds every number, flag and
// name of the point's `simulate --report` (docs/report.md) but the scenario
// and the input, flattened to dotted names; lists are left out. The results
// file is read back to resume a sweep, and written once more at the end in
// point order, with a CSV of the same records.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "simulator/scenario/scenario.h"
#include "simulator/sweep/sweep_grid.h"

namespace ssgd::sim {

inline constexpr int kSweepVersion = 1;

// The scenario of `point`: the grid's scenario file, its `set:`, the point's
// keys. Throws InputError located in the grid file at the key at fault.
Scenario load_point_scenario(const SweepGrid& grid, const SweepPoint& point);

// An error about a point's key (given as --set by load_point_scenario),
// located in the grid file at that key, with the point.
InputError locate_point_error(const SweepGrid& grid, const SweepPoint& point,
                              const InputError& error);

// Checks every value of every axis, each with the first value of the other
// axes, so that a bad key or value fails before any point runs. Throws
// InputError located in the grid file at the key, naming no point.
void check_axis_values(const SweepGrid& grid);

// A swept value as JSON: a whole number, a number, true/false, or text.
nlohmann::ordered_json typed_value(const std::string& text);

nlohmann::ordered_json point_keys(const SweepPoint& point);
nlohmann::ordered_json point_record(const SweepPoint& point, const nlohmann::json& report);
nlohmann::ordered_json error_record(const SweepPoint& point, const std::string& message);

// `record` as one JSON line. A byte that is not UTF-8 (in an error message
// that quotes its input) is written as U+FFFD rather than failing the point.
std::string record_line(const nlohmann::ordered_json& record);

// The records of an earlier run of the same grid in `path`, by point, as
// their JSON lines. A last line cut short (an interrupted run) is dropped,
// with a warning. Throws InputError naming the file and line for a record
// that is not one, or that does not belong to `grid` (another grid wrote
// the file: its point's keys differ).
struct SweepResults {
  std::map<std::int64_t, std::string> lines;
  std::vector<std::string> warnings;
};
SweepResults read_sweep_results(const std::filesystem::path& path, const SweepGrid& grid);

// The results in point order, as JSON lines and as CSV (a header, then a row
// per point: point, every swept key, every figure any point has in the order
// first seen, error).
std::string sweep_jsonl(const SweepResults& results);
std::string sweep_csv(const SweepGrid& grid, const SweepResults& results);

}  // namespace ssgd::sim
