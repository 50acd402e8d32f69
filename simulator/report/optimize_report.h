#pragma once
// The JSON report of `ssgd optimize` (docs/report.md, "The optimize
// report"): the curve it searched and the best setting.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/time.h"

namespace ssgd::sim {

// One setting of the searched key, replayed.
struct OptimizePoint {
  std::string value;  // as `--set KEY=value` takes it
  Duration iteration_time;
  double throughput_samples_per_s = 0;
  std::int64_t collectives_per_iteration = 0;
  Duration exposed_comm;
};

// What `ssgd optimize` searched and found.
struct OptimizeResult {
  std::string param;                 // the scenario key searched (--param)
  std::string input;                 // the INPUT argument, as given
  std::string scenario_file;         // --scenario; empty when none
  std::vector<OptimizePoint> curve;  // in the order tried
  std::size_t best = 0;              // index in curve: the shortest iteration, first of ties
  Duration as_given_iteration_time;  // the scenario without the key set
};

// {param, input, scenario_file, curve[]: {value, iteration_time_ns,
//  throughput_samples_per_s, collectives_per_iteration, exposed_comm_ns},
//  best: {value, iteration_time_ns}, as_given_iteration_time_ns}.
nlohmann::json optimize_report_json(const OptimizeResult& result);

}  // namespace ssgd::sim
