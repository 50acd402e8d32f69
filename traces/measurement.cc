#include "traces/measurement.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <system_error>

#include "common/enum_names.h"

namespace ssgd::trace {
namespace {

constexpr EnumNames<MeasurementFormat, 5> kFormatNames{{{
    {MeasurementFormat::kAuto, "auto"},
    {MeasurementFormat::kOsu, "osu"},
    {MeasurementFormat::kNcclTests, "nccl-tests"},
    {MeasurementFormat::kNcclJson, "nccl-tests-json"},
    {MeasurementFormat::kTrace, "trace"},
}}};

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

const char* to_string(MeasurementFormat format) { return kFormatNames.name(format); }

std::optional<MeasurementFormat> parse_measurement_format(std::string_view name) {
  return kFormatNames.parse(name);
}

std::string measurement_format_names() { return kFormatNames.list(); }

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

}  // namespace ssgd::trace
