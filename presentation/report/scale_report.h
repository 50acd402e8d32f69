#pragma once
// The JSON report of `ssgd scale` (docs/report.md, "The scale report"): the
// sweep's settings, its one-GPU baseline and one row per GPU count.

#include <nlohmann/json.hpp>

#include "simulator/api/scale_result.h"

namespace ssgd::report {

// {input: {path, model}, scenario_file, mode, reference_batch, batch_given,
//  global_batch (null when weak), compute_model, policy, iterations,
//  single_gpu, rows[]: scaling_row_json + exposed_comm_ns + memory (as
//  simulate's report has it)}.
nlohmann::json scale_report_json(const sim::ScaleResult& result);

}  // namespace ssgd::report
