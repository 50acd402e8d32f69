#pragma once
// The JSON report of `ssgd optimize` (docs/report.md, "The optimize
// report"): the curve it searched and the best setting.

#include <nlohmann/json.hpp>

#include "simulator/api/optimize_result.h"

namespace ssgd::report {

// {param, input, scenario_file, curve[]: {value, iteration_time_ns,
//  throughput_samples_per_s, collectives_per_iteration, exposed_comm_ns,
//  memory_bytes, activations_known, fits}, best: {value, iteration_time_ns,
//  fits}, as_given_iteration_time_ns, gpu_memory_bytes, none_fit, gpu (as
//  simulate's report has it, for the scenario as given)}.
nlohmann::json optimize_report_json(const sim::OptimizeResult& result);

}  // namespace ssgd::report
