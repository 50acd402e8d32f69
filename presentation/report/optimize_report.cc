#include "presentation/report/optimize_report.h"

#include "presentation/report/gpu_report.h"
#include "presentation/report/interference_report.h"

namespace ssgd::report {

nlohmann::json optimize_report_json(const sim::OptimizeResult& r) {
  nlohmann::json j;
  j["param"] = r.param;
  j["input"] = r.input;
  j["scenario_file"] = r.scenario_file;
  j["scenario_sets"] = r.scenario_sets;
  nlohmann::json points = nlohmann::json::array();
  for (const sim::OptimizePoint& p : r.curve) {
    points.push_back({{"value", p.value},
                      {"iteration_time_ns", p.iteration_time.ns()},
                      {"throughput_samples_per_s", p.throughput_samples_per_s},
                      {"collectives_per_iteration", p.collectives_per_iteration},
                      {"exposed_comm_ns", p.exposed_comm.ns()},
                      {"memory_bytes", p.memory_bytes},
                      {"activations_known", p.activations_known},
                      {"fits", p.fits ? nlohmann::json(*p.fits) : nlohmann::json(nullptr)}});
  }
  j["curve"] = points;
  const sim::OptimizePoint& best = r.curve.at(r.best);
  j["best"] = {{"value", best.value},
               {"iteration_time_ns", best.iteration_time.ns()},
               {"fits", best.fits ? nlohmann::json(*best.fits) : nlohmann::json(nullptr)}};
  j["as_given_iteration_time_ns"] = r.as_given_iteration_time.ns();
  j["gpu"] = gpu_change_json(r.gpu_change, r.kernel_classes);
  j["interference"] = interference_json(r.interference, nullptr);
  j["gpu_memory_bytes"] = r.gpu_memory > 0 ? nlohmann::json(r.gpu_memory) : nlohmann::json(nullptr);
  j["none_fit"] = r.none_fit;
  return j;
}

}  // namespace ssgd::report
