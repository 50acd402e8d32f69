#pragma once
// The JSON report of `ssgd diff` (docs/report.md, "The diff report"): one
// iteration of two traces compared task by task (walk/iteration_diff.h).

#include <string>

#include <nlohmann/json.hpp>

#include "walk/iteration_diff.h"

namespace ssgd::report {

// {measured: {path, iteration, chosen, iteration_time_ns}, simulated: the
//  same, iteration_time_diff_ns, by, matched[], measured_only[],
//  simulated_only[]}; each row {rank, kind, task, measured, simulated (each
//  {start_ns, end_ns, busy_ns, bytes} or null), and for matched rows
//  start_diff_ns, end_diff_ns, duration_diff_ns}. The paths as given.
nlohmann::json diff_report_json(const std::string& measured_path, const std::string& simulated_path,
                                const walk::IterationDiff& diff);

}  // namespace ssgd::report
