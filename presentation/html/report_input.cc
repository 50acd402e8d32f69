#include "presentation/html/report_input.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "common/gzip_stream.h"
#include "common/input_file.h"
#include "common/json_depth.h"
#include "common/text_file.h"
#include "common/work_context.h"

namespace ssgd::html {
namespace {

constexpr std::string_view kWhatItReads =
    "expected a report of ssgd simulate (ssgd_report_version), ssgd scale (rows, single_gpu), "
    "ssgd optimize (param, curve), ssgd dataset verify (format ssgd.dataset.verify) or ssgd diff "
    "(measured, matched), a sweep's JSON lines (ssgd_sweep_version on the first line) or a "
    "timeline of ssgd simulate --timeline (traceEvents)";

// The 1-based line of byte `offset` in `text`.
std::int64_t line_of(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<std::int64_t>(std::count(
                 text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

// nlohmann's message without its "[json.exception.parse_error.101] " tag.
std::string parse_message(const Json::exception& e) {
  std::string what = e.what();
  const std::size_t tag_end = what.find("] ");
  if (what.rfind("[json.exception", 0) == 0 && tag_end != std::string::npos)
    what.erase(0, tag_end + 2);
  return what;
}

// Parses `text`, one JSON value, whose first byte is at `line` of `file`.
Json parse_json(const std::string& file, std::string_view text, std::int64_t first_line,
                bool one_line) {
  require_json_depth(text, file, one_line ? std::optional<std::int64_t>(first_line) : std::nullopt);
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    const std::int64_t line =
        one_line ? first_line : first_line - 1 + line_of(text, e.byte == 0 ? 0 : e.byte - 1);
    throw InputError(InputLocation{file, line, std::nullopt, ""},
                     "not valid JSON: " + parse_message(e));
  } catch (const Json::exception& e) {
    // A number out of range ("1e400"), which nlohmann reports without a place.
    throw InputError(
        InputLocation{file, one_line ? std::optional(first_line) : std::nullopt, std::nullopt, ""},
        "not valid JSON: " + parse_message(e));
  }
}

// ---------------------------------------------------------------- simulate

Breakdown read_breakdown(const JsonFields& f, const Json& v, const std::string& base) {
  Breakdown b;
  b.compute_ns = f.count(v, base, "compute_ns");
  b.exposed_comm_ns = f.count(v, base, "exposed_comm_ns");
  b.io_ns = f.count(v, base, "io_ns");
  b.idle_ns = f.count(v, base, "idle_ns");
  return b;
}

SimulateRun read_simulate(const JsonFields& f, const Json& r) {
  SimulateRun run;
  run.input_path = f.opt_text(r, "", "input.path");
  run.model = f.opt_text(r, "", "input.model");
  run.workers = f.count(r, "", "workers");
  run.iteration_time_ns = f.count(r, "", "iteration_time_ns");
  if (const Json* times = f.opt_array(r, "", "iteration_times_ns")) {
    for (std::size_t i = 0; i < times->size(); ++i) {
      run.iteration_times_ns.push_back(
          f.as_count((*times)[i], JsonFields::element("iteration_times_ns", i)));
    }
  }
  run.throughput = f.number(r, "", "throughput_samples_per_s");
  run.speedup = f.opt_number(r, "", "speedup");
  run.efficiency = f.opt_number(r, "", "scaling_efficiency");
  run.single_worker_ns = f.opt_count(r, "", "single_worker_iteration_time_ns");
  const Json* breakdown = f.find(r, "", "breakdown");
  if (breakdown == nullptr) f.fail("breakdown", "missing");
  run.breakdown = read_breakdown(f, *breakdown, "breakdown");
  run.comm_model = f.opt_text(r, "", "communication.model");
  run.network_model = f.opt_text(r, "", "communication.network_model");
  run.collectives_per_iteration = f.opt_count(r, "", "communication.collectives_per_iteration");
  run.comm_per_iteration_ns = f.opt_count(r, "", "communication.comm_per_iteration_ns");
  if (const Json* list = f.opt_array(r, "", "communication.collectives_last_iteration")) {
    const std::string base = "communication.collectives_last_iteration";
    for (std::size_t i = 0; i < list->size(); ++i) {
      const Json& c = (*list)[i];
      const std::string at = JsonFields::element(base, i);
      CollectiveRow row;
      row.group = f.count(c, at, "group");
      row.bytes = f.count(c, at, "bytes");
      row.algorithm = f.opt_text(c, at, "algorithm");
      row.time_ns = f.count(c, at, "time_ns");
      row.algbw = f.opt_number(c, at, "algbw_bytes_per_s").value_or(0);
      row.busbw = f.opt_number(c, at, "busbw_bytes_per_s").value_or(0);
      row.replayed = f.opt_flag(c, at, "replayed").value_or(false);
      run.collectives.push_back(std::move(row));
    }
  }
  if (const Json* list = f.opt_array(r, "", "links.busiest")) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      const Json& l = (*list)[i];
      const std::string at = JsonFields::element("links.busiest", i);
      run.busiest_links.push_back({f.text(l, at, "link"), f.opt_text(l, at, "kind"),
                                   f.opt_number(l, at, "capacity_bytes_per_s").value_or(0),
                                   f.opt_number(l, at, "bytes").value_or(0),
                                   f.number(l, at, "utilisation")});
    }
  }
  if (const Json* list = f.opt_array(r, "", "links.by_kind")) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      const Json& l = (*list)[i];
      const std::string at = JsonFields::element("links.by_kind", i);
      run.link_kinds.push_back({f.text(l, at, "kind"), f.opt_count(l, at, "links").value_or(0),
                                f.opt_number(l, at, "bytes").value_or(0),
                                f.number(l, at, "mean_utilisation"),
                                f.number(l, at, "max_utilisation")});
    }
  }
  if (const Json* cp = f.opt_object(r, "", "critical_path")) {
    CriticalPath path;
    path.length_ns = f.count(*cp, "critical_path", "length_ns");
    path.tasks = f.opt_count(*cp, "critical_path", "tasks").value_or(0);
    path.gaps_ns = f.opt_count(*cp, "critical_path", "gaps_ns").value_or(0);
    if (const Json* kinds = f.opt_object(*cp, "critical_path", "time_by_kind_ns")) {
      for (const auto& [kind, ns] : kinds->items()) {
        path.time_by_kind_ns.emplace_back(kind,
                                          f.as_count(ns, "critical_path.time_by_kind_ns." + kind));
      }
    }
    // In the order an iteration runs them; kinds this ssgd does not know after.
    static const std::vector<std::string_view> kOrder = {"io",       "h2d",  "forward",
                                                         "backward", "comm", "update"};
    const auto rank = [](const std::string& kind) {
      return std::find(kOrder.begin(), kOrder.end(), kind) - kOrder.begin();
    };
    std::stable_sort(path.time_by_kind_ns.begin(), path.time_by_kind_ns.end(),
                     [&](const auto& a, const auto& b) { return rank(a.first) < rank(b.first); });
    run.critical_path = std::move(path);
  }
  if (const Json* fabric = f.opt_object(r, "", "shared_fabric")) {
    SharedFabric sf;
    sf.platform_nodes = f.opt_count(*fabric, "shared_fabric", "platform_nodes");
    const Json& jobs = f.array(*fabric, "shared_fabric", "jobs");
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const Json& j = jobs[i];
      const std::string at = JsonFields::element("shared_fabric.jobs", i);
      f.require_object(j, at);
      SharedJob job;
      job.name = f.text(j, at, "name");
      job.kind = f.opt_text(j, at, "kind");
      job.measure = f.opt_text(j, at, "measure");
      job.detail = f.opt_text(j, at, "detail");
      job.first_node = f.opt_count(j, at, "first_node").value_or(0);
      job.nodes = f.opt_count(j, at, "nodes").value_or(0);
      job.workers = f.opt_count(j, at, "workers").value_or(0);
      job.count = f.opt_count(j, at, "count").value_or(0);
      job.alone_ns = f.count(j, at, "alone_ns");
      job.shared_ns = f.count(j, at, "shared_ns");
      job.slowdown = f.number(j, at, "slowdown");
      if (job.slowdown < 0) {
        f.fail(JsonFields::join(at, "slowdown"),
               fmt::format("must not be negative, got {}", job.slowdown));
      }
      sf.jobs.push_back(std::move(job));
    }
    run.shared_fabric = std::move(sf);
  }
  if (const Json* scenario = f.opt_object(r, "", "scenario")) {
    run.scenario = *scenario;
    run.policy = f.opt_text(*scenario, "scenario", "policy.overlap");
    run.iterations = f.opt_count(*scenario, "scenario", "iterations");
  }
  return run;
}

// ---------------------------------------------------------------- scale

ScaleRow read_scale_row(const JsonFields& f, const Json& v, const std::string& at) {
  f.require_object(v, at);
  ScaleRow row;
  row.gpus = f.count(v, at, "gpus");
  if (row.gpus == 0) f.fail(JsonFields::join(at, "gpus"), "must be greater than zero, got 0");
  row.nodes = f.opt_count(v, at, "nodes").value_or(0);
  row.gpus_per_node = f.opt_count(v, at, "gpus_per_node").value_or(0);
  row.per_gpu_batch = f.opt_count(v, at, "per_gpu_batch").value_or(0);
  row.global_batch = f.opt_count(v, at, "global_batch").value_or(0);
  row.iteration_time_ns = f.count(v, at, "iteration_time_ns");
  row.throughput = f.number(v, at, "throughput_samples_per_s");
  row.speedup = f.number(v, at, "speedup");
  row.efficiency = f.number(v, at, "scaling_efficiency");
  row.exposed_comm_ns = f.opt_count(v, at, "exposed_comm_ns");
  return row;
}

// `scenario_sets` of a scale or optimize report: strings, or nothing in a
// report written before they were recorded.
std::vector<std::string> read_scenario_sets(const JsonFields& f, const Json& r) {
  std::vector<std::string> sets;
  const Json* list = f.opt_array(r, "", "scenario_sets");
  if (list == nullptr) return sets;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Json& v = (*list)[i];
    if (!v.is_string()) {
      f.fail(JsonFields::element("scenario_sets", i),
             "expected a string KEY=VALUE, got " + JsonFields::describe(v));
    }
    sets.push_back(v.get<std::string>());
  }
  return sets;
}

ScaleReport read_scale(const JsonFields& f, const Json& r) {
  ScaleReport s;
  s.input_path = f.opt_text(r, "", "input.path");
  s.model = f.opt_text(r, "", "input.model");
  s.scenario_file = f.opt_text(r, "", "scenario_file");
  s.scenario_sets = read_scenario_sets(f, r);
  s.mode = f.opt_text(r, "", "mode");
  s.policy = f.opt_text(r, "", "policy");
  s.iterations = f.opt_count(r, "", "iterations");
  s.single_gpu = read_scale_row(f, *f.find(r, "", "single_gpu"), "single_gpu");
  const Json& rows = f.array(r, "", "rows");
  if (rows.empty()) f.fail("rows", "no rows: nothing to plot");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    s.rows.push_back(read_scale_row(f, rows[i], JsonFields::element("rows", i)));
  }
  s.settings = r;
  s.settings.erase("rows");
  return s;
}

// ---------------------------------------------------------------- optimize

OptimizeReport read_optimize(const JsonFields& f, const Json& r) {
  OptimizeReport o;
  o.param = f.text(r, "", "param");
  o.input = f.opt_text(r, "", "input");
  o.scenario_file = f.opt_text(r, "", "scenario_file");
  o.scenario_sets = read_scenario_sets(f, r);
  o.as_given_ns = f.opt_count(r, "", "as_given_iteration_time_ns");
  o.gpu_memory_bytes = f.opt_count(r, "", "gpu_memory_bytes");
  const Json& curve = f.array(r, "", "curve");
  if (curve.empty()) f.fail("curve", "no candidates: nothing to plot");
  for (std::size_t i = 0; i < curve.size(); ++i) {
    const Json& p = curve[i];
    const std::string at = JsonFields::element("curve", i);
    f.require_object(p, at);
    OptimizePoint point;
    const Json* value = f.find(p, at, "value");
    if (value == nullptr) f.fail(JsonFields::join(at, "value"), "missing");
    // The value as --set took it: a string; a number is shown as written.
    if (value->is_string()) {
      point.value = value->get<std::string>();
    } else if (value->is_number()) {
      point.value = value->dump();
    } else {
      f.fail(JsonFields::join(at, "value"),
             "expected a string, got " + JsonFields::describe(*value));
    }
    point.iteration_time_ns = f.count(p, at, "iteration_time_ns");
    point.throughput = f.number(p, at, "throughput_samples_per_s");
    point.collectives = f.opt_count(p, at, "collectives_per_iteration");
    point.exposed_comm_ns = f.opt_count(p, at, "exposed_comm_ns");
    o.curve.push_back(std::move(point));
  }
  const Json* best = f.find(r, "", "best.value");
  if (best == nullptr) f.fail("best.value", "missing");
  const std::string best_value = best->is_number() ? best->dump() : f.text(r, "", "best.value");
  const auto it = std::find_if(o.curve.begin(), o.curve.end(),
                               [&](const OptimizePoint& p) { return p.value == best_value; });
  if (it == o.curve.end()) {
    f.fail("best.value", fmt::format("'{}' is not the value of any point of curve[]", best_value));
  }
  o.best = static_cast<std::size_t>(it - o.curve.begin());
  return o;
}

// ---------------------------------------------------------------- sweep

SweepPoint read_sweep_line(const JsonFields& f, const Json& v, std::size_t index) {
  f.require_object(v, "");
  const Json* version = f.find(v, "", "ssgd_sweep_version");
  if (version == nullptr) f.fail("ssgd_sweep_version", "missing");
  if (f.as_count(*version, "ssgd_sweep_version") != kSweepVersion) {
    f.fail("ssgd_sweep_version",
           fmt::format("version {}; this ssgd reads version {}", version->dump(), kSweepVersion));
  }
  SweepPoint p;
  p.point = f.count(v, "", "point");
  if (p.point != static_cast<std::int64_t>(index)) {
    f.fail("point",
           fmt::format("expected point {} (the lines are in point order), got {}", index, p.point));
  }
  const Json& keys = f.object(v, "", "keys");
  for (const auto& [key, value] : keys.items()) {
    if (value.is_object() || value.is_array()) {
      f.fail("keys." + key,
             "expected a string, number or true/false, got " + JsonFields::describe(value));
    }
  }
  p.keys = keys;
  const Json* figures = f.opt_object(v, "", "figures");
  if (figures == nullptr) {
    const Json* error = f.find(v, "", "error");
    if (error == nullptr) f.fail("figures", "missing (and no error for the point)");
    if (!error->is_string()) f.fail("error", "expected the point's error message as a string");
    p.error = error->get<std::string>();
    return p;
  }
  const Json& g = *figures;
  const std::string at = "figures";
  // The figures' names hold dots ("breakdown.compute_ns"): look them up as
  // whole keys, not as paths.
  auto raw = [&](std::string_view key) -> const Json* {
    const auto it = g.find(std::string(key));
    return it == g.end() || it->is_null() ? nullptr : &*it;
  };
  auto count = [&](std::string_view key) {
    const Json* x = raw(key);
    if (x == nullptr) f.fail(JsonFields::join(at, key), "missing");
    return f.as_count(*x, JsonFields::join(at, key));
  };
  auto opt_count = [&](std::string_view key) -> std::optional<std::int64_t> {
    const Json* x = raw(key);
    if (x == nullptr) return std::nullopt;
    return f.as_count(*x, JsonFields::join(at, key));
  };
  auto opt_number = [&](std::string_view key) -> std::optional<double> {
    const Json* x = raw(key);
    if (x == nullptr) return std::nullopt;
    return f.as_number(*x, JsonFields::join(at, key));
  };
  p.iteration_time_ns = count("iteration_time_ns");
  p.workers = count("workers");
  const std::optional<double> throughput = opt_number("throughput_samples_per_s");
  if (!throughput) f.fail("figures.throughput_samples_per_s", "missing");
  p.throughput = *throughput;
  p.speedup = opt_number("speedup");
  p.efficiency = opt_number("scaling_efficiency");
  p.breakdown.compute_ns = count("breakdown.compute_ns");
  p.breakdown.exposed_comm_ns = count("breakdown.exposed_comm_ns");
  p.breakdown.io_ns = count("breakdown.io_ns");
  p.breakdown.idle_ns = count("breakdown.idle_ns");
  p.comm_per_iteration_ns = opt_count("communication.comm_per_iteration_ns");
  p.critical_path_ns = opt_count("critical_path.length_ns");
  return p;
}

std::vector<std::string> key_names(const Json& keys) {
  std::vector<std::string> names;
  for (const auto& [key, value] : keys.items()) names.push_back(key);
  return names;
}

SweepReport read_sweep(const std::string& file, std::string_view text) {
  SweepReport s;
  std::int64_t line = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    ++line;
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view body = text.substr(start, end - start);
    start = end + 1;
    if (body.find_first_not_of(" \t\r") == std::string_view::npos) continue;  // blank
    const JsonFields f(file, line);
    if (s.points.size() == kMaxSweepPoints) {
      f.fail("", fmt::format("more than {} points; ssgd report plots at most that many",
                             kMaxSweepPoints));
    }
    const Json v = parse_json(file, body, line, true);
    SweepPoint p = read_sweep_line(f, v, s.points.size());
    std::vector<std::string> names = key_names(p.keys);
    if (s.points.empty()) {
      s.keys = std::move(names);
    } else if (names != s.keys) {
      std::string first;
      for (const std::string& k : s.keys) first += (first.empty() ? "" : ", ") + k;
      f.fail("keys", fmt::format("not the first line's keys ({}), in its order",
                                 first.empty() ? "none" : first));
    }
    s.points.push_back(std::move(p));
  }
  return s;
}

}  // namespace

std::string_view to_string(InputKind kind) {
  switch (kind) {
    case InputKind::kSimulate: return "simulate report";
    case InputKind::kScale: return "scale report";
    case InputKind::kOptimize: return "optimize report";
    case InputKind::kSweep: return "sweep";
    case InputKind::kTimeline: return "timeline";
    case InputKind::kDatasetVerify: return "dataset verify report";
    case InputKind::kDiff: return "diff report";
  }
  return "?";
}

ReportInput parse_report_input(const std::string& path, std::string_view text) {
  ReportInput in;
  in.path = path;
  const JsonFields f(path);
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    f.fail("", std::string("empty; ") + std::string(kWhatItReads));
  }
  // A timeline: an object whose first key or so is traceEvents (ssgd writes
  // it second, after displayTimeUnit). Parsed event by event, never whole.
  {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (text[first] == '{' &&
        text.substr(first, 4096).find("\"traceEvents\"") != std::string_view::npos) {
      in.kind = InputKind::kTimeline;
      in.content = read_timeline(path, text);
      return in;
    }
  }
  // A sweep: its first non-blank line is an object with ssgd_sweep_version.
  {
    std::size_t start = 0;
    std::int64_t line = 1;
    while (true) {
      const std::size_t end = std::min(text.find('\n', start), text.size());
      const std::string_view body = text.substr(start, end - start);
      if (body.find_first_not_of(" \t\r") != std::string_view::npos || end == text.size()) {
        Json first;
        try {
          if (!json_too_deep_at(body)) first = Json::parse(body, nullptr, false);
        } catch (const Json::exception&) {
          // Not a sweep's line; the whole file's parse below says what is wrong.
        }
        if (first.is_object() && first.contains("ssgd_sweep_version")) {
          in.kind = InputKind::kSweep;
          in.content = read_sweep(path, text);
          return in;
        }
        break;
      }
      start = end + 1;
      ++line;
    }
  }
  const Json r = parse_json(path, text, 1, false);
  if (!r.is_object()) {
    f.fail("", fmt::format("{}, got {}", kWhatItReads, JsonFields::describe(r)));
  }
  if (const Json* version = f.find(r, "", "ssgd_report_version")) {
    if (f.as_count(*version, "ssgd_report_version") != 1) {
      f.fail("ssgd_report_version",
             fmt::format("version {}; this ssgd reads simulate reports of version 1",
                         version->dump()));
    }
    if (r.contains("kind") && r["kind"] == "graph") {
      f.fail("kind",
             "a graph report (ssgd simulate of an execution graph): ssgd report reads "
             "simulate reports of profiles and traces, not of execution graphs");
    }
    in.kind = InputKind::kSimulate;
    in.content = read_simulate(f, r);
    return in;
  }
  if (r.contains("rows") && r.contains("single_gpu")) {
    in.kind = InputKind::kScale;
    in.content = read_scale(f, r);
    return in;
  }
  if (r.contains("param") && r.contains("curve")) {
    in.kind = InputKind::kOptimize;
    in.content = read_optimize(f, r);
    return in;
  }
  if (const auto format = r.find("format"); format != r.end() && format->is_string() &&
                                            format->get<std::string>() == kDatasetVerifyFormat) {
    in.kind = InputKind::kDatasetVerify;
    in.content = read_dataset_verify(f, r);
    return in;
  }
  if (r.contains("matched") && r.contains("measured")) {
    in.kind = InputKind::kDiff;
    in.content = read_diff(f, r);
    return in;
  }
  if (r.contains("traceEvents")) {
    in.kind = InputKind::kTimeline;
    in.content = read_timeline(path, text);
    return in;
  }
  if (r.contains("ssgd_sweep_version")) {
    f.fail("",
           "a sweep's line, but not on the file's first line; a sweep is one JSON object per line");
  }
  f.fail("", std::string(kWhatItReads) + "; found none of those keys");
}

namespace {

// The file's bytes, uncompressed when it starts with gzip's magic bytes; at
// most kMaxInputBytes either way.
std::string read_input_text(const std::string& path) {
  {
    std::ifstream probe(path, std::ios::binary);
    char magic[2] = {0, 0};
    probe.read(magic, 2);
    if (probe.gcount() < 2 || magic[0] != '\x1f' || magic[1] != '\x8b') {
      return read_text_file(path, "report");
    }
  }
  GzipReader reader(path);
  std::string text;
  std::vector<char> block(1 << 16);
  while (const std::size_t n = reader.read(block.data(), block.size())) {
    if (text.size() + n > kMaxInputBytes) {
      throw InputError(InputLocation{path, std::nullopt, std::nullopt, ""},
                       fmt::format("more than {} MiB uncompressed; ssgd report reads inputs of at "
                                   "most {} MiB",
                                   kMaxInputBytes >> 20, kMaxInputBytes >> 20));
    }
    text.append(block.data(), n);
  }
  return text;
}

}  // namespace

ReportInput read_report_input(const std::string& path) {
  const WorkContext context("reading", path, "report JSON");
  require_regular_file(path, "REPORT");
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxInputBytes) {
    throw InputError(InputLocation{path, std::nullopt, std::nullopt, ""},
                     fmt::format("{} bytes; ssgd report reads inputs of at most {} MiB", size,
                                 kMaxInputBytes >> 20));
  }
  const std::string text = read_input_text(path);
  return parse_report_input(path, text);
}

}  // namespace ssgd::html
