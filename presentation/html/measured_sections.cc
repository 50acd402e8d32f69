#include <fmt/format.h>

#include <algorithm>

#include "presentation/html/html_text.h"
#include "presentation/html/measured_charts.h"
#include "presentation/html/sections.h"

namespace ssgd::html {
namespace {

std::string opt_percent(const std::optional<double>& p) {
  return p ? format_fixed(*p, 1) + "%" : "-";
}

// "4.000 ms" from nanoseconds held as a double (sums of many tasks).
std::string ms_text(double ns) { return format_fixed(ns / 1e6, 3) + " ms"; }

std::string change(double measured, double simulated) {
  return measured > 0 ? signed_percent((simulated - measured) / measured * 100, 1) : "-";
}

// The cases whose entry measured its memory: the replay's per-GPU estimate
// beside the measured median, as `ssgd dataset verify` prints them.
void memory_rows(Page& page, const DatasetVerifyReport& r) {
  Table m{{"case", "kind", "memory estimate", "measured median", "error", "spread", "activations"},
          {false, false, true, true, true, true, false},
          {}};
  for (const VerifyCase& v : r.cases) {
    if (!v.memory) continue;
    const VerifyMemory& x = *v.memory;
    m.rows.push_back({v.name, v.kind, format_size(static_cast<double>(x.predicted_bytes)),
                      format_size(static_cast<double>(x.measured_bytes)),
                      signed_percent(x.error_percent), opt_percent(x.noise_percent),
                      x.activations_known ? "in the estimate" : "not in the trace: left out"});
  }
  if (m.rows.empty()) return;
  std::string head =
      fmt::format("Memory: {} case(s) whose entry measured its peak memory", m.rows.size());
  if (r.memory) {
    head += fmt::format(", median |error| {}, worst {}{}",
                        opt_percent(r.memory->median_abs_error_percent),
                        opt_percent(r.memory->worst_abs_error_percent),
                        r.memory->worst_case.empty() ? "" : " (" + r.memory->worst_case + ")");
  }
  page.paragraph(head +
                     ". The estimate is the replay's per-GPU memory (ssgd simulate's memory "
                     "section); spread: (p90 - p10) / median of the measurement; tolerances "
                     "apply to the time only.",
                 "note");
  page.add(m.html(true));
}

}  // namespace

void dataset_verify_section(Page& page, const DatasetVerifyReport& r) {
  Table t = facts();
  if (!r.name.empty()) t.rows.push_back({"dataset", r.name});
  if (!r.folder.empty()) t.rows.push_back({"folder", r.folder});
  if (!r.packed_by.empty()) t.rows.push_back({"packed by ssgd", r.packed_by});
  if (r.entries) t.rows.push_back({"entries", std::to_string(*r.entries)});
  if (r.files) t.rows.push_back({"files", std::to_string(*r.files)});
  t.rows.push_back({"cases", std::to_string(r.cases.size())});
  page.add(t.html());
  Table s{{"cases", "count", "median |error|", "worst |error|", "worst case"},
          {false, true, true, true, false},
          {}};
  for (const auto& [name, sum] : {std::pair{"replay", &r.replay}, std::pair{"what-if", &r.what_if},
                                  std::pair{"all", &r.all}}) {
    s.rows.push_back({name, std::to_string(sum->cases), opt_percent(sum->median_abs_error_percent),
                      opt_percent(sum->worst_abs_error_percent),
                      sum->worst_case.empty() ? "-" : sum->worst_case});
  }
  page.add(s.html());
  std::string note =
      "error: (predicted - measured median) / measured median; a replay is an entry's trace under "
      "its own scenario, a what-if another entry's trace under this entry's scenario.";
  if (r.median_noise_percent) {
    note += fmt::format(
        " Measurement noise, the median over the entries of (p90 - p10) / median: "
        "{:.1f}%.",
        *r.median_noise_percent);
  }
  page.paragraph(note, "note");
  if (r.cases.empty()) {
    page.paragraph("No cases: the dataset was verified without replays (--no-replay).", "note");
    return;
  }
  page.chart(verify_scatter_chart(r));
  if (r.cases.size() > kMaxCaseBars) {
    page.paragraph(fmt::format("The {} cases of the largest |error| of the {} are drawn, in the "
                               "report's order; the table lists them all.",
                               kMaxCaseBars, r.cases.size()),
                   "note");
  }
  page.chart(verify_error_chart(r));
  page.paragraph(
      "The grey band is the measurement's p10 to p90 around its median: an error inside it is "
      "within the measurement's noise.",
      "note");
  Table c{{"case", "kind", "predicted", "measured median", "error", "noise"},
          {false, false, true, true, true, true},
          {}};
  for (const VerifyCase& v : r.cases) {
    c.rows.push_back({v.name, v.kind, format_ms(v.predicted_ns), format_ms(v.measured_ns),
                      signed_percent(v.error_percent), opt_percent(v.noise_percent)});
  }
  page.add(c.html(true));
  memory_rows(page, r);
}

void diff_section(Page& page, const DiffReport& r) {
  Table t{{"", "measured", "simulated"}, {false, false, false}, {}};
  t.rows.push_back({"trace", r.measured.path, r.simulated.path});
  t.rows.push_back(
      {"iteration", std::to_string(r.measured.iteration), std::to_string(r.simulated.iteration)});
  t.rows.push_back({"chosen", r.measured.chosen, r.simulated.chosen});
  t.rows.push_back({"iteration time", format_ms(r.measured.iteration_time_ns),
                    format_ms(r.simulated.iteration_time_ns)});
  page.add(t.html());
  const double m = static_cast<double>(r.measured.iteration_time_ns);
  const double s = static_cast<double>(r.simulated.iteration_time_ns);
  page.paragraph(fmt::format(
      "Simulated minus measured: {} ({}). Tasks: {} matched, {} measured only, {} simulated only; "
      "the rows are ordered by the difference of their {}.",
      signed_ms(r.simulated.iteration_time_ns - r.measured.iteration_time_ns), change(m, s),
      r.matched.size(), r.measured_only.size(), r.simulated_only.size(), diff_quantity(r.by)));
  page.chart(diff_kinds_chart(r));
  Table k{{"task kind", "tasks (measured, simulated)", "busy measured", "busy simulated",
           "difference", ""},
          {false, true, true, true, true, true},
          {}};
  for (const DiffKind& d : diff_by_kind(r)) {
    k.rows.push_back({d.kind, fmt::format("{}, {}", d.measured_tasks, d.simulated_tasks),
                      ms_text(d.measured_ns), ms_text(d.simulated_ns),
                      fmt::format("{}{}", d.simulated_ns >= d.measured_ns ? "+" : "",
                                  ms_text(d.simulated_ns - d.measured_ns)),
                      change(d.measured_ns, d.simulated_ns)});
  }
  page.add(k.html());
  page.paragraph(
      "busy: the sum of a kind's tasks' busy time (their work's durations) over the side's ranks, "
      "divided by its ranks.",
      "note");
  if (r.matched.empty()) {
    page.paragraph("No task is on both sides.", "note");
    return;
  }
  page.chart(diff_tasks_chart(r));
  const std::size_t n = std::min(r.matched.size(), kMaxDiffTasks);
  Table d{{"rank", "task", "kind", "measured", "simulated", "difference", ""},
          {true, false, false, true, true, true, true},
          {}};
  for (std::size_t i = 0; i < n; ++i) {
    const DiffRow& row = r.matched[i];
    const std::int64_t a = diff_value(*row.measured, r.by);
    const std::int64_t b = diff_value(*row.simulated, r.by);
    d.rows.push_back({std::to_string(row.rank), row.task, row.kind, format_ms(a), format_ms(b),
                      signed_ms(saturating_difference(b, a)),
                      change(static_cast<double>(a), static_cast<double>(b))});
  }
  page.add(d.html(true));
}

}  // namespace ssgd::html
