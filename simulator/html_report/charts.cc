#include "simulator/html_report/charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ssgd::sim::html {
namespace {

constexpr int kWidth = 560;

double ms(std::int64_t ns) { return static_cast<double>(ns) / 1e6; }

// The skeleton every chart shares.
Json base_spec(const std::string& title, int height) {
  Json spec;
  spec["$schema"] = "https://vega.github.io/schema/vega-lite/v5.json";
  spec["title"] = title;
  spec["width"] = kWidth;
  spec["height"] = height;
  spec["config"] = {{"font", "sans-serif"}, {"view", {{"stroke", nullptr}}}};
  return spec;
}

Json field(const std::string& name, const std::string& type, const std::string& title) {
  return {{"field", name}, {"type", type}, {"title", title}};
}

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

namespace {

// GPUs on a log-2 axis when they span a factor of 8 or more.
Json gpus_axis(const ScaleReport& scale) {
  std::int64_t lo = scale.single_gpu.gpus, hi = scale.single_gpu.gpus;
  for (const ScaleRow& r : scale.rows) {
    lo = std::min(lo, r.gpus);
    hi = std::max(hi, r.gpus);
  }
  Json x = field("gpus", "quantitative", "GPUs");
  if (lo > 0 && hi >= 8 * lo) x["scale"] = {{"type", "log"}, {"base", 2}};
  return x;
}

Json scale_chart(const ScaleReport& scale, bool speedup) {
  Json values = Json::array();
  // The baseline, unless a row has as many GPUs.
  std::vector<const ScaleRow*> rows;
  for (const ScaleRow& r : scale.rows) rows.push_back(&r);
  if (std::none_of(scale.rows.begin(), scale.rows.end(),
                   [&](const ScaleRow& r) { return r.gpus == scale.single_gpu.gpus; })) {
    rows.push_back(&scale.single_gpu);
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const ScaleRow* a, const ScaleRow* b) { return a->gpus < b->gpus; });
  for (const ScaleRow* r : rows) {
    values.push_back({{"gpus", r->gpus},
                      {"series", "simulated"},
                      {"value", speedup ? r->speedup : r->efficiency}});
  }
  for (const ScaleRow* r : rows) {
    values.push_back({{"gpus", r->gpus},
                      {"series", "ideal"},
                      {"value", speedup ? static_cast<double>(r->gpus) : 1.0}});
  }
  Json spec = base_spec(speedup ? fmt::format("Speedup against GPUs ({} scaling)",
                                              scale.mode.empty() ? "weak" : scale.mode)
                                : fmt::format("Scaling efficiency against GPUs ({} scaling)",
                                              scale.mode.empty() ? "weak" : scale.mode),
                        240);
  spec["data"] = {{"values", values}};
  spec["mark"] = {{"type", "line"}, {"point", true}, {"tooltip", true}};
  Json y = field("value", "quantitative", speedup ? "speedup" : "scaling efficiency");
  if (!speedup) y["axis"] = {{"format", "%"}};
  Json colour = field("series", "nominal", "");
  colour["scale"] = {{"domain", Json::array({"simulated", "ideal"})},
                     {"range", Json::array({"#4c78a8", "#9d9d9d"})}};
  Json dash = field("series", "nominal", "");
  dash["scale"] = {{"domain", Json::array({"simulated", "ideal"})},
                   {"range", Json::array({Json::array(), Json::array({6, 4})})}};
  spec["encoding"] = {{"x", gpus_axis(scale)}, {"y", y}, {"color", colour}, {"strokeDash", dash}};
  return spec;
}

}  // namespace

Json scale_speedup_chart(const ScaleReport& scale) { return scale_chart(scale, true); }
Json scale_efficiency_chart(const ScaleReport& scale) { return scale_chart(scale, false); }

Json optimize_chart(const OptimizeReport& o) {
  Json values = Json::array();
  for (std::size_t i = 0; i < o.curve.size(); ++i) {
    const OptimizePoint& p = o.curve[i];
    // A value tried twice stays two points.
    std::string label = p.value;
    for (std::size_t j = 0; j < i; ++j) {
      if (o.curve[j].value == p.value) {
        label = fmt::format("{} (#{})", p.value, i + 1);
        break;
      }
    }
    values.push_back({{"index", i},
                      {"value", label},
                      {"ms", ms(p.iteration_time_ns)},
                      {"throughput", p.throughput},
                      {"best", i == o.best}});
  }
  Json spec = base_spec(
      fmt::format("Iteration time for each value of {} (in the order tried)", o.param), 240);
  spec["data"] = {{"values", values}};
  Json x = field("value", "ordinal", o.param);
  x["sort"] = nullptr;
  const Json y = field("ms", "quantitative", "iteration time (ms)");
  Json line = {{"mark", {{"type", "line"}, {"point", true}, {"tooltip", true}}},
               {"encoding", {{"x", x}, {"y", y}}}};
  Json best = {{"transform", {{{"filter", "datum.best"}}}},
               {"mark",
                {{"type", "point"},
                 {"shape", "diamond"},
                 {"size", 220},
                 {"filled", true},
                 {"color", "#e45756"},
                 {"tooltip", true}}},
               {"encoding", {{"x", x}, {"y", y}}}};
  Json label = {
      {"transform", {{{"filter", "datum.best"}}}},
      {"mark", {{"type", "text"}, {"dy", -14}, {"color", "#e45756"}, {"fontWeight", "bold"}}},
      {"encoding", {{"x", x}, {"y", y}, {"text", {{"value", "best"}}}}}};
  spec["layer"] = {line, best, label};
  if (o.as_given_ns) {
    spec["layer"].push_back(
        {{"data", {{"values", {{{"ms", ms(*o.as_given_ns)}, {"what", "as given"}}}}}},
         {"mark", {{"type", "rule"}, {"strokeDash", {4, 4}}, {"color", "#9d9d9d"}}},
         {"encoding", {{"y", field("ms", "quantitative", "")}}}});
  }
  return spec;
}

Json sweep_chart(const SweepReport& sweep, int x_key, int colour_key, bool throughput) {
  bool numeric_x = x_key >= 0;
  if (x_key >= 0) {
    for (const SweepPoint& p : sweep.points) {
      numeric_x = numeric_x && p.keys.at(sweep.keys[static_cast<std::size_t>(x_key)]).is_number();
    }
  }
  Json values = Json::array();
  for (const SweepPoint& p : sweep.points) {
    if (p.error) continue;  // no figures to plot; the table shows its error
    Json v = {{"point", p.point}, {"y", throughput ? p.throughput : ms(p.iteration_time_ns)}};
    if (x_key >= 0) {
      const Json& x = p.keys.at(sweep.keys[static_cast<std::size_t>(x_key)]);
      v["x"] = numeric_x ? x : Json(x.is_string() ? x.get<std::string>() : x.dump());
    }
    if (colour_key >= 0) {
      const Json& c = p.keys.at(sweep.keys[static_cast<std::size_t>(colour_key)]);
      v["c"] = c.is_string() ? c.get<std::string>() : c.dump();
    }
    values.push_back(std::move(v));
  }
  const std::string x_title = x_key >= 0 ? sweep.keys[static_cast<std::size_t>(x_key)] : "point";
  const std::string y_title = throughput ? "throughput (samples/s)" : "iteration time (ms)";
  Json spec = base_spec(
      fmt::format("{} against {}", throughput ? "Throughput" : "Iteration time", x_title), 240);
  spec["data"] = {{"values", values}};
  spec["mark"] = {{"type", "line"}, {"point", true}, {"tooltip", true}};
  Json x = x_key < 0 ? field("point", "ordinal", "point")
                     : field("x", numeric_x ? "quantitative" : "ordinal", x_title);
  if (x_key >= 0 && !numeric_x) x["sort"] = nullptr;
  if (numeric_x) {
    bool whole = true;
    for (const SweepPoint& p : sweep.points) {
      whole = whole && p.keys.at(sweep.keys[static_cast<std::size_t>(x_key)]).is_number_integer();
    }
    if (whole) x["axis"] = {{"tickMinStep", 1}, {"format", "d"}};
  }
  spec["encoding"] = {{"x", x}, {"y", field("y", "quantitative", y_title)}};
  if (colour_key >= 0) {
    Json c = field("c", "nominal", sweep.keys[static_cast<std::size_t>(colour_key)]);
    c["sort"] = nullptr;
    spec["encoding"]["color"] = c;
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

}  // namespace ssgd::sim::html
