#include "presentation/html/sweep_charts.h"

#include <fmt/format.h>

#include <algorithm>

#include "presentation/html/chart_spec.h"

namespace ssgd::html {
namespace {

std::string key_text(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

const Json& key_of(const SweepReport& s, const SweepPoint& p, std::size_t k) {
  return p.keys.at(s.keys[k]);
}

// "k=v, k=v" of `keys` at point `p`.
std::string combination(const SweepReport& s, const SweepPoint& p,
                        const std::vector<std::size_t>& keys) {
  std::string out;
  for (std::size_t k : keys) {
    out += fmt::format("{}{}={}", out.empty() ? "" : ", ", s.keys[k], key_text(key_of(s, p, k)));
  }
  return out;
}

void add_once(std::vector<std::string>& list, const std::string& v) {
  if (std::find(list.begin(), list.end(), v) == list.end()) list.push_back(v);
}

}  // namespace

SweepLayout sweep_layout(const SweepReport& s) {
  SweepLayout l;
  for (std::size_t k = 0; k < s.keys.size(); ++k) {
    const Json& first = key_of(s, s.points.front(), k);
    for (const SweepPoint& p : s.points) {
      if (key_of(s, p, k) != first) {
        l.varying.push_back(k);
        break;
      }
    }
  }
  if (l.varying.empty()) return l;
  for (std::size_t k : l.varying) {
    const bool numbers = std::all_of(s.points.begin(), s.points.end(), [&](const SweepPoint& p) {
      return key_of(s, p, k).is_number();
    });
    if (numbers) {
      l.x = k;
      l.numeric_x = true;
      break;
    }
  }
  if (!l.x) l.x = l.varying.front();
  for (std::size_t k : l.varying) {
    if (k == *l.x) continue;
    if (!l.colour) {
      l.colour = k;
    } else {
      l.split.push_back(k);
    }
  }
  if (!l.split.empty()) {
    for (const SweepPoint& p : s.points) add_once(l.panels, combination(s, p, l.split));
    if (l.panels.size() > kMaxSweepPanels) l.panels.clear();
  }
  return l;
}

std::vector<Json> sweep_charts(const SweepReport& s, const SweepLayout& l, bool throughput) {
  // Every varying key but x: a line joins only points that agree on all of them.
  std::vector<std::size_t> others;
  for (std::size_t k : l.varying) {
    if (!l.x || k != *l.x) others.push_back(k);
  }
  std::vector<std::string> colours;
  double top = 0;
  Json values = Json::array();
  // Per panel, its points only.
  std::vector<Json> panel_values(l.panels.size(), Json::array());
  for (const SweepPoint& p : s.points) {
    if (p.error) continue;  // no figures to plot; the table shows its error
    const double y = throughput ? p.throughput : ms(p.iteration_time_ns);
    top = std::max(top, y);
    Json v = {{"point", p.point}, {"y", y}, {"series", combination(s, p, others)}};
    if (l.x) {
      const Json& x = key_of(s, p, *l.x);
      v["x"] = l.numeric_x ? x : Json(key_text(x));
    }
    if (l.colour) {
      v["c"] = key_text(key_of(s, p, *l.colour));
      add_once(colours, v["c"].get<std::string>());
    }
    for (std::size_t i = 0; i < l.varying.size(); ++i) {
      v[fmt::format("k{}", i)] = key_text(key_of(s, p, l.varying[i]));
    }
    if (l.panels.empty()) {
      values.push_back(std::move(v));
    } else {
      const std::string panel = combination(s, p, l.split);
      const auto at = std::find(l.panels.begin(), l.panels.end(), panel) - l.panels.begin();
      panel_values[static_cast<std::size_t>(at)].push_back(std::move(v));
    }
  }
  const std::string x_title = l.x ? s.keys[*l.x] : "point";
  const std::string y_title = throughput ? "throughput (samples/s)" : "iteration time (ms)";
  Json x = !l.x ? field("point", "ordinal", "point")
                : field("x", l.numeric_x ? "quantitative" : "ordinal", x_title);
  if (l.x && !l.numeric_x) x["sort"] = nullptr;
  if (l.numeric_x) {
    const bool whole = std::all_of(s.points.begin(), s.points.end(), [&](const SweepPoint& p) {
      return key_of(s, p, *l.x).is_number_integer();
    });
    if (whole) x["axis"] = {{"tickMinStep", 1}, {"format", "d"}};
    // Values spaced by a factor (1, 2, 4, ... 16) on a log axis.
    std::vector<double> v;
    for (const SweepPoint& p : s.points) v.push_back(key_of(s, p, *l.x).get<double>());
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    bool geometric = v.size() >= 3 && v.front() > 0 && v.back() >= 8 * v.front();
    bool doubling = geometric;
    for (std::size_t i = 1; i < v.size() && geometric; ++i) {
      geometric = v[i] >= 1.5 * v[i - 1];
      doubling = doubling && v[i] == 2 * v[i - 1];
    }
    if (geometric) x["scale"] = {{"type", "log"}, {"base", doubling ? 2 : 10}};
  }
  Json y = field("y", "quantitative", y_title);
  Json tooltip = Json::array({field("point", "quantitative", "point")});
  for (std::size_t i = 0; i < l.varying.size(); ++i) {
    tooltip.push_back(field(fmt::format("k{}", i), "nominal", s.keys[l.varying[i]]));
  }
  tooltip.push_back(field("y", "quantitative", y_title));
  Json encoding = {{"x", x}, {"y", y}, {"tooltip", tooltip}};
  if (l.colour) {
    Json c = series_colour_encoding("c", s.keys[*l.colour], colours);
    c["legend"] = {{"orient", "right"}};
    encoding["color"] = c;
  }
  if (!others.empty()) encoding["detail"] = {{"field", "series"}, {"type", "nominal"}};

  const std::string what = throughput ? "Throughput" : "Iteration time";
  std::vector<Json> charts;
  if (l.panels.empty()) {
    std::string title = fmt::format("{} against {}", what, x_title);
    if (!l.split.empty()) title += ", a line per combination of the other keys";
    Json spec = base_spec(title, 260);
    spec["data"] = {{"values", values}};
    spec["mark"] = {{"type", "line"}, {"point", true}};
    spec["encoding"] = encoding;
    charts.push_back(std::move(spec));
    return charts;
  }
  // One chart per combination of the split keys, on the same axes.
  encoding["y"]["scale"] = {{"domain", {0, top > 0 ? top : 1}}, {"nice", true}};
  for (std::size_t i = 0; i < l.panels.size(); ++i) {
    Json spec = base_spec(fmt::format("{} against {} ({})", what, x_title, l.panels[i]), 220);
    spec["data"] = {{"values", std::move(panel_values[i])}};
    spec["mark"] = {{"type", "line"}, {"point", true}};
    spec["encoding"] = encoding;
    charts.push_back(std::move(spec));
  }
  return charts;
}

}  // namespace ssgd::html
