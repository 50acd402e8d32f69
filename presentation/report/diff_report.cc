#include "presentation/report/diff_report.h"

#include <optional>

namespace ssgd::report {
namespace {

nlohmann::json task_json(const std::optional<walk::IterationTask>& t) {
  if (!t) return nullptr;
  return {{"start_ns", t->start_ns},
          {"end_ns", t->end_ns},
          {"busy_ns", t->busy_ns},
          {"bytes", t->bytes}};
}

nlohmann::json row_json(const walk::DiffRow& row) {
  const auto& t = row.task();
  nlohmann::json j{{"rank", t.rank},
                   {"kind", dag::to_string(t.kind)},
                   {"task", walk::task_label(t)},
                   {"measured", task_json(row.measured)},
                   {"simulated", task_json(row.simulated)}};
  if (row.measured && row.simulated) {
    j["start_diff_ns"] = row.start_diff_ns;
    j["end_diff_ns"] = row.end_diff_ns;
    j["duration_diff_ns"] = row.duration_diff_ns;
  }
  return j;
}

nlohmann::json side_json(const std::string& path, const walk::IterationSpan& s,
                         const std::string& how) {
  return nlohmann::json{{"path", path},
                        {"iteration", s.number},
                        {"chosen", how},
                        {"iteration_time_ns", s.duration_ns()}};
}

}  // namespace

nlohmann::json diff_report_json(const std::string& measured_path, const std::string& simulated_path,
                                const walk::IterationDiff& d) {
  nlohmann::json j{{"measured", side_json(measured_path, d.measured, d.measured_choice)},
                   {"simulated", side_json(simulated_path, d.simulated, d.simulated_choice)},
                   {"iteration_time_diff_ns", d.simulated.duration_ns() - d.measured.duration_ns()},
                   {"by", walk::to_string(d.by)}};
  for (const char* key : {"matched", "measured_only", "simulated_only"}) {
    j[key] = nlohmann::json::array();
  }
  for (const auto& r : d.matched) j["matched"].push_back(row_json(r));
  for (const auto& r : d.measured_only) j["measured_only"].push_back(row_json(r));
  for (const auto& r : d.simulated_only) j["simulated_only"].push_back(row_json(r));
  return j;
}

}  // namespace ssgd::report
