#include "simulator/html_report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "common/units.h"
#include "common/version.h"
#include "simulator/html_report/charts.h"
#include "simulator/html_report/html_text.h"
#include "simulator/html_report/vega_bundle.h"

namespace ssgd::sim::html {
namespace {

// ---------------------------------------------------------------- the page's fixed parts

constexpr std::string_view kStyle = R"css(
body { font-family: sans-serif; margin: 1.5em auto; max-width: 72em; padding: 0 1em; color: #222; }
h1 { margin-bottom: 0.2em; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }
h3 { margin-top: 1.4em; }
.meta { color: #555; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.scroll { max-height: 24em; max-width: 100%; overflow: auto; display: inline-block; }
.chart { margin: 0.8em 0; }
details { margin: 0.8em 0; }
details pre { background: #f7f7f7; padding: 0.6em; overflow: auto; max-height: 30em; }
#ssgd-errors { color: #b00; white-space: pre-wrap; }
.note { color: #555; font-size: 0.9em; }
)css";

// Runs first, before the bundles: every uncaught error, rejected promise and
// console error or warning is kept and shown in #ssgd-errors (the browser
// test reads it from the page).
constexpr std::string_view kErrorCapture = R"js(
(function () {
  var errors = [];
  function show() {
    var el = document.getElementById('ssgd-errors');
    if (el) { el.textContent = errors.join('\n'); el.hidden = errors.length === 0; }
  }
  function record(message) { errors.push(String(message)); show(); }
  window.ssgdRecordError = record;
  window.ssgdShowErrors = show;
  window.addEventListener('error', function (e) {
    record('error: ' + (e.message || e) + (e.filename ? ' (' + e.filename + ':' + e.lineno + ')' : ''));
  });
  window.addEventListener('unhandledrejection', function (e) {
    var r = e.reason;
    record('unhandled rejection: ' + (r && r.message ? r.message : r));
  });
  ['error', 'warn'].forEach(function (level) {
    var original = console[level];
    console[level] = function () {
      record('console.' + level + ': ' + Array.prototype.map.call(arguments, String).join(' '));
      return original.apply(console, arguments);
    };
  });
})();
)js";

// Runs last: draws every chart of #ssgd-charts, then sets #ssgd-status's
// data-state to "done" (every chart drawn) or "failed".
constexpr std::string_view kRender = R"js(
(function () {
  var status = document.getElementById('ssgd-status');
  window.ssgdShowErrors();
  var charts = [];
  try {
    charts = JSON.parse(document.getElementById('ssgd-charts').textContent);
  } catch (e) {
    window.ssgdRecordError('chart data: ' + e);
  }
  if (typeof vegaEmbed !== 'function') {
    window.ssgdRecordError('vega-embed did not load');
    status.setAttribute('data-state', 'failed');
    return;
  }
  var drawn = 0;
  Promise.all(charts.map(function (c) {
    return vegaEmbed('#' + c.id, c.spec, {actions: false, renderer: 'svg'}).then(function () {
      drawn += 1;
      document.getElementById(c.id).setAttribute('data-drawn', 'yes');
    }, function (e) {
      window.ssgdRecordError(c.id + ': ' + (e && e.message ? e.message : e));
    });
  })).then(function () {
    status.textContent = drawn + ' of ' + charts.length + ' charts drawn';
    status.setAttribute('data-state', drawn === charts.length ? 'done' : 'failed');
  });
})();
)js";

// ---------------------------------------------------------------- building blocks

struct Table {
  std::vector<std::string> head;
  std::vector<bool> numeric;  // per column: right-aligned
  std::vector<std::vector<std::string>> rows;

  [[nodiscard]] std::string html(bool scroll = false) const {
    std::string out = scroll ? "<div class=\"scroll\"><table>\n" : "<table>\n";
    if (std::any_of(head.begin(), head.end(), [](const std::string& h) { return !h.empty(); })) {
      out += "<tr>";
      for (const std::string& h : head) out += "<th>" + html_escape(h) + "</th>";
      out += "</tr>\n";
    }
    for (const auto& row : rows) {
      out += "<tr>";
      for (std::size_t i = 0; i < row.size(); ++i) {
        const bool num = i < numeric.size() && numeric[i];
        out += (num ? "<td class=\"num\">" : "<td>") + html_escape(row[i]) + "</td>";
      }
      out += "</tr>\n";
    }
    out += scroll ? "</table></div>\n" : "</table>\n";
    return out;
  }
};

// Two columns: what, value.
Table facts() { return Table{{"", ""}, {false, false}, {}}; }

std::string fmt_opt_ratio(const std::optional<double>& v, int decimals) {
  return v ? format_fixed(*v, decimals) : "-";
}

std::string percent(double fraction) { return format_fixed(fraction * 100.0, 1) + "%"; }

std::string number(double v) { return format_fixed(v, 1); }

std::string details(const std::string& summary, const Json& value) {
  return "<details><summary>" + html_escape(summary) + "</summary><pre>" +
         html_escape(value.dump(2, ' ', false, Json::error_handler_t::replace)) +
         "</pre></details>\n";
}

class Page {
 public:
  void add(std::string_view html) { body_ += html; }
  void heading(int level, const std::string& text, const std::string& id = "") {
    body_ += fmt::format("<h{}{}>{}</h{}>\n", level, id.empty() ? "" : " id=\"" + id + "\"",
                         html_escape(text), level);
  }
  void paragraph(const std::string& text, const std::string& cls = "") {
    body_ += (cls.empty() ? "<p>" : "<p class=\"" + cls + "\">") + html_escape(text) + "</p>\n";
  }
  void chart(Json spec) {
    const std::string id = fmt::format("chart-{}", charts_.size());
    body_ += "<div class=\"chart\" id=\"" + id + "\"></div>\n";
    charts_.push_back({{"id", id}, {"spec", std::move(spec)}});
  }
  [[nodiscard]] const std::string& body() const { return body_; }
  [[nodiscard]] const Json& charts() const { return charts_; }

 private:
  std::string body_;
  Json charts_ = Json::array();
};

std::string run_label(std::size_t index, const ReportInput& in) {
  return fmt::format("{}: {}", index + 1, std::filesystem::path(in.path).filename().string());
}

// ---------------------------------------------------------------- simulate

void simulate_section(Page& page, const std::string& label, const SimulateRun& r) {
  Table t = facts();
  if (!r.model.empty()) t.rows.push_back({"model", r.model});
  if (!r.input_path.empty()) t.rows.push_back({"input", r.input_path});
  t.rows.push_back({"workers", std::to_string(r.workers)});
  if (!r.policy.empty()) t.rows.push_back({"overlap policy", r.policy});
  t.rows.push_back({"iteration time (steady state)", format_ms(r.iteration_time_ns)});
  t.rows.push_back({"throughput", number(r.throughput) + " samples/s"});
  if (r.single_worker_ns)
    t.rows.push_back({"one worker's iteration time", format_ms(*r.single_worker_ns)});
  t.rows.push_back({"speedup", fmt_opt_ratio(r.speedup, 2)});
  t.rows.push_back({"scaling efficiency", r.efficiency ? percent(*r.efficiency) : "-"});
  if (!r.comm_model.empty()) t.rows.push_back({"communication", r.comm_model});
  page.add(t.html());

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
                         format_ms(c.time_ns), format_rate(c.algbw),
                         format_rate(c.busbw), c.replayed ? "yes" : "no"});
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

void comparison_section(Page& page, const std::vector<LabelledRun>& runs) {
  page.heading(2, fmt::format("Comparison of the {} simulate runs", runs.size()), "comparison");
  page.chart(breakdown_chart(runs));
  const SimulateRun& first = *runs.front().run;
  Table t{{"run", "iteration time", "vs first", "throughput (samples/s)", "vs first", "speedup",
           "vs first", "efficiency", "vs first"},
          {false, true, true, true, true, true, true, true, true},
          {}};
  auto ratio = [](double v, double ref) { return ref == 0 ? std::nan("") : v / ref; };
  auto opt_change = [&](const std::optional<double>& v,
                        const std::optional<double>& ref) -> std::string {
    return v && ref ? format_change(ratio(*v, *ref)) : "-";
  };
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const SimulateRun& r = *runs[i].run;
    const bool ref = i == 0;
    t.rows.push_back({runs[i].label, format_ms(r.iteration_time_ns),
                      ref ? "reference"
                          : format_change(ratio(static_cast<double>(r.iteration_time_ns),
                                                static_cast<double>(first.iteration_time_ns))),
                      number(r.throughput),
                      ref ? "reference" : format_change(ratio(r.throughput, first.throughput)),
                      fmt_opt_ratio(r.speedup, 2),
                      ref ? "reference" : opt_change(r.speedup, first.speedup),
                      r.efficiency ? percent(*r.efficiency) : "-",
                      ref ? "reference" : opt_change(r.efficiency, first.efficiency)});
  }
  page.add(t.html());
  page.paragraph(
      "\"vs first\": each run's figure relative to the first run's (+10% = 1.1 times it).", "note");
}

// ---------------------------------------------------------------- scale, optimize, sweep

void scale_section(Page& page, const ScaleReport& s) {
  Table t = facts();
  if (!s.model.empty()) t.rows.push_back({"model", s.model});
  if (!s.input_path.empty()) t.rows.push_back({"input", s.input_path});
  if (!s.scenario_file.empty()) t.rows.push_back({"scenario", s.scenario_file});
  if (!s.mode.empty()) t.rows.push_back({"scaling", s.mode});
  if (!s.policy.empty()) t.rows.push_back({"overlap policy", s.policy});
  t.rows.push_back({"one GPU's iteration time", format_ms(s.single_gpu.iteration_time_ns)});
  page.add(t.html());
  page.chart(scale_speedup_chart(s));
  page.chart(scale_efficiency_chart(s));
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

void optimize_section(Page& page, const OptimizeReport& o) {
  const OptimizePoint& best = o.curve[o.best];
  Table t = facts();
  t.rows.push_back({"parameter", o.param});
  if (!o.input.empty()) t.rows.push_back({"input", o.input});
  if (!o.scenario_file.empty()) t.rows.push_back({"scenario", o.scenario_file});
  t.rows.push_back({"values tried", std::to_string(o.curve.size())});
  t.rows.push_back({"best value", best.value});
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
  page.chart(optimize_chart(o));
  if (o.as_given_ns)
    page.paragraph("The dashed line is the iteration time of the scenario as given.", "note");
  Table ct{
      {"#", "value", "iteration time", "throughput (samples/s)", "collectives", "exposed comm", ""},
      {true, false, true, true, true, true, false},
      {}};
  for (std::size_t i = 0; i < o.curve.size(); ++i) {
    const OptimizePoint& p = o.curve[i];
    ct.rows.push_back({std::to_string(i + 1), p.value, format_ms(p.iteration_time_ns),
                       number(p.throughput), p.collectives ? std::to_string(*p.collectives) : "-",
                       p.exposed_comm_ns ? format_ms(*p.exposed_comm_ns) : "-",
                       i == o.best ? "best" : ""});
  }
  page.add(ct.html(true));
}

// ---------------------------------------------------------------- timeline

void timeline_section(Page& page, const std::string& path, const TimelineView& t,
                      const ReportInput* run_before) {
  page.heading(3, fmt::format("Timeline of iteration {} of {}", t.iteration,
                              std::filesystem::path(path).filename().string()));
  std::string what = fmt::format(
      "Iteration {} of {} ({}), {} long, every rank's tasks from the iteration's first start. "
      "Ranks whose tasks in it are the same (kind, name, start, duration) are drawn once: "
      "{} rank{} in {} group{}.",
      t.iteration, t.iterations,
      !t.complete         ? "the last; no iteration has tasks on every rank"
      : t.iterations >= 2 ? "the last one every rank has tasks in"
                          : "the only one",
      format_ms(t.span_ns), t.ranks, t.ranks == 1 ? "" : "s", t.groups.size(),
      t.groups.size() == 1 ? "" : "s");
  if (t.job_ranks > t.ranks) {
    what += fmt::format(" The file holds {} of the job's {} ranks (ssgd simulate --timeline-ranks; "
                        "0 writes them all).",
                        t.ranks, t.job_ranks);
  }
  if (run_before != nullptr) {
    what +=
        fmt::format(" The simulate report before it on the command line: {}.", run_before->path);
  }
  page.paragraph(what);
  if (t.groups_shown < t.groups.size()) {
    std::string left;
    for (std::size_t g = t.groups_shown; g < t.groups.size(); ++g) {
      if (g == t.groups_shown + 20) {
        left += "; ...";
        break;
      }
      left += (g == t.groups_shown ? "" : "; ") + t.groups[g].label;
    }
    page.paragraph(fmt::format("The first {} groups are drawn; {} more are left out: {}.",
                               t.groups_shown, t.groups.size() - t.groups_shown, left),
                   "note");
  }
  if (t.tasks_dropped > 0) {
    page.paragraph(fmt::format("{} of the {} tasks of the drawn rows, those of {} or less, are "
                               "not drawn, to keep the page small ({} bars at most).",
                               t.tasks_dropped, t.tasks_in_lanes, format_ms(t.dropped_up_to_ns),
                               kMaxTimelineBars),
                   "note");
  }
  page.chart(timeline_chart(t));
  Table gt{{"group", "ranks"}, {false, true}, {}};
  for (std::size_t g = 0; g < t.groups.size(); ++g) {
    if (g == 100) {
      gt.rows.push_back({fmt::format("... {} more groups", t.groups.size() - g), ""});
      break;
    }
    gt.rows.push_back({t.groups[g].label + (g < t.groups_shown ? "" : " (not drawn)"),
                       std::to_string(t.groups[g].ranks.size())});
  }
  page.add(gt.html(true));
}

std::string key_text(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

void sweep_section(Page& page, const SweepReport& s) {
  // The keys that vary, in the file's order.
  std::vector<int> varying;
  for (std::size_t k = 0; k < s.keys.size(); ++k) {
    const Json& first = s.points.front().keys.at(s.keys[k]);
    for (const SweepPoint& p : s.points) {
      if (p.keys.at(s.keys[k]) != first) {
        varying.push_back(static_cast<int>(k));
        break;
      }
    }
  }
  const int x = varying.empty() ? -1 : varying[0];
  const int colour = varying.size() < 2 ? -1 : varying[1];
  std::string what = fmt::format("{} point{}", s.points.size(), s.points.size() == 1 ? "" : "s");
  if (varying.empty()) {
    what += "; no key varies";
  } else {
    what += "; the keys that vary: ";
    for (std::size_t i = 0; i < varying.size(); ++i)
      what += (i ? ", " : "") + s.keys[static_cast<std::size_t>(varying[i])];
    what += fmt::format(". Plotted against {}", s.keys[static_cast<std::size_t>(x)]);
    if (colour >= 0)
      what += fmt::format(", coloured by {}", s.keys[static_cast<std::size_t>(colour)]);
  }
  std::size_t failed = 0;
  for (const SweepPoint& p : s.points) failed += p.error ? 1 : 0;
  if (failed > 0) {
    what += fmt::format(". {} point{} failed (the table gives the error{}) and {} not plotted", failed,
                        failed == 1 ? "" : "s", failed == 1 ? "" : "s",
                        failed == 1 ? "is" : "are");
  }
  page.paragraph(what + ".");
  page.chart(sweep_chart(s, x, colour, false));
  page.chart(sweep_chart(s, x, colour, true));
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

}  // namespace

std::string html_report(const std::vector<ReportInput>& inputs) {
  Page page;
  page.heading(1, "ssgd report");
  page.paragraph(fmt::format("Made by ssgd {} (ssgd report) from {} input{}:", ssgd_version(),
                             inputs.size(), inputs.size() == 1 ? "" : "s"),
                 "meta");
  std::string list = "<ol class=\"meta\">\n";
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    list += fmt::format("<li><a href=\"#input-{}\">{}</a> ({})</li>\n", i + 1,
                        html_escape(inputs[i].path), to_string(inputs[i].kind));
  }
  page.add(list + "</ol>\n");
  page.add("<pre id=\"ssgd-errors\" hidden></pre>\n");

  std::vector<LabelledRun> runs;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (const auto* run = std::get_if<SimulateRun>(&inputs[i].content))
      runs.push_back({run_label(i, inputs[i]), run});
  }
  if (runs.size() >= 2) comparison_section(page, runs);

  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const ReportInput& in = inputs[i];
    page.heading(2, fmt::format("{}. {} ({})", i + 1, in.path, to_string(in.kind)),
                 fmt::format("input-{}", i + 1));
    std::visit(
        [&](const auto& content) {
          using T = std::decay_t<decltype(content)>;
          if constexpr (std::is_same_v<T, SimulateRun>)
            simulate_section(page, run_label(i, in), content);
          if constexpr (std::is_same_v<T, ScaleReport>) scale_section(page, content);
          if constexpr (std::is_same_v<T, OptimizeReport>) optimize_section(page, content);
          if constexpr (std::is_same_v<T, SweepReport>) sweep_section(page, content);
          if constexpr (std::is_same_v<T, TimelineView>) {
            const ReportInput* before =
                i > 0 && inputs[i - 1].kind == InputKind::kSimulate ? &inputs[i - 1] : nullptr;
            timeline_section(page, in.path, content, before);
          }
        },
        in.content);
  }
  page.add(
      fmt::format("<p class=\"note\">Charts drawn by Vega {}, Vega-Lite {} and vega-embed {} "
                  "(BSD-3-Clause; licences at the end of this file), embedded in this page.</p>\n",
                  kVegaVersion, kVegaLiteVersion, kVegaEmbedVersion));
  page.add(
      "<p id=\"ssgd-status\" class=\"note\" data-state=\"pending\">charts not drawn yet</p>\n");

  std::string out;
  out.reserve(vega_js().size() + vega_lite_js().size() + vega_embed_js().size() +
              page.body().size() + 65536);
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"generator\" content=\"ssgd " + html_escape(ssgd_version()) + "\">\n";
  out += "<title>ssgd report</title>\n<style>";
  out += kStyle;
  out += "</style>\n<script>";
  out += kErrorCapture;
  out += "</script>\n<script>\n";
  out += vega_js();
  out += "\n</script>\n<script>\n";
  out += vega_lite_js();
  out += "\n</script>\n<script>\n";
  out += vega_embed_js();
  out += "\n</script>\n</head>\n<body>\n";
  out += page.body();
  out += "<script type=\"application/json\" id=\"ssgd-charts\">";
  out += script_json(page.charts());
  out += "</script>\n<script>";
  out += kRender;
  out += "</script>\n</body>\n</html>\n<!--\n";
  for (const auto& [name, text] :
       {std::pair{"Vega", vega_licence()}, std::pair{"Vega-Lite", vega_lite_licence()},
        std::pair{"vega-embed", vega_embed_licence()}}) {
    out += fmt::format("{} licence:\n\n{}\n", name, comment_text(text));
  }
  out += "-->\n";
  return out;
}

}  // namespace ssgd::sim::html
