#include "presentation/html/measured_charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "presentation/html/chart_spec.h"
#include "presentation/html/html_text.h"
#include "presentation/html/page.h"

namespace ssgd::html {
namespace {

const std::vector<std::string> kSides = {"measured", "simulated"};

// Names made unique by a " #n" suffix, in order.
std::vector<std::string> unique_names(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  std::map<std::string, int> seen;
  for (const std::string& n : names) {
    const int k = ++seen[n];
    out.push_back(k == 1 ? n : fmt::format("{} #{}", n, k));
  }
  return out;
}

// A text layer beside horizontal bars: `text_field` right of `x_field`.
// The x title is the bars' (layers that share an axis share its title).
Json beside(const Json& y, const std::string& x_field, const std::string& x_title,
            const std::string& text_field) {
  return {{"mark", {{"type", "text"}, {"align", "left"}, {"dx", 4}, {"baseline", "middle"}}},
          {"encoding",
           {{"y", y},
            {"x", field(x_field, "quantitative", x_title)},
            {"text", {{"field", text_field}}}}}};
}

// An axis from `lo` to `hi` with room on the right for the text beside the
// bars.
Json padded_domain(double lo, double hi) {
  const double span = hi > lo ? hi - lo : 1;
  return {{"domain", {lo - span * 0.02, hi + span * 0.18}}, {"nice", false}};
}

}  // namespace

Json verify_scatter_chart(const DatasetVerifyReport& r) {
  Json values = Json::array();
  double lo = 0, hi = 0;
  bool positive = true;
  for (const VerifyCase& c : r.cases) {
    const double p = ms(c.predicted_ns), m = ms(c.measured_ns);
    positive = positive && c.predicted_ns > 0;
    lo = values.empty() ? std::min(p, m) : std::min({lo, p, m});
    hi = std::max({hi, p, m});
    values.push_back({{"case", c.name},
                      {"kind", c.kind},
                      {"predicted", p},
                      {"measured", m},
                      {"error", signed_percent(c.error_percent)}});
  }
  Json spec = base_spec("Predicted against measured iteration time, one dot per case", 380);
  const bool log = positive && lo > 0 && hi >= 8 * lo;
  Json scale = log ? Json{{"type", "log"}, {"nice", false}, {"domain", {lo / 1.2, hi * 1.2}}}
                   : Json{{"zero", false}};
  Json x = field("measured", "quantitative", "measured median (ms)");
  Json y = field("predicted", "quantitative", "predicted (ms)");
  x["scale"] = scale;
  y["scale"] = scale;
  std::vector<std::string> kinds;
  for (const VerifyCase& c : r.cases) {
    if (std::find(kinds.begin(), kinds.end(), c.kind) == kinds.end()) kinds.push_back(c.kind);
  }
  Json dots = {{"data", {{"values", values}}},
               {"mark", {{"type", "point"}, {"filled", true}, {"size", 40}, {"opacity", 0.8}}},
               {"encoding",
                {{"x", x},
                 {"y", y},
                 {"color", series_colour_encoding("kind", "case kind", kinds)},
                 {"tooltip",
                  {field("case", "nominal", "case"), field("kind", "nominal", "kind"),
                   field("predicted", "quantitative", "predicted (ms)"),
                   field("measured", "quantitative", "measured median (ms)"),
                   field("error", "nominal", "error")}}}}};
  Json diagonal = {
      {"data",
       {{"values",
         {{{"measured", lo}, {"predicted", lo}}, {{"measured", hi}, {"predicted", hi}}}}}},
      {"mark", {{"type", "line"}, {"strokeDash", {4, 4}}, {"color", kReferenceColour}}},
      {"encoding", {{"x", x}, {"y", y}}}};
  spec["layer"] = {diagonal, dots};
  return spec;
}

Json verify_error_chart(const DatasetVerifyReport& r) {
  // The cases drawn: all, or the kMaxCaseBars of the largest |error|, in order.
  std::vector<std::size_t> drawn(r.cases.size());
  for (std::size_t i = 0; i < drawn.size(); ++i) drawn[i] = i;
  if (drawn.size() > kMaxCaseBars) {
    std::stable_sort(drawn.begin(), drawn.end(), [&](std::size_t a, std::size_t b) {
      return std::abs(r.cases[a].error_percent) > std::abs(r.cases[b].error_percent);
    });
    drawn.resize(kMaxCaseBars);
    std::sort(drawn.begin(), drawn.end());
  }
  std::vector<std::string> names;
  for (std::size_t i : drawn) names.push_back(r.cases[i].name);
  names = unique_names(names);
  Json values = Json::array();
  std::vector<std::string> kinds;
  double lo = 0, hi = 0;  // the x axis: every bar and band, and 0
  for (std::size_t k = 0; k < drawn.size(); ++k) {
    const VerifyCase& c = r.cases[drawn[k]];
    if (std::find(kinds.begin(), kinds.end(), c.kind) == kinds.end()) kinds.push_back(c.kind);
    const double m = static_cast<double>(c.measured_ns);
    Json v = {{"case", names[k]},
              {"kind", c.kind},
              {"error", c.error_percent},
              {"text", signed_percent(c.error_percent)},
              {"predicted", ms(c.predicted_ns)},
              {"measured", ms(c.measured_ns)},
              {"end", std::max(c.error_percent, 0.0)}};
    lo = std::min(lo, c.error_percent);
    hi = std::max(hi, c.error_percent);
    if (c.p10_ns && c.p90_ns) {
      const double p10 = (static_cast<double>(*c.p10_ns) - m) / m * 100.0;
      const double p90 = (static_cast<double>(*c.p90_ns) - m) / m * 100.0;
      v["p10"] = p10;
      v["p90"] = p90;
      lo = std::min(lo, p10);
      hi = std::max(hi, p90);
    }
    values.push_back(std::move(v));
  }
  std::string title = "Error per case: (predicted - measured) / measured";
  if (r.all.median_abs_error_percent && r.all.worst_abs_error_percent) {
    title += fmt::format("; median |error| {:.1f}%, worst {:.1f}%", *r.all.median_abs_error_percent,
                         *r.all.worst_abs_error_percent);
  }
  Json spec = base_spec(title, static_cast<int>(std::max<std::size_t>(1, drawn.size())) * 16);
  spec["data"] = {{"values", values}};
  Json y = field("case", "nominal", "");
  y["sort"] = names;
  y["axis"] = {{"labelLimit", 360}};
  Json x = field("error", "quantitative", "error (%)");
  x["scale"] = padded_domain(lo, hi);
  Json band = {
      {"mark", {{"type", "rule"}, {"size", 9}, {"opacity", 0.35}, {"color", kReferenceColour}}},
      {"encoding",
       {{"y", y},
        {"x", field("p10", "quantitative", "error (%)")},
        {"x2", {{"field", "p90"}}},
        {"tooltip",
         {field("case", "nominal", "case"), field("p10", "quantitative", "p10 vs median (%)"),
          field("p90", "quantitative", "p90 vs median (%)")}}}}};
  Json bars = {{"mark", {{"type", "bar"}, {"height", 10}}},
               {"encoding",
                {{"y", y},
                 {"x", x},
                 {"color", series_colour_encoding("kind", "case kind", kinds)},
                 {"tooltip",
                  {field("case", "nominal", "case"), field("kind", "nominal", "kind"),
                   field("predicted", "quantitative", "predicted (ms)"),
                   field("measured", "quantitative", "measured median (ms)"),
                   field("text", "nominal", "error")}}}}};
  Json zero = {{"data", {{"values", {{{"x", 0.0}}}}}},
               {"mark", {{"type", "rule"}, {"color", "#444"}}},
               {"encoding", {{"x", {{"field", "x"}, {"type", "quantitative"}}}}}};
  zero["encoding"]["x"]["title"] = "error (%)";
  spec["layer"] = {band, bars, beside(y, "end", "error (%)", "text"), zero};
  return spec;
}

std::vector<DiffKind> diff_by_kind(const DiffReport& r) {
  std::vector<DiffKind> kinds;
  for (const char* k : {"io", "h2d", "forward", "backward", "comm", "update"}) {
    kinds.push_back({k, 0, 0, 0, 0});
  }
  std::set<std::int64_t> measured_ranks, simulated_ranks;
  const auto add = [&](const DiffRow& row) {
    auto it = std::find_if(kinds.begin(), kinds.end(),
                           [&](const DiffKind& k) { return k.kind == row.kind; });
    if (it == kinds.end()) {
      kinds.push_back({row.kind, 0, 0, 0, 0});
      it = kinds.end() - 1;
    }
    if (row.measured) {
      ++it->measured_tasks;
      it->measured_ns += static_cast<double>(row.measured->busy_ns);
      measured_ranks.insert(row.rank);
    }
    if (row.simulated) {
      ++it->simulated_tasks;
      it->simulated_ns += static_cast<double>(row.simulated->busy_ns);
      simulated_ranks.insert(row.rank);
    }
  };
  for (const auto* list : {&r.matched, &r.measured_only, &r.simulated_only}) {
    for (const DiffRow& row : *list) add(row);
  }
  std::erase_if(kinds, [](const DiffKind& k) { return k.measured_tasks + k.simulated_tasks == 0; });
  for (DiffKind& k : kinds) {
    k.measured_ns /= static_cast<double>(std::max<std::size_t>(1, measured_ranks.size()));
    k.simulated_ns /= static_cast<double>(std::max<std::size_t>(1, simulated_ranks.size()));
  }
  return kinds;
}

namespace {

std::string change_text(double measured, double simulated) {
  const std::string diff =
      fmt::format("{}{:.3f} ms", simulated >= measured ? "+" : "", (simulated - measured) / 1e6);
  if (measured <= 0) return diff;
  return fmt::format("{} ({})", diff, signed_percent((simulated - measured) / measured * 100, 1));
}

}  // namespace

Json diff_kinds_chart(const DiffReport& r) {
  struct Row {
    std::string what;
    double measured, simulated;
  };
  std::vector<Row> rows = {{"iteration time", static_cast<double>(r.measured.iteration_time_ns),
                            static_cast<double>(r.simulated.iteration_time_ns)}};
  for (const DiffKind& k : diff_by_kind(r))
    rows.push_back({k.kind + " (busy)", k.measured_ns, k.simulated_ns});
  Json bars = Json::array(), notes = Json::array();
  std::vector<std::string> order;
  for (const Row& row : rows) {
    order.push_back(row.what);
    bars.push_back({{"what", row.what}, {"side", "measured"}, {"ms", row.measured / 1e6}});
    bars.push_back({{"what", row.what}, {"side", "simulated"}, {"ms", row.simulated / 1e6}});
    notes.push_back({{"what", row.what},
                     {"end", std::max(row.measured, row.simulated) / 1e6},
                     {"text", change_text(row.measured, row.simulated)}});
  }
  Json spec = base_spec(
      "Measured against simulated: the iteration, and each task kind's busy time (a mean rank's)",
      static_cast<int>(rows.size()) * 44);
  Json y = field("what", "nominal", "");
  y["sort"] = order;
  Json side = field("side", "nominal", "");
  side["sort"] = kSides;
  double top = 0;
  for (const Row& row : rows) top = std::max({top, row.measured / 1e6, row.simulated / 1e6});
  Json x = field("ms", "quantitative", "time (ms)");
  x["scale"] = padded_domain(0, top);
  Json bar_layer = {{"data", {{"values", bars}}},
                    {"mark", {{"type", "bar"}, {"tooltip", true}}},
                    {"encoding",
                     {{"y", y},
                      {"yOffset", side},
                      {"x", x},
                      {"color", series_colour_encoding("side", "", kSides)}}}};
  Json text_layer = beside(y, "end", "time (ms)", "text");
  text_layer["data"] = {{"values", notes}};
  spec["layer"] = {bar_layer, text_layer};
  return spec;
}

std::string diff_quantity(const std::string& by) {
  if (by == "start") return "start from the iteration's start";
  if (by == "end") return "end from the iteration's start";
  return "busy time";
}

std::int64_t diff_value(const DiffTask& t, const std::string& by) {
  if (by == "start") return t.start_ns;
  if (by == "end") return t.end_ns;
  return t.busy_ns;
}

Json diff_tasks_chart(const DiffReport& r) {
  const std::size_t n = std::min(r.matched.size(), kMaxDiffTasks);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < n; ++i) {
    names.push_back(fmt::format("rank {}: {}", r.matched[i].rank, r.matched[i].task));
  }
  names = unique_names(names);
  Json values = Json::array();
  std::vector<std::string> kinds;
  double lo = 0, hi = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const DiffRow& row = r.matched[i];
    const double m = static_cast<double>(diff_value(*row.measured, r.by));
    const double s = static_cast<double>(diff_value(*row.simulated, r.by));
    const double diff = (s - m) / 1e6;
    lo = std::min(lo, diff);
    hi = std::max(hi, diff);
    if (std::find(kinds.begin(), kinds.end(), row.kind) == kinds.end()) kinds.push_back(row.kind);
    values.push_back({{"task", names[i]},
                      {"kind", row.kind},
                      {"diff", diff},
                      {"end", std::max(diff, 0.0)},
                      {"measured", m / 1e6},
                      {"simulated", s / 1e6},
                      {"text", change_text(m, s)}});
  }
  const std::string quantity = diff_quantity(r.by);
  Json spec = base_spec(
      fmt::format("The {} tasks whose {} differs most: simulated minus measured", n, quantity),
      static_cast<int>(std::max<std::size_t>(1, n)) * 18);
  spec["data"] = {{"values", values}};
  Json y = field("task", "nominal", "");
  y["sort"] = names;
  y["axis"] = {{"labelLimit", 360}};
  const std::string title = fmt::format("difference in {} (ms)", quantity);
  Json x = field("diff", "quantitative", title);
  x["scale"] = padded_domain(lo, hi);
  Json bars = {{"mark", {{"type", "bar"}, {"height", 12}}},
               {"encoding",
                {{"y", y},
                 {"x", x},
                 {"color", series_colour_encoding("kind", "task kind", kinds)},
                 {"tooltip",
                  {field("task", "nominal", "task"),
                   field("measured", "quantitative", "measured " + quantity + " (ms)"),
                   field("simulated", "quantitative", "simulated " + quantity + " (ms)"),
                   field("text", "nominal", "difference")}}}}};
  Json zero = {{"data", {{"values", {{{"x", 0.0}}}}}},
               {"mark", {{"type", "rule"}, {"color", "#444"}}},
               {"encoding", {{"x", field("x", "quantitative", title)}}}};
  spec["layer"] = {bars, beside(y, "end", title, "text"), zero};
  return spec;
}

}  // namespace ssgd::html
