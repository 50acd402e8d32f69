#include "presentation/html/sections.h"

#include <fmt/format.h>

#include "presentation/html/html_text.h"
#include "presentation/html/sweep_charts.h"

namespace ssgd::html {
namespace {

std::string key_text(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

void sweep_section(Page& page, const SweepReport& s) {
  const SweepLayout layout = sweep_layout(s);
  std::string what = fmt::format("{} point{}", s.points.size(), s.points.size() == 1 ? "" : "s");
  if (layout.varying.empty()) {
    what += "; no key varies";
  } else {
    what += "; the keys that vary: ";
    for (std::size_t i = 0; i < layout.varying.size(); ++i)
      what += (i ? ", " : "") + s.keys[layout.varying[i]];
    what += fmt::format(". Plotted against {}", s.keys[*layout.x]);
    if (layout.colour) what += fmt::format(", coloured by {}", s.keys[*layout.colour]);
    if (!layout.split.empty()) {
      std::string split;
      for (std::size_t i = 0; i < layout.split.size(); ++i)
        split += (i ? ", " : "") + s.keys[layout.split[i]];
      what +=
          layout.panels.empty()
              ? fmt::format(
                    ", one line per combination of the values of {} (more than {} "
                    "combinations to chart apart; the tooltip names each point's keys)",
                    split, kMaxSweepPanels)
              : fmt::format(", a chart per value of {} ({} charts per figure, on the same axes)",
                            split, layout.panels.size());
    }
  }
  std::size_t failed = 0;
  for (const SweepPoint& p : s.points) failed += p.error ? 1 : 0;
  if (failed > 0) {
    what +=
        fmt::format(". {} point{} failed (the table gives the error{}) and {} not plotted", failed,
                    failed == 1 ? "" : "s", failed == 1 ? "" : "s", failed == 1 ? "is" : "are");
  }
  page.paragraph(what + ".");
  for (const bool throughput : {false, true}) {
    std::vector<Json> charts = sweep_charts(s, layout, throughput);
    if (charts.size() > 1) page.begin_grid();
    for (Json& c : charts) page.chart(std::move(c));
    if (charts.size() > 1) page.end_grid();
  }
  Table t;
  t.head.push_back("point");
  t.numeric.push_back(true);
  for (const std::string& k : s.keys) {
    t.head.push_back(k);
    t.numeric.push_back(false);
  }
  for (const char* h :
       {"workers", "iteration time", "throughput (samples/s)", "speedup", "efficiency", "compute",
        "exposed comm", "I/O", "idle", "comm per iteration", "critical path"}) {
    t.head.push_back(h);
    t.numeric.push_back(true);
  }
  if (failed > 0) {
    t.head.push_back("error");
    t.numeric.push_back(false);
  }
  for (const SweepPoint& p : s.points) {
    std::vector<std::string> row{std::to_string(p.point)};
    for (const std::string& k : s.keys) row.push_back(key_text(p.keys.at(k)));
    if (p.error) {
      row.resize(row.size() + 11, "-");
      row.push_back(*p.error);
      t.rows.push_back(std::move(row));
      continue;
    }
    for (std::string cell :
         {std::to_string(p.workers), format_ms(p.iteration_time_ns), number(p.throughput),
          fmt_opt_ratio(p.speedup, 2), p.efficiency ? percent(*p.efficiency) : "-",
          format_ms(p.breakdown.compute_ns), format_ms(p.breakdown.exposed_comm_ns),
          format_ms(p.breakdown.io_ns), format_ms(p.breakdown.idle_ns),
          p.comm_per_iteration_ns ? format_ms(*p.comm_per_iteration_ns) : "-",
          p.critical_path_ns ? format_ms(*p.critical_path_ns) : "-"}) {
      row.push_back(std::move(cell));
    }
    if (failed > 0) row.emplace_back();
    t.rows.push_back(std::move(row));
  }
  page.add(t.html(true));
}

}  // namespace ssgd::html
