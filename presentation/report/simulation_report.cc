#include "presentation/report/simulation_report.h"

#include <stdexcept>

#include "common/work_context.h"
#include "presentation/report/graph_report.h"
#include "presentation/report/report.h"

namespace ssgd::report {
namespace {

ReportContext report_context(const sim::Simulation& s) {
  const sim::ReplayInput& in = s.input->content;
  return {s.input->path,
          to_string(in.kind),
          in.profile.model,
          in.profile.provenance,
          s.scenario_file,
          s.scenario_sets,
          s.shared ? &*s.shared : nullptr};
}

GraphReportContext graph_context(const sim::Simulation& s) {
  return {s.input->path, s.input->content.execution_graph->provenance, s.scenario_file,
          s.scenario_sets};
}

}  // namespace

nlohmann::json simulation_report(const sim::Simulation& s) {
  const WorkContext context("making the report of", s.input->path);
  if (s.graph_replay) return graph_report_json(*s.graph_replay, s.scenario, graph_context(s));
  if (!s.result) throw std::logic_error("simulation_report: nothing was run");
  return report_json(*s.result, s.scenario, report_context(s));
}

void print_simulation_summary(const sim::Simulation& s, std::ostream& out) {
  if (s.graph_replay) {
    print_graph_summary(*s.graph_replay, s.scenario, graph_context(s), out);
  } else if (s.result) {
    print_summary(*s.result, s.scenario, report_context(s), out);
  }
}

}  // namespace ssgd::report
