#include "traces/import/measurement_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "common/input_file.h"
#include "common/text_file.h"
#include "common/work_context.h"
#include "traces/import/nccl_tests/nccl_tests_json.h"
#include "traces/import/nccl_tests/nccl_tests_text.h"
#include "traces/import/osu/osu_log.h"
#include "traces/trace_collectives.h"
#include "traces/trace_reader.h"

namespace ssgd::trace {
namespace {

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

}  // namespace

std::vector<Measurement> read_measurements(const std::filesystem::path& path,
                                           const MeasurementOptions& options) {
  const std::string file = path.string();
  const WorkContext context("reading", file, "measurements");
  require_regular_file(path, "");
  MeasurementFormat format = options.format;
  std::vector<Measurement> out;
  if (format == MeasurementFormat::kTrace ||
      (format == MeasurementFormat::kAuto && looks_like_trace(file_head(path)))) {
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

}  // namespace ssgd::trace
