#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "presentation/html/html_text.h"
#include "presentation/html/quantity.h"
#include "presentation/html/sections.h"

namespace ssgd::html {
namespace {

// The most differing keys the table lists.
constexpr std::size_t kMaxDifferenceRows = 200;
constexpr std::size_t kMaxCellText = 80;

std::string cell(std::string text) {
  if (text.size() <= kMaxCellText) return text;
  std::size_t cut = kMaxCellText - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "...";
}

// How the inputs are named, in words, and every key that differs as a table:
// a row per key, a column per input.
void differences(Page& page, const std::string& what, const std::vector<std::string>& labels,
                 const Labelling& labelling, const std::vector<Settings>& settings) {
  if (labelling.differing.empty()) {
    page.paragraph(fmt::format("No {} differs between them: each is named by its file.", what),
                   "note");
    return;
  }
  std::string shown;
  for (const std::string& k : labelling.shown) shown += (shown.empty() ? "" : ", ") + k;
  page.paragraph(
      labelling.shown.size() == labelling.differing.size()
          ? fmt::format("Each is named by the {}s whose values differ between them: {}.", what,
                        shown)
          : fmt::format("{} {}s differ between them (the table lists them); each is named by "
                        "the fewest that tell them apart: {}.",
                        labelling.differing.size(), what, shown),
      "note");
  Table t;
  t.head.push_back(what);
  t.numeric.push_back(false);
  for (const std::string& l : labels) {
    t.head.push_back(l);
    t.numeric.push_back(false);
  }
  std::vector<SettingIndex> index;
  for (const Settings& s : settings) index.push_back(index_of(s));
  for (std::size_t k = 0; k < labelling.differing.size(); ++k) {
    if (k == kMaxDifferenceRows) {
      t.rows.push_back({fmt::format("... {} more", labelling.differing.size() - k)});
      t.rows.back().resize(labels.size() + 1);
      break;
    }
    std::vector<std::string> row{labelling.differing[k]};
    for (const SettingIndex& s : index)
      row.push_back(cell(setting_of(s, labelling.differing[k], true)));
    t.rows.push_back(std::move(row));
  }
  page.add(t.html(true));
}

std::vector<std::string> labels_of(const auto& list) {
  std::vector<std::string> out;
  for (const auto& x : list) out.push_back(x.label);
  return out;
}

double ratio(double v, double ref) { return ref == 0 ? std::nan("") : v / ref; }

// A scenario file, named "scenario"; "none" when there was none.
Setting scenario_setting(const std::string& path) {
  Setting s = path_setting("scenario", path);
  if (path.empty()) s.text = "none";
  return s;
}

// A scale or optimize report records the scenario's file and its --set
// lines, not the scenario: each KEY=VALUE is a setting of its own, named as
// a simulate run's scenario key is, except the keys the report records
// itself under its own name (`reported`). A key set twice ran with its last
// value, as the scenario applies them in order: that one is kept, in the
// place of the first.
void add_set_settings(const std::vector<std::string>& sets, Settings& out,
                      std::initializer_list<std::string_view> reported = {}) {
  std::map<std::string, std::size_t> at;  // key -> its place in `out`
  for (const std::string& set : sets) {
    const std::size_t eq = set.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    std::string key = set.substr(0, eq);
    if (std::find(reported.begin(), reported.end(), key) != reported.end()) continue;
    const std::string value = set.substr(eq + 1);
    Setting setting{key, Json(value), setting_text(Json(value))};
    if (const auto it = at.find(key); it != at.end()) {
      out[it->second] = std::move(setting);
    } else {
      at.emplace(std::move(key), out.size());
      out.push_back(std::move(setting));
    }
  }
}

}  // namespace

Settings simulate_settings(const SimulateRun& run) {
  Settings out;
  if (!run.input_path.empty()) out.push_back(path_setting("input", run.input_path));
  Settings scenario;
  flatten_settings(run.scenario, "", scenario);
  for (Setting& s : scenario) {
    // The values the --set lines gave are in the scenario's own keys.
    if (s.key == "sets") continue;
    if (s.key == "file") {
      out.push_back(scenario_setting(s.value.is_string() ? s.value.get<std::string>() : ""));
    } else {
      out.push_back(std::move(s));
    }
  }
  return out;
}

Settings scale_settings(const ScaleReport& scale) {
  Settings flat, out;
  flatten_settings(scale.settings, "", flat);
  for (Setting& s : flat) {
    // Results and what follows from the keys below are not what-ifs.
    if (s.key.starts_with("single_gpu") || s.key == "input.model" || s.key == "compute_model" ||
        s.key == "batch_given") {
      continue;
    }
    if (s.key == "input.path") {
      out.push_back(path_setting("input", scale.input_path));
    } else if (s.key == "scenario_sets") {
      // policy.overlap is the report's `policy`, scaling.mode its `mode`.
      add_set_settings(scale.scenario_sets, out,
                       {"policy.overlap", "iterations", "scaling.mode", "scaling.global_batch"});
    } else if (s.key == "scenario_file") {
      out.push_back(scenario_setting(scale.scenario_file));
    } else {
      out.push_back(std::move(s));
    }
  }
  return out;
}

Settings optimize_settings(const OptimizeReport& o) {
  Settings out;
  out.push_back(path_setting("input", o.input));
  out.push_back(scenario_setting(o.scenario_file));
  add_set_settings(o.scenario_sets, out);
  if (o.gpu_memory_bytes) {
    out.push_back({"gpu_memory_bytes", Json(*o.gpu_memory_bytes),
                   quantity_text({QuantityKind::kSize, static_cast<double>(*o.gpu_memory_bytes)})});
  }
  return out;
}

void simulate_comparison(Page& page, const std::vector<LabelledRun>& runs,
                         const Labelling& labelling, const std::vector<Settings>& settings) {
  page.heading(2, fmt::format("Comparison of the {} simulate runs", runs.size()), "comparison");
  differences(page, "scenario key", labels_of(runs), labelling, settings);
  page.chart(breakdown_chart(runs));
  const SimulateRun& first = *runs.front().run;
  const bool shared = std::any_of(runs.begin(), runs.end(), [](const LabelledRun& r) {
    return r.run->shared_fabric && !r.run->shared_fabric->jobs.empty();
  });
  Table t{{"run", "iteration time", "vs first", "throughput (samples/s)", "vs first", "speedup",
           "vs first", "efficiency", "vs first"},
          {false, true, true, true, true, true, true, true, true},
          {}};
  if (shared) {
    t.head.insert(t.head.begin() + 3, "with the other jobs");
    t.numeric.insert(t.numeric.begin() + 3, true);
  }
  auto opt_change = [&](const std::optional<double>& v,
                        const std::optional<double>& ref) -> std::string {
    return v && ref ? format_change(ratio(*v, *ref)) : "-";
  };
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const SimulateRun& r = *runs[i].run;
    const bool ref = i == 0;
    std::vector<std::string> row{
        runs[i].label,
        format_ms(r.iteration_time_ns),
        ref ? "reference"
            : format_change(ratio(static_cast<double>(r.iteration_time_ns),
                                  static_cast<double>(first.iteration_time_ns))),
        number(r.throughput),
        ref ? "reference" : format_change(ratio(r.throughput, first.throughput)),
        fmt_opt_ratio(r.speedup, 2),
        ref ? "reference" : opt_change(r.speedup, first.speedup),
        r.efficiency ? percent(*r.efficiency) : "-",
        ref ? "reference" : opt_change(r.efficiency, first.efficiency)};
    if (shared) {
      row.insert(row.begin() + 3, r.shared_fabric && !r.shared_fabric->jobs.empty()
                                      ? format_ms(r.shared_fabric->jobs.front().shared_ns)
                                      : "-");
    }
    t.rows.push_back(std::move(row));
  }
  page.add(t.html());
  page.paragraph(
      "\"vs first\": each run's figure relative to the first run's (+10% = 1.1 times it).", "note");
}

void scale_comparison(Page& page, const std::vector<LabelledScale>& scales,
                      const Labelling& labelling, const std::vector<Settings>& settings) {
  page.heading(2, fmt::format("Comparison of the {} scale reports", scales.size()),
               "comparison-scale");
  differences(page, "setting", labels_of(scales), labelling, settings);
  page.begin_grid();
  page.chart(scale_speedup_chart(scales));
  page.chart(scale_efficiency_chart(scales));
  page.end_grid();
  Table t{{"report", "GPUs", "one GPU", "at the most GPUs", "speedup", "efficiency"},
          {false, false, true, true, true, true},
          {}};
  for (const LabelledScale& s : scales) {
    const auto most =
        std::max_element(s.scale->rows.begin(), s.scale->rows.end(),
                         [](const ScaleRow& a, const ScaleRow& b) { return a.gpus < b.gpus; });
    std::string gpus;
    for (const ScaleRow& r : s.scale->rows)
      gpus += (gpus.empty() ? "" : ", ") + std::to_string(r.gpus);
    t.rows.push_back({s.label, gpus, format_ms(s.scale->single_gpu.iteration_time_ns),
                      fmt::format("{} ({} GPUs)", format_ms(most->iteration_time_ns), most->gpus),
                      format_fixed(most->speedup, 2), percent(most->efficiency)});
  }
  page.add(t.html());
}

void optimize_comparison(Page& page, const std::vector<LabelledOptimize>& optimizes,
                         const Labelling& labelling, const std::vector<Settings>& settings) {
  const std::string& param = optimizes.front().optimize->param;
  page.heading(2,
               fmt::format("Comparison of the {} optimize reports of {}", optimizes.size(), param));
  differences(page, "setting", labels_of(optimizes), labelling, settings);
  page.chart(optimize_chart(optimizes));
  page.paragraph(
      "A diamond marks each report's best value; a dashed line of its colour is the iteration "
      "time of its scenario as given.",
      "note");
  Table t{{"report", "values tried", "best value", "best iteration time", "as given",
           "best vs as given"},
          {false, true, false, true, true, true},
          {}};
  for (const LabelledOptimize& o : optimizes) {
    const OptimizePoint& best = o.optimize->curve[o.optimize->best];
    const auto& given = o.optimize->as_given_ns;
    t.rows.push_back({o.label, std::to_string(o.optimize->curve.size()), best.value,
                      format_ms(best.iteration_time_ns), given ? format_ms(*given) : "-",
                      given && *given > 0
                          ? format_change(ratio(static_cast<double>(best.iteration_time_ns),
                                                static_cast<double>(*given)))
                          : "-"});
  }
  page.add(t.html());
}

}  // namespace ssgd::html
