#include "presentation/html/charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "presentation/html/chart_spec.h"
#include "presentation/html/html_text.h"
#include "presentation/html/quantity.h"

namespace ssgd::html {
namespace {

// The parts of a breakdown in the order they stack, with fixed colours.
const std::vector<std::string> kParts = {"compute", "exposed communication", "I/O", "idle"};
const std::vector<std::string> kPartColours = {"#4c78a8", "#e45756", "#72b7b2", "#bab0ac"};

}  // namespace

Json breakdown_chart(const std::vector<LabelledRun>& runs) {
  Json values = Json::array();
  for (const LabelledRun& r : runs) {
    const Breakdown& b = r.run->breakdown;
    const std::int64_t parts[] = {b.compute_ns, b.exposed_comm_ns, b.io_ns, b.idle_ns};
    for (std::size_t i = 0; i < kParts.size(); ++i) {
      values.push_back({{"run", r.label}, {"part", kParts[i]}, {"order", i}, {"ms", ms(parts[i])}});
    }
  }
  Json spec = base_spec("Iteration time breakdown (per iteration, mean over ranks)",
                        static_cast<int>(std::max<std::size_t>(1, runs.size())) * 36);
  spec["data"] = {{"values", values}};
  spec["mark"] = {{"type", "bar"}, {"tooltip", true}};
  Json run = field("run", "nominal", "");
  run["sort"] = nullptr;
  run["axis"] = {{"labelLimit", 480}};
  Json x = field("ms", "quantitative", "time per iteration (ms)");
  x["stack"] = "zero";
  Json colour = field("part", "nominal", "");
  colour["scale"] = {{"domain", kParts}, {"range", kPartColours}};
  colour["legend"] = {{"orient", "bottom"}};
  spec["encoding"] = {
      {"y", run}, {"x", x}, {"color", colour}, {"order", field("order", "ordinal", "")}};
  return spec;
}

Json iteration_times_chart(const SimulateRun& run) {
  Json values = Json::array();
  for (std::size_t i = 0; i < run.iteration_times_ns.size(); ++i) {
    values.push_back({{"iteration", i}, {"ms", ms(run.iteration_times_ns[i])}});
  }
  Json spec = base_spec("Time of each iteration (the first counts from time 0)", 160);
  spec["data"] = {{"values", values}};
  spec["mark"] = {{"type", "bar"}, {"tooltip", true}};
  spec["encoding"] = {{"x", field("iteration", "ordinal", "iteration")},
                      {"y", field("ms", "quantitative", "time (ms)")}};
  return spec;
}

Json collectives_chart(const SimulateRun& run) {
  Json values = Json::array();
  for (std::size_t i = 0; i < run.collectives.size(); ++i) {
    const CollectiveRow& c = run.collectives[i];
    values.push_back({{"index", i},
                      {"group", c.group},
                      {"bytes", c.bytes},
                      {"algorithm", c.algorithm.empty() ? "?" : c.algorithm},
                      {"ms", ms(c.time_ns)}});
  }
  Json spec = base_spec("Collectives of the last iteration, in issue order", 180);
  spec["data"] = {{"values", values}};
  spec["mark"] = {{"type", "bar"}, {"tooltip", true}};
  Json x = field("index", "ordinal", "collective (issue order)");
  x["axis"] = {{"labels", run.collectives.size() <= 40}, {"ticks", run.collectives.size() <= 40}};
  spec["encoding"] = {{"x", x},
                      {"y", field("ms", "quantitative", "time (ms)")},
                      {"color", field("algorithm", "nominal", "algorithm")}};
  return spec;
}

Json link_kinds_chart(const SimulateRun& run) {
  Json values = Json::array();
  for (const LinkKindRow& k : run.link_kinds) {
    values.push_back({{"kind", k.kind}, {"measure", "mean"}, {"utilisation", k.mean_utilisation}});
    values.push_back({{"kind", k.kind}, {"measure", "max"}, {"utilisation", k.max_utilisation}});
  }
  Json spec = base_spec("Link utilisation by kind (bytes / capacity x simulated time)",
                        static_cast<int>(std::max<std::size_t>(1, run.link_kinds.size())) * 40);
  spec["data"] = {{"values", values}};
  spec["mark"] = {{"type", "bar"}, {"tooltip", true}};
  Json y = field("kind", "nominal", "link kind");
  y["sort"] = nullptr;
  Json x = field("utilisation", "quantitative", "utilisation");
  x["axis"] = {{"format", "%"}};
  Json measure = field("measure", "nominal", "");
  measure["sort"] = Json::array({"mean", "max"});
  spec["encoding"] = {{"y", y}, {"x", x}, {"yOffset", measure}, {"color", measure}};
  return spec;
}

Json critical_path_chart(const SimulateRun& run, std::int64_t iterations) {
  const CriticalPath& path = *run.critical_path;
  const double per = static_cast<double>(std::max<std::int64_t>(1, iterations));
  Json values = Json::array();
  std::size_t order = 0;
  auto add = [&](const std::string& kind, std::int64_t ns) {
    values.push_back({{"bar", "critical path"},
                      {"kind", kind},
                      {"order", order++},
                      {"ms", static_cast<double>(ns) / 1e6 / per}});
  };
  for (const auto& [kind, ns] : path.time_by_kind_ns) add(kind, ns);
  add("gaps", path.gaps_ns);
  Json spec = base_spec(
      fmt::format("Critical path by task kind, per iteration (mean over {})",
                  iterations == 1 ? "1 iteration" : fmt::format("{} iterations", iterations)),
      40);
  spec["data"] = {{"values", values}};
  spec["mark"] = {{"type", "bar"}, {"tooltip", true}};
  Json x = field("ms", "quantitative", "time on the path per iteration (ms)");
  x["stack"] = "zero";
  Json colour = field("kind", "nominal", "");
  colour["sort"] = nullptr;
  colour["legend"] = {{"orient", "bottom"}};
  spec["encoding"] = {{"y", field("bar", "nominal", "")},
                      {"x", x},
                      {"color", colour},
                      {"order", field("order", "ordinal", "")}};
  return spec;
}

Json shared_fabric_chart(const SharedFabric& fabric) {
  Json values = Json::array();
  std::vector<std::string> jobs;
  for (const SharedJob& j : fabric.jobs) {
    // Two jobs of one name stay two bars.
    std::string name = j.name;
    while (std::find(jobs.begin(), jobs.end(), name) != jobs.end()) name += "'";
    jobs.push_back(name);
    values.push_back({{"job", name},
                      {"kind", j.kind.empty() ? "?" : j.kind},
                      {"slowdown", j.slowdown},
                      {"text", format_fixed(j.slowdown, 2) + "x"},
                      {"alone_ms", ms(j.alone_ns)},
                      {"shared_ms", ms(j.shared_ns)}});
  }
  Json spec = base_spec("Slowdown of each job on the shared fabric (its time shared / alone)",
                        static_cast<int>(std::max<std::size_t>(1, jobs.size())) * 30);
  spec["data"] = {{"values", values}};
  Json y = field("job", "nominal", "job");
  y["sort"] = jobs;
  Json x = field("slowdown", "quantitative", "slowdown (shared / alone)");
  Json bars = {{"mark", {{"type", "bar"}, {"tooltip", true}}},
               {"encoding",
                {{"y", y},
                 {"x", x},
                 {"color", series_colour_encoding("kind", "job kind", {"training", "traffic"})}}}};
  Json text = {{"mark", {{"type", "text"}, {"align", "left"}, {"dx", 4}}},
               {"encoding", {{"y", y}, {"x", x}, {"text", {{"field", "text"}}}}}};
  Json one = {{"data", {{"values", {{{"x", 1.0}}}}}},
              {"mark", {{"type", "rule"}, {"strokeDash", {4, 4}}, {"color", kReferenceColour}}},
              {"encoding", {{"x", {{"field", "x"}, {"type", "quantitative"}}}}}};
  spec["layer"] = {bars, text, one};
  return spec;
}

namespace {

// GPUs on a log-2 axis when they span a factor of 8 or more.
Json gpus_axis(const std::vector<std::int64_t>& gpus) {
  const auto [lo, hi] = std::minmax_element(gpus.begin(), gpus.end());
  Json x = field("gpus", "quantitative", "GPUs");
  if (lo != gpus.end() && *lo > 0 && *hi >= 8 * *lo) x["scale"] = {{"type", "log"}, {"base", 2}};
  return x;
}

Json scale_chart(const std::vector<LabelledScale>& scales, bool speedup) {
  const bool one = scales.size() == 1;
  const std::string ideal = speedup ? "ideal (speedup = GPUs)" : "ideal (100%)";
  Json values = Json::array();
  std::vector<std::int64_t> all_gpus;
  std::vector<std::string> series;
  for (const LabelledScale& s : scales) {
    const std::string name = one ? "simulated" : s.label;
    series.push_back(name);
    // The baseline, unless a row has as many GPUs.
    std::vector<const ScaleRow*> rows;
    for (const ScaleRow& r : s.scale->rows) rows.push_back(&r);
    if (std::none_of(s.scale->rows.begin(), s.scale->rows.end(),
                     [&](const ScaleRow& r) { return r.gpus == s.scale->single_gpu.gpus; })) {
      rows.push_back(&s.scale->single_gpu);
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const ScaleRow* a, const ScaleRow* b) { return a->gpus < b->gpus; });
    for (const ScaleRow* r : rows) {
      values.push_back({{"gpus", r->gpus},
                        {"series", name},
                        {"value", speedup ? r->speedup : r->efficiency},
                        {"iteration_ms", ms(r->iteration_time_ns)}});
      if (std::find(all_gpus.begin(), all_gpus.end(), r->gpus) == all_gpus.end())
        all_gpus.push_back(r->gpus);
    }
  }
  std::sort(all_gpus.begin(), all_gpus.end());
  for (std::int64_t g : all_gpus) {
    values.push_back(
        {{"gpus", g}, {"series", ideal}, {"value", speedup ? static_cast<double>(g) : 1.0}});
  }
  std::string mode = scales.front().scale->mode.empty() ? "weak" : scales.front().scale->mode;
  for (const LabelledScale& s : scales) {
    if ((s.scale->mode.empty() ? "weak" : s.scale->mode) != mode) mode.clear();
  }
  const std::string what = speedup ? "Speedup against GPUs" : "Scaling efficiency against GPUs";
  Json spec = base_spec(mode.empty() ? what : fmt::format("{} ({} scaling)", what, mode), 260);
  spec["data"] = {{"values", values}};
  spec["mark"] = {{"type", "line"}, {"point", true}, {"tooltip", true}};
  Json y = field("value", "quantitative", speedup ? "speedup" : "scaling efficiency");
  if (!speedup) y["axis"] = {{"format", "%"}};
  std::vector<std::string> domain = series;
  domain.push_back(ideal);
  Json colour = series_colour_encoding("series", "", domain);
  colour["scale"]["range"].back() = kReferenceColour;
  Json dash_range = Json::array();
  for (std::size_t i = 0; i < series.size(); ++i) dash_range.push_back(Json::array());
  dash_range.push_back({6, 4});
  Json dash = field("series", "nominal", "");
  dash["scale"] = {{"domain", domain}, {"range", dash_range}};
  dash["sort"] = nullptr;
  dash["legend"] = colour["legend"];  // one legend of both
  spec["encoding"] = {
      {"x", gpus_axis(all_gpus)}, {"y", y}, {"color", colour}, {"strokeDash", dash}};
  return spec;
}

}  // namespace

Json scale_speedup_chart(const std::vector<LabelledScale>& scales) {
  return scale_chart(scales, true);
}
Json scale_efficiency_chart(const std::vector<LabelledScale>& scales) {
  return scale_chart(scales, false);
}

Json optimize_chart(const std::vector<LabelledOptimize>& list) {
  const bool one = list.size() == 1;
  const std::string& param = list.front().optimize->param;
  // A number axis when every value is a quantity of one kind.
  std::optional<QuantityKind> kind;
  bool numeric = true;
  std::vector<double> bases;
  for (const LabelledOptimize& o : list) {
    for (const OptimizePoint& p : o.optimize->curve) {
      const std::optional<Quantity> q = parse_quantity(p.value);
      if (!q || (kind && *kind != q->kind)) {
        numeric = false;
        break;
      }
      kind = q->kind;
      bases.push_back(q->base);
    }
  }
  const QuantityAxis axis = numeric ? quantity_axis(*kind, bases) : QuantityAxis{};
  Json values = Json::array();
  std::vector<std::string> domain;  // the values' names in the order first tried
  std::vector<std::string> series;
  for (const LabelledOptimize& o : list) {
    series.push_back(o.label);
    const auto& curve = o.optimize->curve;
    for (std::size_t i = 0; i < curve.size(); ++i) {
      const OptimizePoint& p = curve[i];
      Json v = {{"series", o.label},
                {"value", p.value},
                {"ms", ms(p.iteration_time_ns)},
                {"throughput", p.throughput},
                {"best", i == o.optimize->best}};
      if (numeric) {
        const Quantity q = *parse_quantity(p.value);
        v["x"] = q.base / axis.divisor;
        v["shown"] = quantity_text(q);
      } else {
        // A value tried twice in one report stays two points.
        std::string name = p.value;
        for (std::size_t j = 0; j < i; ++j) {
          if (curve[j].value == p.value) {
            name = fmt::format("{} (#{})", p.value, i + 1);
            break;
          }
        }
        v["x"] = name;
        if (std::find(domain.begin(), domain.end(), name) == domain.end()) domain.push_back(name);
      }
      values.push_back(std::move(v));
    }
  }
  Json spec = base_spec(
      numeric ? fmt::format("Iteration time against {}", param)
              : fmt::format("Iteration time for each value of {} (in the order tried)", param),
      260);
  spec["data"] = {{"values", values}};
  Json x = field("x", numeric ? "quantitative" : "ordinal",
                 axis.unit.empty() ? param : fmt::format("{} ({})", param, axis.unit));
  if (numeric) {
    const auto [lo, hi] = std::minmax_element(bases.begin(), bases.end());
    double smallest_positive = 0;
    for (double b : bases) {
      if (b > 0 && (smallest_positive == 0 || b < smallest_positive)) smallest_positive = b;
    }
    const double base = *kind == QuantityKind::kSize ? 2 : 10;
    const bool wide = smallest_positive > 0 && *hi >= 16 * smallest_positive;
    if (*lo > 0 && wide) {
      x["scale"] = {{"type", "log"}, {"base", base}};
    } else if (*lo == 0 && wide) {
      // 0 and a wide range: a log-like axis that has room for 0.
      x["scale"] = {{"type", "symlog"}, {"constant", smallest_positive / axis.divisor}};
    }
    if (wide) {
      // Ticks at the powers of the base (and 0): 0, 1, 2, 4, ... 256 MiB.
      Json ticks = Json::array();
      if (*lo == 0) ticks.push_back(0);
      const double top = *hi / axis.divisor;
      double t =
          std::pow(base, std::floor(std::log(smallest_positive / axis.divisor) / std::log(base)));
      std::vector<double> powers;
      for (; t <= top * 1.0001 && powers.size() < 64; t *= base) powers.push_back(t);
      const std::size_t step = (powers.size() + 11) / 12;  // at most 12 labels
      for (std::size_t i = 0; i < powers.size(); i += step) ticks.push_back(powers[i]);
      x["axis"] = {{"values", ticks}};
    }
  } else {
    x["sort"] = domain;
  }
  Json y = field("ms", "quantitative", "iteration time (ms)");
  y["scale"] = {{"zero", false}};
  Json tooltip =
      Json::array({field("series", "nominal", "report"), field("value", "nominal", param),
                   field("ms", "quantitative", "iteration time (ms)"),
                   field("throughput", "quantitative", "samples/s")});
  if (numeric) tooltip.insert(tooltip.begin() + 2, field("shown", "nominal", "that is"));
  if (one) tooltip.erase(tooltip.begin());
  Json colour = series_colour_encoding("series", "", series, !one);
  Json line = {{"mark", {{"type", "line"}, {"point", true}}},
               {"encoding", {{"x", x}, {"y", y}, {"color", colour}, {"tooltip", tooltip}}}};
  Json best_mark = {{"type", "point"}, {"shape", "diamond"}, {"size", 220}, {"filled", true}};
  Json best_encoding = {{"x", x}, {"y", y}, {"tooltip", tooltip}};
  if (one) {
    best_mark["color"] = kBestColour;
  } else {
    best_mark["stroke"] = "#222";
    best_encoding["color"] = colour;
  }
  Json best = {{"transform", {{{"filter", "datum.best"}}}},
               {"mark", best_mark},
               {"encoding", best_encoding}};
  spec["layer"] = {line, best};
  if (one) {
    spec["layer"].push_back(
        {{"transform", {{{"filter", "datum.best"}}}},
         {"mark", {{"type", "text"}, {"dy", -14}, {"color", kBestColour}, {"fontWeight", "bold"}}},
         {"encoding", {{"x", x}, {"y", y}, {"text", {{"value", "best"}}}}}});
  }
  Json given = Json::array();
  for (const LabelledOptimize& o : list) {
    if (o.optimize->as_given_ns)
      given.push_back({{"series", o.label}, {"ms", ms(*o.optimize->as_given_ns)}});
  }
  if (!given.empty()) {
    Json rule = {{"data", {{"values", given}}},
                 {"mark", {{"type", "rule"}, {"strokeDash", {4, 4}}}},
                 {"encoding", {{"y", field("ms", "quantitative", "")}}}};
    if (one) {
      rule["mark"]["color"] = kReferenceColour;
    } else {
      rule["encoding"]["color"] = colour;
    }
    spec["layer"].push_back(rule);
  }
  return spec;
}

Json timeline_chart(const TimelineView& timeline) {
  // The kinds in the order an iteration runs them, then any other.
  std::vector<std::string> kinds = {"io", "h2d", "forward", "backward", "comm", "update"};
  for (const TimelineBar& b : timeline.bars) {
    if (std::find(kinds.begin(), kinds.end(), b.kind) == kinds.end()) kinds.push_back(b.kind);
  }
  Json values = Json::array();
  for (const TimelineBar& b : timeline.bars) {
    values.push_back({{"lane", b.lane},
                      {"kind", b.kind},
                      {"name", b.name},
                      {"start", ms(b.start_ns)},
                      {"end", ms(b.end_ns)},
                      {"ms", ms(b.end_ns - b.start_ns)}});
  }
  Json spec = base_spec(fmt::format("Iteration {}, from its start", timeline.iteration),
                        static_cast<int>(std::max<std::size_t>(1, timeline.lanes.size())) * 20);
  spec["data"] = {{"values", values}};
  spec["mark"] = {{"type", "bar"}, {"tooltip", true}};
  Json lane = field("lane", "nominal", "");
  lane["sort"] = timeline.lanes;
  lane["scale"] = {{"domain", timeline.lanes}};
  lane["axis"] = {{"labelLimit", 320}};
  Json colour = field("kind", "nominal", "task kind");
  colour["scale"] = {{"domain", kinds}};
  colour["legend"] = {{"orient", "bottom"}};
  spec["encoding"] = {
      {"y", lane},
      {"x", field("start", "quantitative", "time from the iteration's start (ms)")},
      {"x2", {{"field", "end"}}},
      {"color", colour},
      {"tooltip",
       {field("name", "nominal", "task"), field("kind", "nominal", "kind"),
        field("lane", "nominal", "lane"), field("start", "quantitative", "start (ms)"),
        field("end", "quantitative", "end (ms)"), field("ms", "quantitative", "duration (ms)")}}};
  return spec;
}

}  // namespace ssgd::html
