#include "simulator/calibration/measurement.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/text_file.h"
#include "traces/trace_reader.h"

namespace ssgd::sim {
namespace {

[[noreturn]] void fail(const std::string& file, std::int64_t line, const std::string& field,
                       const std::string& why) {
  throw InputError(InputLocation{file, line > 0 ? std::optional<std::int64_t>(line) : std::nullopt,
                                 std::nullopt, field},
                   why);
}

double number(const std::string& file, std::int64_t line, const std::string& field, std::string_view text) {
  double v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty() || !std::isfinite(v)) {
    fail(file, line, field, fmt::format("expected a number, got '{}'", text));
  }
  if (!(v > 0)) fail(file, line, field, fmt::format("must be greater than zero, got '{}'", text));
  return v;
}

std::vector<std::string> split_ws(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The op an OSU header or an nccl-tests binary name names.
std::optional<CollectiveOp> op_from_name(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  text.erase(std::remove_if(text.begin(), text.end(), [](char c) { return c == '_' || c == '-' || c == ' '; }),
             text.end());
  if (text.find("allreduce") != std::string::npos) return CollectiveOp::kAllReduce;
  if (text.find("reducescatter") != std::string::npos) return CollectiveOp::kReduceScatter;
  if (text.find("allgather") != std::string::npos) return CollectiveOp::kAllGather;
  if (text.find("alltoall") != std::string::npos) return CollectiveOp::kAllToAll;
  if (text.find("bcast") != std::string::npos || text.find("broadcast") != std::string::npos) {
    return CollectiveOp::kBroadcast;
  }
  return std::nullopt;
}

Duration micros(double us) { return duration_from_seconds(us * 1e-6); }

std::vector<Measurement> read_osu(const std::string& file, const std::string& text,
                                  const MeasurementOptions& o) {
  std::vector<Measurement> out;
  std::optional<CollectiveOp> op = o.op;
  std::istringstream in(text);
  std::string line;
  std::int64_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (line[line.find_first_not_of(" \t")] == '#') {
      if (!op && line.find("OSU") != std::string::npos) op = op_from_name(line);
      continue;
    }
    const auto words = split_ws(line);
    if (words.size() != 2) {
      fail(file, n, "line", fmt::format("expected 'bytes latency_us' or 'nodes,bytes latency_us', got '{}'", line));
    }
    Measurement m;
    std::string size = words[0];
    if (const auto comma = size.find(','); comma != std::string::npos) {
      m.ranks = static_cast<std::int64_t>(number(file, n, "nodes", size.substr(0, comma)));
      size = size.substr(comma + 1);
    } else if (o.ranks) {
      m.ranks = *o.ranks;
    } else {
      fail(file, n, "nodes", "this OSU file does not say how many ranks ran it; give --ranks");
    }
    m.bytes = number(file, n, "size", size);
    m.time = micros(number(file, n, "latency", words[1]));
    if (!op) fail(file, 0, "header", "no OSU benchmark name in the header; give --op");
    m.op = *op;
    m.source = file;
    m.line = n;
    out.push_back(m);
  }
  return out;
}

std::vector<Measurement> read_nccl_text(const std::string& file, const std::string& text,
                                        const MeasurementOptions& o) {
  std::vector<Measurement> out;
  std::optional<CollectiveOp> op = o.op;
  std::int64_t ranks = 0;
  bool has_root = true;
  std::istringstream in(text);
  std::string line;
  std::int64_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // srun and mpirun may prefix every line with "0: ".
    if (line.size() > 2 && std::isdigit(static_cast<unsigned char>(line[0]))) {
      const auto colon = line.find(": ");
      if (colon != std::string::npos && colon < 6 &&
          std::all_of(line.begin(), line.begin() + static_cast<std::ptrdiff_t>(colon),
                      [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
        line = line.substr(colon + 2);
      }
    }
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    if (line[first] == '#') {
      if (line.find("Collective test starting:") != std::string::npos && !o.op) op = op_from_name(line);
      if (line.find(" Rank ") != std::string::npos && line.find(" Group ") != std::string::npos) ++ranks;
      if (line.find("size") != std::string::npos && line.find("count") != std::string::npos) {
        has_root = line.find("root") != std::string::npos;
      }
      continue;
    }
    const auto w = split_ws(line);
    const std::size_t time_col = has_root ? 5 : 4;
    if (w.size() < time_col + 3) {
      fail(file, n, "line", fmt::format("expected an nccl-tests result row (size count type redop root time "
                                        "algbw busbw ...), got '{}'", line));
    }
    Measurement m;
    m.bytes = number(file, n, "size", w[0]);
    m.time = micros(number(file, n, "time", w[time_col]));
    m.ranks = o.ranks ? *o.ranks : ranks;
    if (m.ranks < 1) fail(file, n, "nranks", "no '#  Rank' lines before the results: give --ranks");
    if (!op) fail(file, n, "op", "no '# Collective test starting:' line: give --op");
    m.op = *op;
    m.source = file;
    m.line = n;
    out.push_back(m);
  }
  return out;
}

std::vector<Measurement> read_nccl_json(const std::string& file, const std::string& text,
                                        const MeasurementOptions& o) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    fail(file, 0, "", std::string("not valid JSON: ") + e.what());
  }
  std::optional<CollectiveOp> op = o.op;
  if (!op && j.contains("args") && j["args"].is_string()) op = op_from_name(j["args"].get<std::string>());
  if (!op && j.contains("test") && j["test"].is_string()) op = op_from_name(j["test"].get<std::string>());
  if (!op) fail(file, 0, "args", "the JSON does not name the test (args): give --op");
  std::int64_t ranks = o.ranks.value_or(0);
  if (!o.ranks && j.contains("devices") && j["devices"].is_array()) {
    ranks = static_cast<std::int64_t>(j["devices"].size());
  }
  if (ranks < 1) fail(file, 0, "devices", "the JSON lists no devices: give --ranks");
  if (!j.contains("results") || !j["results"].is_array()) fail(file, 0, "results", "expected a results array");
  std::vector<Measurement> out;
  for (std::size_t i = 0; i < j["results"].size(); ++i) {
    const auto& r = j["results"][i];
    const std::string where = fmt::format("results[{}]", i);
    if (!r.is_object() || !r.contains("size") || !r["size"].is_number()) {
      fail(file, 0, where + ".size", "expected a number");
    }
    if (!r.contains("out_of_place") || !r["out_of_place"].is_object()) {
      fail(file, 0, where + ".out_of_place", "expected an object with the time");
    }
    const auto& oop = r["out_of_place"];
    const char* key = oop.contains("time") ? "time" : "cpu_time";
    if (!oop.contains(key) || !oop[key].is_number()) fail(file, 0, where + ".out_of_place.time", "expected a number");
    const double size = r["size"].get<double>();
    const double us = oop[key].get<double>();
    if (!(size > 0) || !std::isfinite(size)) fail(file, 0, where + ".size", "must be greater than zero");
    if (!(us > 0) || !std::isfinite(us)) fail(file, 0, where + ".out_of_place.time", "must be greater than zero");
    out.push_back({*op, ranks, size, micros(us), file, static_cast<std::int64_t>(i)});
  }
  return out;
}

std::optional<CollectiveOp> op_from_trace(trace::v1::Collective::Op op) {
  switch (op) {
    case trace::v1::Collective::ALL_REDUCE: return CollectiveOp::kAllReduce;
    case trace::v1::Collective::REDUCE_SCATTER: return CollectiveOp::kReduceScatter;
    case trace::v1::Collective::ALL_GATHER: return CollectiveOp::kAllGather;
    case trace::v1::Collective::BROADCAST: return CollectiveOp::kBroadcast;
    case trace::v1::Collective::ALL_TO_ALL: return CollectiveOp::kAllToAll;
    default: return std::nullopt;
  }
}

std::vector<Measurement> read_trace(const std::filesystem::path& path, const MeasurementOptions& o) {
  struct Instance {
    std::optional<CollectiveOp> op;
    std::int64_t ranks = 0;
    double bytes = 0;
    std::int64_t start = std::numeric_limits<std::int64_t>::min();
    std::int64_t end = std::numeric_limits<std::int64_t>::min();
    std::int64_t record = 0;
  };
  std::map<std::pair<std::uint64_t, std::uint64_t>, Instance> instances;
  auto reader = trace::TraceReader::open(path);
  trace::v1::Event e;
  std::int64_t record = 0;
  while (reader.next(e)) {
    ++record;
    if (!e.has_collective()) continue;
    const auto& c = e.collective();
    if (c.end_ns() < c.start_ns()) {
      throw InputError(InputLocation{path.string(), std::nullopt, record - 1, "collective.end_ns"},
                       "ends before it starts");
    }
    auto& in = instances[{c.communicator_id(), c.sequence_number()}];
    in.op = o.op ? o.op : op_from_trace(c.op());
    in.ranks = o.ranks ? *o.ranks : c.nranks();
    in.bytes = static_cast<double>(c.size_bytes());
    in.start = std::max(in.start, c.start_ns());
    in.end = std::max(in.end, c.end_ns());
    in.record = record - 1;
  }
  std::vector<Measurement> out;
  for (const auto& [key, in] : instances) {
    if (!in.op || in.ranks < 1 || !(in.bytes > 0) || in.end <= in.start) continue;
    out.push_back({*in.op, in.ranks, in.bytes, Duration(in.end - in.start), path.string(), in.record});
  }
  return out;
}

std::string file_head(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(std::max<std::streamsize>(0, in.gcount())));
  return head;
}

MeasurementFormat detect(const std::filesystem::path& path, const std::string& head) {
  const auto first = head.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && head[first] == '{') return MeasurementFormat::kNcclJson;
  if (head.find("OSU") != std::string::npos) return MeasurementFormat::kOsu;
  if (head.find("nccl-tests") != std::string::npos || head.find("Collective test starting") != std::string::npos ||
      head.find("nThread") != std::string::npos) {
    return MeasurementFormat::kNcclTests;
  }
  throw InputError(InputLocation{path.string(), std::nullopt, std::nullopt, ""},
                   "not recognised as an OSU log, nccl-tests output (text or JSON) or an ssgd trace; "
                   "give --format");
}

}  // namespace

const char* to_string(MeasurementFormat f) {
  switch (f) {
    case MeasurementFormat::kAuto: return "auto";
    case MeasurementFormat::kOsu: return "osu";
    case MeasurementFormat::kNcclTests: return "nccl-tests";
    case MeasurementFormat::kNcclJson: return "nccl-tests-json";
    case MeasurementFormat::kTrace: return "trace";
  }
  return "?";
}

std::optional<MeasurementFormat> parse_measurement_format(std::string_view name) {
  for (auto f : {MeasurementFormat::kAuto, MeasurementFormat::kOsu, MeasurementFormat::kNcclTests,
                 MeasurementFormat::kNcclJson, MeasurementFormat::kTrace}) {
    if (name == to_string(f)) return f;
  }
  return std::nullopt;
}

std::vector<Measurement> read_measurements(const std::filesystem::path& path,
                                           const MeasurementOptions& options) {
  MeasurementFormat format = options.format;
  std::vector<Measurement> out;
  if (format == MeasurementFormat::kTrace ||
      (format == MeasurementFormat::kAuto && trace::looks_like_trace(file_head(path)))) {
    out = read_trace(path, options);
  } else {
    const std::string text = read_text_file(path, "measurement file");
    if (format == MeasurementFormat::kAuto) format = detect(path, text.substr(0, 4096));
    switch (format) {
      case MeasurementFormat::kOsu: out = read_osu(path.string(), text, options); break;
      case MeasurementFormat::kNcclTests: out = read_nccl_text(path.string(), text, options); break;
      case MeasurementFormat::kNcclJson: out = read_nccl_json(path.string(), text, options); break;
      default: break;
    }
  }
  if (out.empty()) {
    throw InputError(InputLocation{path.string(), std::nullopt, std::nullopt, ""},
                     "holds no usable measurements");
  }
  return out;
}

}  // namespace ssgd::sim
