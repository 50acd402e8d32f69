#include "presentation/html/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "common/version.h"
#include "presentation/html/html_text.h"
#include "presentation/html/sections.h"
#include "presentation/html/vega_bundle.h"

namespace ssgd::html {
namespace {

// ---------------------------------------------------------------- the page's fixed parts

constexpr std::string_view kStyle = R"css(
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1600px; padding: 0 1.5em; color: #222; }
h1 { margin-bottom: 0.2em; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 2em; }
h3 { margin-top: 1.4em; }
.meta { color: #555; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.scroll { max-height: 24em; max-width: 100%; overflow: auto; display: inline-block; }
div.chart { margin: 0.8em 0; width: 100%; min-width: 0; }
div.chart.vega-embed { display: block; }
.chart-grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(34em, 1fr)); gap: 0 2em; }
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

// ---------------------------------------------------------------- labels and comparisons

// The simulate runs, scale reports and optimize reports (of one parameter)
// compared, each input's label (labels.h; "" for the kinds not labelled),
// and which inputs' own sections leave their charts to a comparison.
struct Plan {
  std::vector<std::string> label;
  std::vector<bool> charted_above;
  std::vector<LabelledRun> runs;
  std::vector<Settings> run_settings;
  Labelling run_labels;
  std::vector<LabelledScale> scales;
  std::vector<Settings> scale_settings;
  Labelling scale_labels;
  struct OptimizeGroup {
    std::vector<LabelledOptimize> members;
    std::vector<Settings> settings;
    Labelling labels;
  };
  std::vector<OptimizeGroup> optimize_groups;  // of two or more, by first appearance
};

const std::vector<std::string> kRunPriority = {"input",
                                               "scenario",
                                               "policy.overlap",
                                               "network.inter_node",
                                               "network.intra_node",
                                               "cluster.nodes",
                                               "cluster.gpus_per_node",
                                               "platform.preset",
                                               "network.model",
                                               "network.algorithm",
                                               "sharding.strategy",
                                               "workload.batch_per_gpu",
                                               "iterations"};
const std::vector<std::string> kScalePriority = {"input", "scenario", "policy", "mode",
                                                 "global_batch"};
const std::vector<std::string> kOptimizePriority = {"input", "scenario"};

Plan plan(const std::vector<ReportInput>& inputs) {
  Plan p;
  const std::size_t n = inputs.size();
  p.label.assign(n, "");
  p.charted_above.assign(n, false);
  std::vector<std::string> files(n);
  for (std::size_t i = 0; i < n; ++i) files[i] = inputs[i].path;
  const std::vector<std::string> names = file_labels(files);

  // Simulate runs.
  std::vector<std::size_t> run_at, scale_at;
  std::vector<std::string> run_files, scale_files;
  for (std::size_t i = 0; i < n; ++i) {
    if (const auto* run = std::get_if<SimulateRun>(&inputs[i].content)) {
      run_at.push_back(i);
      run_files.push_back(inputs[i].path);
      p.runs.push_back({names[i], run});
      p.run_settings.push_back(simulate_settings(*run));
    }
    if (const auto* scale = std::get_if<ScaleReport>(&inputs[i].content)) {
      scale_at.push_back(i);
      scale_files.push_back(inputs[i].path);
      p.scales.push_back({names[i], scale});
      p.scale_settings.push_back(scale_settings(*scale));
    }
  }
  if (p.runs.size() >= 2) {
    p.run_labels = label_by_differences(p.run_settings, run_files, kRunPriority);
    for (std::size_t k = 0; k < p.runs.size(); ++k) p.runs[k].label = p.run_labels.labels[k];
  }
  for (std::size_t k = 0; k < p.runs.size(); ++k) p.label[run_at[k]] = p.runs[k].label;
  if (p.scales.size() >= 2) {
    p.scale_labels = label_by_differences(p.scale_settings, scale_files, kScalePriority);
    for (std::size_t k = 0; k < p.scales.size(); ++k) {
      p.scales[k].label = p.scale_labels.labels[k];
      p.label[scale_at[k]] = p.scales[k].label;
      p.charted_above[scale_at[k]] = true;
    }
  }

  // Optimize reports, grouped by parameter.
  std::vector<std::string> params;
  for (std::size_t i = 0; i < n; ++i) {
    if (const auto* o = std::get_if<OptimizeReport>(&inputs[i].content)) {
      if (std::find(params.begin(), params.end(), o->param) == params.end())
        params.push_back(o->param);
    }
  }
  for (const std::string& param : params) {
    Plan::OptimizeGroup g;
    std::vector<std::size_t> at;
    std::vector<std::string> group_files;
    for (std::size_t i = 0; i < n; ++i) {
      const auto* o = std::get_if<OptimizeReport>(&inputs[i].content);
      if (o == nullptr || o->param != param) continue;
      at.push_back(i);
      group_files.push_back(inputs[i].path);
      g.members.push_back({names[i], o});
      g.settings.push_back(optimize_settings(*o));
    }
    if (g.members.size() < 2) continue;
    g.labels = label_by_differences(g.settings, group_files, kOptimizePriority);
    for (std::size_t k = 0; k < g.members.size(); ++k) {
      g.members[k].label = g.labels.labels[k];
      p.label[at[k]] = g.members[k].label;
      p.charted_above[at[k]] = true;
    }
    p.optimize_groups.push_back(std::move(g));
  }
  return p;
}

}  // namespace

std::string html_report(const std::vector<ReportInput>& inputs) {
  Page page;
  page.heading(1, "ssgd report");
  page.paragraph(fmt::format("Made by ssgd {} (ssgd report) from {} input{}:", ssgd_version(),
                             inputs.size(), inputs.size() == 1 ? "" : "s"),
                 "meta");
  const Plan p = plan(inputs);
  // A labelled input is named by its label, when that is not its file name.
  const auto compared = [&](std::size_t i) {
    return !p.label[i].empty() &&
           p.label[i] != std::filesystem::path(inputs[i].path).filename().string();
  };
  std::string list = "<ol class=\"meta\">\n";
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    list += fmt::format("<li><a href=\"#input-{}\">{}</a> ({}){}</li>\n", i + 1,
                        html_escape(inputs[i].path), to_string(inputs[i].kind),
                        compared(i) ? ": " + html_escape(p.label[i]) : "");
  }
  page.add(list + "</ol>\n");
  page.add("<pre id=\"ssgd-errors\" hidden></pre>\n");

  if (p.runs.size() >= 2) simulate_comparison(page, p.runs, p.run_labels, p.run_settings);
  if (p.scales.size() >= 2) scale_comparison(page, p.scales, p.scale_labels, p.scale_settings);
  for (const Plan::OptimizeGroup& g : p.optimize_groups)
    optimize_comparison(page, g.members, g.labels, g.settings);

  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const ReportInput& in = inputs[i];
    page.heading(
        2,
        compared(i) ? fmt::format("{}. {} ({}, {})", i + 1, p.label[i], to_string(in.kind), in.path)
                    : fmt::format("{}. {} ({})", i + 1, in.path, to_string(in.kind)),
        fmt::format("input-{}", i + 1));
    std::visit(
        [&](const auto& content) {
          using T = std::decay_t<decltype(content)>;
          if constexpr (std::is_same_v<T, SimulateRun>) simulate_section(page, p.label[i], content);
          if constexpr (std::is_same_v<T, ScaleReport>)
            scale_section(page, content, !p.charted_above[i]);
          if constexpr (std::is_same_v<T, OptimizeReport>)
            optimize_section(page, content, !p.charted_above[i]);
          if constexpr (std::is_same_v<T, SweepReport>) sweep_section(page, content);
          if constexpr (std::is_same_v<T, DatasetVerifyReport>)
            dataset_verify_section(page, content);
          if constexpr (std::is_same_v<T, DiffReport>) diff_section(page, content);
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

}  // namespace ssgd::html
