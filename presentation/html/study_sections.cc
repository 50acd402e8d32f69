#include "presentation/html/sections.h"

#include <fmt/format.h>

#include "presentation/html/html_text.h"
#include "presentation/html/quantity.h"

namespace ssgd::html {

void scale_section(Page& page, const ScaleReport& s, bool charts) {
  Table t = facts();
  if (!s.model.empty()) t.rows.push_back({"model", s.model});
  if (!s.input_path.empty()) t.rows.push_back({"input", s.input_path});
  if (!s.scenario_file.empty()) t.rows.push_back({"scenario", s.scenario_file});
  if (!s.scenario_sets.empty())
    t.rows.push_back({"--set", fmt::format("{}", fmt::join(s.scenario_sets, ", "))});
  if (!s.mode.empty()) t.rows.push_back({"scaling", s.mode});
  if (!s.policy.empty()) t.rows.push_back({"overlap policy", s.policy});
  t.rows.push_back({"one GPU's iteration time", format_ms(s.single_gpu.iteration_time_ns)});
  page.add(t.html());
  if (charts) {
    page.begin_grid();
    page.chart(scale_speedup_chart({{"", &s}}));
    page.chart(scale_efficiency_chart({{"", &s}}));
    page.end_grid();
  }
  Table rt{{"GPUs", "nodes x GPUs", "per-GPU batch", "global batch", "iteration time",
            "throughput (samples/s)", "speedup", "efficiency", "exposed comm"},
           {true, true, true, true, true, true, true, true, true},
           {}};
  std::vector<const ScaleRow*> rows;
  for (const ScaleRow& r : s.rows) rows.push_back(&r);
  for (const ScaleRow* r : rows) {
    rt.rows.push_back({std::to_string(r->gpus), fmt::format("{} x {}", r->nodes, r->gpus_per_node),
                       std::to_string(r->per_gpu_batch), std::to_string(r->global_batch),
                       format_ms(r->iteration_time_ns), number(r->throughput),
                       format_fixed(r->speedup, 2), percent(r->efficiency),
                       r->exposed_comm_ns ? format_ms(*r->exposed_comm_ns) : "-"});
  }
  page.add(rt.html());
  page.add(details("Settings (the report without its rows)", s.settings));
}

void optimize_section(Page& page, const OptimizeReport& o, bool chart) {
  const OptimizePoint& best = o.curve[o.best];
  Table t = facts();
  t.rows.push_back({"parameter", o.param});
  if (!o.input.empty()) t.rows.push_back({"input", o.input});
  if (!o.scenario_file.empty()) t.rows.push_back({"scenario", o.scenario_file});
  if (!o.scenario_sets.empty())
    t.rows.push_back({"--set", fmt::format("{}", fmt::join(o.scenario_sets, ", "))});
  t.rows.push_back({"values tried", std::to_string(o.curve.size())});
  const std::optional<Quantity> best_q = parse_quantity(best.value);
  t.rows.push_back({"best value", best_q && best_q->kind != QuantityKind::kNumber
                                      ? fmt::format("{} ({})", best.value, quantity_text(*best_q))
                                      : best.value});
  t.rows.push_back({"best iteration time", format_ms(best.iteration_time_ns)});
  if (o.as_given_ns) {
    t.rows.push_back({"iteration time as given", format_ms(*o.as_given_ns)});
    if (*o.as_given_ns > 0) {
      t.rows.push_back(
          {"best vs as given", format_change(static_cast<double>(best.iteration_time_ns) /
                                             static_cast<double>(*o.as_given_ns))});
    }
  }
  page.add(t.html());
  if (chart) {
    page.chart(optimize_chart({{"", &o}}));
    if (o.as_given_ns)
      page.paragraph("The dashed line is the iteration time of the scenario as given.", "note");
  }
  // Sizes, times and rates also in a unit that suits them ("1048576B": 1.0 MiB).
  std::vector<std::string> shown;
  bool quantities = false;
  for (const OptimizePoint& p : o.curve) {
    const std::optional<Quantity> q = parse_quantity(p.value);
    const bool unit = q && q->kind != QuantityKind::kNumber;
    shown.push_back(unit ? quantity_text(*q) : "");
    quantities = quantities || unit;
  }
  Table ct{
      {"#", "value", "iteration time", "throughput (samples/s)", "collectives", "exposed comm", ""},
      {true, false, true, true, true, true, false},
      {}};
  if (quantities) {
    ct.head.insert(ct.head.begin() + 2, "that is");
    ct.numeric.insert(ct.numeric.begin() + 2, true);
  }
  for (std::size_t i = 0; i < o.curve.size(); ++i) {
    const OptimizePoint& p = o.curve[i];
    std::vector<std::string> row{std::to_string(i + 1),
                                 p.value,
                                 format_ms(p.iteration_time_ns),
                                 number(p.throughput),
                                 p.collectives ? std::to_string(*p.collectives) : "-",
                                 p.exposed_comm_ns ? format_ms(*p.exposed_comm_ns) : "-",
                                 i == o.best ? "best" : ""};
    if (quantities) row.insert(row.begin() + 2, shown[i]);
    ct.rows.push_back(std::move(row));
  }
  page.add(ct.html(true));
}

}  // namespace ssgd::html
