#include "presentation/report/scale_report.h"
#include "presentation/report/gpu_report.h"
#include "presentation/report/interference_report.h"
#include "presentation/report/memory_report.h"

namespace ssgd::report {

nlohmann::json scale_report_json(const sim::ScaleResult& r) {
  nlohmann::json j;
  j["input"] = {{"path", r.input}, {"model", r.model}};
  j["scenario_file"] = r.scenario_file;
  j["scenario_sets"] = r.scenario_sets;
  j["mode"] = to_string(r.mode);
  j["reference_batch"] = r.reference_batch;
  j["batch_given"] = r.batch_given;
  j["global_batch"] = r.global_batch ? nlohmann::json(*r.global_batch) : nlohmann::json(nullptr);
  j["compute_model"] = r.compute_model;
  j["policy"] = to_string(r.overlap);
  j["iterations"] = r.iterations;
  j["single_gpu"] = sim::scaling_row_json(r.single_gpu);
  j["gpu"] = gpu_change_json(r.gpu_change, r.kernel_classes);
  j["interference"] = interference_json(r.interference, nullptr);
  nlohmann::json rows = nlohmann::json::array();
  for (const sim::ScaleRow& row : r.rows) {
    nlohmann::json one = scaling_row_json(row.row);
    one["exposed_comm_ns"] = row.exposed_comm.ns();
    one["memory"] = memory_json(row.memory, row.gpu_memory);
    rows.push_back(std::move(one));
  }
  j["rows"] = rows;
  return j;
}

}  // namespace ssgd::report
