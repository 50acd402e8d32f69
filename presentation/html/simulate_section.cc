#include "presentation/html/sections.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/units.h"
#include "presentation/html/charts.h"
#include "presentation/html/html_text.h"

namespace ssgd::html {
namespace {

// The jobs of a scenario with `jobs:`: each alone on its nodes, and with
// every job running on the one platform.
void shared_fabric_part(Page& page, const SharedFabric& f) {
  page.heading(3, "Shared fabric");
  page.paragraph(
      fmt::format("The scenario runs {} job{} on one platform{}: each job's time alone on its "
                  "nodes, with every job running, and the slowdown (shared / alone). The figures "
                  "above are the scenario's own job (main) alone.",
                  f.jobs.size(), f.jobs.size() == 1 ? "" : "s",
                  f.platform_nodes ? fmt::format(" of {} nodes", *f.platform_nodes) : ""),
      "note");
  if (f.jobs.empty()) return;
  page.chart(shared_fabric_chart(f));
  Table t{{"job", "kind", "nodes", "workers", "measure", "detail", "alone", "shared", "slowdown",
           "count"},
          {false, false, true, true, false, false, true, true, true, true},
          {}};
  for (const SharedJob& j : f.jobs) {
    const std::string nodes = j.nodes <= 1
                                  ? std::to_string(j.first_node)
                                  : fmt::format("{}-{}", j.first_node,
                                                static_cast<std::uint64_t>(j.first_node) +
                                                    static_cast<std::uint64_t>(j.nodes) - 1);
    t.rows.push_back({j.name, j.kind, nodes, std::to_string(j.workers), j.measure, j.detail,
                      format_ms(j.alone_ns), format_ms(j.shared_ns),
                      format_fixed(j.slowdown, 2) + "x", std::to_string(j.count)});
  }
  page.add(t.html());
  page.paragraph(
      "measure: a training job's steady-state iteration time, or a traffic job's mean time of one "
      "collective; count: its iterations, or the collectives it completed in the shared run.",
      "note");
}

}  // namespace

void simulate_section(Page& page, const std::string& label, const SimulateRun& r) {
  Table t = facts();
  if (!r.model.empty()) t.rows.push_back({"model", r.model});
  if (!r.input_path.empty()) t.rows.push_back({"input", r.input_path});
  t.rows.push_back({"workers", std::to_string(r.workers)});
  if (!r.policy.empty()) t.rows.push_back({"overlap policy", r.policy});
  t.rows.push_back({"iteration time (steady state)", format_ms(r.iteration_time_ns)});
  if (r.shared_fabric && !r.shared_fabric->jobs.empty()) {
    const SharedJob& main = r.shared_fabric->jobs.front();
    t.rows.push_back({"with the other jobs (shared fabric)",
                      fmt::format("{} ({}x; {})", format_ms(main.shared_ns),
                                  format_fixed(main.slowdown, 2), main.name)});
  }
  t.rows.push_back({"throughput", number(r.throughput) + " samples/s"});
  if (r.single_worker_ns)
    t.rows.push_back({"one worker's iteration time", format_ms(*r.single_worker_ns)});
  t.rows.push_back({"speedup", fmt_opt_ratio(r.speedup, 2)});
  t.rows.push_back({"scaling efficiency", r.efficiency ? percent(*r.efficiency) : "-"});
  if (!r.comm_model.empty()) t.rows.push_back({"communication", r.comm_model});
  page.add(t.html());
  if (r.shared_fabric) shared_fabric_part(page, *r.shared_fabric);

  page.heading(3, "Time breakdown");
  page.chart(breakdown_chart({{label, &r}}));
  const Breakdown& b = r.breakdown;
  Table bt{{"compute", "exposed communication", "I/O", "idle"}, {true, true, true, true}, {}};
  bt.rows.push_back({format_ms(b.compute_ns), format_ms(b.exposed_comm_ns), format_ms(b.io_ns),
                     format_ms(b.idle_ns)});
  page.add(bt.html());
  if (!r.iteration_times_ns.empty()) page.chart(iteration_times_chart(r));

  if (r.critical_path) {
    const CriticalPath& cp = *r.critical_path;
    const std::int64_t iterations = r.iterations.value_or(
        static_cast<std::int64_t>(std::max<std::size_t>(1, r.iteration_times_ns.size())));
    page.heading(3, "Critical path");
    page.paragraph(
        fmt::format("The longest chain of dependent tasks through the whole run ({} iteration{}): "
                    "{} tasks, {}. The report holds no per-task times, so one iteration is "
                    "drawn as the path's time by task kind divided by the iterations, "
                    "in the order the tasks run.",
                    iterations, iterations == 1 ? "" : "s", cp.tasks, format_ms(cp.length_ns)),
        "note");
    page.chart(critical_path_chart(r, iterations));
    Table ct{{"task kind", "time on the path", "per iteration"}, {false, true, true}, {}};
    for (const auto& [kind, ns] : cp.time_by_kind_ns) {
      ct.rows.push_back(
          {kind, format_ms(ns), format_ms(ns / std::max<std::int64_t>(1, iterations))});
    }
    ct.rows.push_back({"gaps", format_ms(cp.gaps_ns),
                       format_ms(cp.gaps_ns / std::max<std::int64_t>(1, iterations))});
    ct.rows.push_back({"length", format_ms(cp.length_ns),
                       format_ms(cp.length_ns / std::max<std::int64_t>(1, iterations))});
    page.add(ct.html());
  }

  page.heading(3, "Collectives");
  std::string summary;
  if (r.collectives_per_iteration)
    summary += fmt::format("{} collectives per iteration", *r.collectives_per_iteration);
  if (r.comm_per_iteration_ns) {
    summary += fmt::format("{}{} of communication per iteration, hidden or not",
                           summary.empty() ? "" : ", ", format_ms(*r.comm_per_iteration_ns));
  }
  if (!r.network_model.empty())
    summary += fmt::format("{}{} network model", summary.empty() ? "" : "; ", r.network_model);
  if (!summary.empty()) page.paragraph(summary + ".");
  if (r.collectives.empty()) {
    page.paragraph("No collectives in the last iteration.", "note");
  } else {
    page.chart(collectives_chart(r));
    Table ct{{"#", "group", "bytes", "algorithm", "time", "algbw", "busbw", "replayed"},
             {true, true, true, false, true, true, true, false},
             {}};
    for (std::size_t i = 0; i < r.collectives.size(); ++i) {
      const CollectiveRow& c = r.collectives[i];
      ct.rows.push_back({std::to_string(i), std::to_string(c.group),
                         format_size(static_cast<double>(c.bytes)), c.algorithm,
                         format_ms(c.time_ns), format_rate(c.algbw), format_rate(c.busbw),
                         c.replayed ? "yes" : "no"});
    }
    page.add(ct.html(true));
  }

  if (!r.link_kinds.empty() || !r.busiest_links.empty()) {
    page.heading(3, "Link utilisation");
    if (!r.link_kinds.empty()) page.chart(link_kinds_chart(r));
    if (!r.busiest_links.empty()) {
      Table lt{{"busiest links", "kind", "capacity", "bytes", "utilisation"},
               {false, false, true, true, true},
               {}};
      for (const LinkRow& l : r.busiest_links) {
        lt.rows.push_back({l.link, l.kind, format_rate(l.capacity_bytes_per_s),
                           format_size(l.bytes), percent(l.utilisation)});
      }
      page.add(lt.html(true));
    }
  }
  if (!r.scenario.is_null()) page.add(details("Scenario (as replayed)", r.scenario));
}

}  // namespace ssgd::html
