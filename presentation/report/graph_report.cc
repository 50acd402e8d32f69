#include "presentation/report/graph_report.h"

#include <ostream>

#include <fmt/format.h>

#include "common/units.h"
#include "presentation/report/link_report.h"
#include "presentation/report/summary_rows.h"

namespace ssgd::report {
void print_graph_summary(const sim::GraphReplayResult& g, const sim::Scenario& s,
                         const GraphReportContext& ctx, std::ostream& out) {
  const sim::ReplayResult& r = g.run;
  out << fmt::format("ssgd simulate: execution graph {}\n", ctx.input);
  if (!ctx.provenance.empty()) out << fmt::format("  input: {}\n", ctx.provenance);
  out << fmt::format("  cluster: {} node(s) x {} GPU(s) = {} ranks; the graph's own tasks, once\n",
                     s.nodes, s.gpus_per_node, r.workers);
  out << fmt::format("  network: {}\n\n", r.network);
  const Duration it = r.iteration_time;
  auto row = [&out](std::string_view name, std::string_view value, std::string_view note) {
    summary_row(out, name, value, note);
  };
  row("graph time", format_duration(g.graph_time), "from time zero to the end of the last task");
  if (g.iterations_known) {
    row("iteration time", format_duration(it),
        r.iterations > 1 ? fmt::format("steady state: mean over iterations 2..{} of the graph's {}",
                                       r.iterations, r.iterations)
                         : std::string("the graph's only iteration"));
  }
  row("recorded span", format_duration(g.recorded_span),
      "as the graph's nodes were timed (first start to last end)");
  row("  compute", format_duration(r.breakdown.compute),
      fmt::format("{:5.1f}%   (mean over ranks, per {})", percent_of(r.breakdown.compute, it),
                  g.iterations_known ? "steady iteration" : "graph"));
  row("  exposed comm", format_duration(r.breakdown.exposed_comm),
      fmt::format("{:5.1f}%   (comm total {} in {} operations)",
                  percent_of(r.breakdown.exposed_comm, it), format_duration(r.comm_per_iteration),
                  r.collectives_per_iteration));
  row("  memory", format_duration(r.breakdown.io),
      fmt::format("{:5.1f}%", percent_of(r.breakdown.io, it)));
  row("  idle", format_duration(r.breakdown.idle),
      fmt::format("{:5.1f}%", percent_of(r.breakdown.idle, it)));
  print_link_utilisation(r, out);
  out << fmt::format(
      "\n  {} nodes -> {} tasks, {} edges; {} collectives, {} point-to-point: {} "
      "timed by the network model, {} at their recorded times\n",
      g.nodes, r.tasks, r.edges, g.collectives, g.point_to_point, g.comm_modelled, g.comm_replayed);
  out << fmt::format("  simulated {} events in {:.3f} s (graph built in {:.3f} s)\n", r.events,
                     r.simulate_seconds, r.build_seconds);
}

nlohmann::json graph_report_json(const sim::GraphReplayResult& g, const sim::Scenario& s,
                                 const GraphReportContext& ctx) {
  const sim::ReplayResult& r = g.run;
  nlohmann::json j;
  j["ssgd_report_version"] = 1;
  j["kind"] = "graph";
  j["input"] = {{"path", ctx.input}, {"kind", "graph-trace"}, {"provenance", ctx.provenance}};
  j["scenario"] = {{"file", ctx.scenario_file},
                   {"sets", ctx.scenario_sets},
                   {"cluster", {{"nodes", s.nodes}, {"gpus_per_node", s.gpus_per_node}}},
                   {"network", {{"model", s.network_model}, {"algorithm", to_string(s.algorithm)}}},
                   {"platform", {{"preset", s.platform.preset}}}};
  j["ranks"] = r.workers;
  j["graph_time_ns"] = g.graph_time.ns();
  if (g.iterations_known) {
    j["iteration_time_ns"] = r.iteration_time.ns();
    nlohmann::json iters = nlohmann::json::array();
    for (const auto d : r.iteration_times) iters.push_back(d.ns());
    j["iteration_times_ns"] = iters;
  }
  j["recorded_span_ns"] = g.recorded_span.ns();
  j["breakdown_ns"] = {{"compute", r.breakdown.compute.ns()},
                       {"exposed_comm", r.breakdown.exposed_comm.ns()},
                       {"memory", r.breakdown.io.ns()},
                       {"idle", r.breakdown.idle.ns()}};
  j["comm"] = {{"total_ns", r.comm_per_iteration.ns()},
               {"collectives", g.collectives},
               {"point_to_point", g.point_to_point},
               {"modelled", g.comm_modelled},
               {"replayed", g.comm_replayed}};
  j["network"] = r.network;
  j["links"] = links_json(r);
  j["nodes"] = g.nodes;
  j["tasks"] = r.tasks;
  j["edges"] = r.edges;
  j["events"] = r.events;
  j["critical_path"] = {{"tasks", r.critical_path.task_count},
                        {"length_ns", r.critical_path.length.ns()}};
  return j;
}

}  // namespace ssgd::report
