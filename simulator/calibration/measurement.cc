#include "simulator/calibration/measurement.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <system_error>

#include "common/input_file.h"
#include "common/text_file.h"
#include "common/work_context.h"
#include "simulator/calibration/nccl_tests_json.h"
#include "simulator/calibration/nccl_tests_text.h"
#include "simulator/calibration/osu_log.h"
#include "simulator/calibration/trace_collectives.h"
#include "traces/trace_reader.h"

namespace ssgd::sim {
namespace {

constexpr std::array kFormats = {MeasurementFormat::kAuto, MeasurementFormat::kOsu,
                                 MeasurementFormat::kNcclTests, MeasurementFormat::kNcclJson,
                                 MeasurementFormat::kTrace};

constexpr std::size_t kHeadBytes = 16384;

std::string file_head(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(kHeadBytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(std::max<std::streamsize>(0, in.gcount())));
  return head;
}

MeasurementFormat detect(const std::filesystem::path& path, std::string_view head) {
  const std::size_t first = head.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && head[first] == '{') return MeasurementFormat::kNcclJson;
  if (looks_like_osu_log(head)) return MeasurementFormat::kOsu;
  if (looks_like_nccl_tests_text(head)) return MeasurementFormat::kNcclTests;
  throw InputError(InputLocation{path.string(), std::nullopt, std::nullopt, ""},
                   "not recognised as an OSU log, nccl-tests output (text or JSON) or an ssgd "
                   "trace; give --format (" +
                       measurement_format_names() + ")");
}

// Words of a benchmark name, lower case, without separators: "OSU MPI
// Reduce_scatter Latency Test" -> "osumpireducescatterlatencytest".
std::string squeeze(std::string_view name) {
  std::string s;
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return s;
}

bool has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

}  // namespace

const char* to_string(MeasurementFormat format) {
  switch (format) {
    case MeasurementFormat::kAuto: return "auto";
    case MeasurementFormat::kOsu: return "osu";
    case MeasurementFormat::kNcclTests: return "nccl-tests";
    case MeasurementFormat::kNcclJson: return "nccl-tests-json";
    case MeasurementFormat::kTrace: return "trace";
  }
  return "?";
}

std::optional<MeasurementFormat> parse_measurement_format(std::string_view name) {
  for (const MeasurementFormat f : kFormats) {
    if (name == to_string(f)) return f;
  }
  return std::nullopt;
}

std::string measurement_format_names() {
  std::string names;
  for (const MeasurementFormat f : kFormats)
    names += (names.empty() ? "" : ", ") + std::string(to_string(f));
  return names;
}

std::optional<CollectiveOp> op_from_benchmark_name(std::string_view name) {
  // The program name, not its folder: "./build/all_reduce_perf_mpi".
  if (const std::size_t slash = name.rfind('/'); slash != std::string_view::npos) {
    name.remove_prefix(slash + 1);
  }
  const std::string s = squeeze(name);
  if (has(s, "nonblocking")) return std::nullopt;  // latency includes overlapped compute
  if (has(s, "allreduce")) return CollectiveOp::kAllReduce;
  if (has(s, "reducescatter")) return CollectiveOp::kReduceScatter;
  if (has(s, "allgatherv")) return std::nullopt;
  if (has(s, "allgather")) return CollectiveOp::kAllGather;
  if (has(s, "alltoallv") || has(s, "alltoallw")) return std::nullopt;
  if (has(s, "alltoall")) return CollectiveOp::kAllToAll;
  if (has(s, "broadcast") || has(s, "bcast")) return CollectiveOp::kBroadcast;
  if (has(s, "reduce")) return CollectiveOp::kReduce;  // after allreduce and reducescatter
  return std::nullopt;
}

double parse_positive_number(std::string_view text, const InputLocation& where) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec == std::errc::invalid_argument || end != text.data() + text.size()) {
    throw InputError(where, fmt::format("expected a number, got '{}'", text));
  }
  if (ec == std::errc::result_out_of_range || !std::isfinite(v)) {
    throw InputError(where, fmt::format("expected a finite number, got '{}'", text));
  }
  if (!(v > 0)) throw InputError(where, fmt::format("must be greater than zero, got '{}'", text));
  return v;
}

std::int64_t parse_whole_number(std::string_view text, const InputLocation& where) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (!text.empty() && text.front() == '-' && ec == std::errc() &&
      end == text.data() + text.size()) {
    throw InputError(where, fmt::format("must not be negative, got '{}'", text));
  }
  if (ec == std::errc::result_out_of_range) {
    throw InputError(where, fmt::format("'{}' is too large", text));
  }
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    throw InputError(where, fmt::format("expected a whole number, got '{}'", text));
  }
  return v;
}

Duration measured_microseconds(double us, const InputLocation& where) {
  // duration_from_seconds refuses what does not fit (a little below int64's
  // limit): that is the input's fault here, with its location.
  Duration d;
  try {
    d = duration_from_seconds(us * 1e-6);
  } catch (const std::out_of_range&) {
    throw InputError(where, fmt::format("{} us is too large", us));
  }
  if (d <= Duration::zero()) {
    throw InputError(where, fmt::format("{} us rounds to 0 ns", us));
  }
  return d;
}

std::vector<Measurement> read_measurements(const std::filesystem::path& path,
                                           const MeasurementOptions& options) {
  const std::string file = path.string();
  const WorkContext context("reading", file, "measurements");
  require_regular_file(path, "");
  MeasurementFormat format = options.format;
  std::vector<Measurement> out;
  if (format == MeasurementFormat::kTrace ||
      (format == MeasurementFormat::kAuto && trace::looks_like_trace(file_head(path)))) {
    out = read_trace_collectives(path, options.allow_truncated);
  } else {
    const std::string text = read_text_file(path, "measurement file");
    if (format == MeasurementFormat::kAuto) {
      format = detect(path, std::string_view(text).substr(0, kHeadBytes));
    }
    switch (format) {
      case MeasurementFormat::kOsu: out = read_osu_log(file, text, options); break;
      case MeasurementFormat::kNcclTests: out = read_nccl_tests_text(file, text, options); break;
      case MeasurementFormat::kNcclJson: out = read_nccl_tests_json(file, text, options); break;
      case MeasurementFormat::kAuto:
      case MeasurementFormat::kTrace: break;  // handled above
    }
  }
  // A collective over one rank moves nothing: there is nothing to fit.
  for (const Measurement& m : out) {
    if (m.ranks < 2) {
      throw InputError(
          InputLocation{file, m.line > 0 ? std::optional<std::int64_t>(m.line) : std::nullopt,
                        std::nullopt, "nranks"},
          fmt::format("{} rank(s): calibration needs collectives over 2 or more", m.ranks));
    }
    if (m.ranks > kMaxMeasuredRanks) {
      throw InputError(
          InputLocation{file, m.line > 0 ? std::optional<std::int64_t>(m.line) : std::nullopt,
                        std::nullopt, "nranks"},
          fmt::format("{} rank(s): more than the {} ranks ssgd models", m.ranks,
                      kMaxMeasuredRanks));
    }
  }
  if (out.empty()) {
    throw InputError(InputLocation{file, std::nullopt, std::nullopt, ""},
                     fmt::format("holds no usable measurements (read as {})", to_string(format)));
  }
  return out;
}

std::string_view trim_line(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_whitespace(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

}  // namespace ssgd::sim
