#include "traces/import/osu/osu_log.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <optional>
#include <system_error>

namespace ssgd::trace {
namespace {

// OSU's size counts one rank's part for these two.
bool size_is_per_rank(CollectiveOp op) {
  return op == CollectiveOp::kAllGather || op == CollectiveOp::kAllToAll;
}

// Columns after the latency (min, max, iterations) are read only to catch
// garbage: any finite number >= 0 will do.
void check_extra_column(std::string_view text, const InputLocation& where) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v) || v < 0) {
    throw InputError(where, fmt::format("expected a number, got '{}'", text));
  }
}

}  // namespace

bool looks_like_osu_log(std::string_view head) {
  return head.find("# OSU ") != std::string_view::npos ||
         head.find("Latency(us)") != std::string_view::npos;
}

std::vector<Measurement> read_osu_log(const std::string& file, std::string_view text,
                                      const MeasurementOptions& options) {
  std::vector<Measurement> out;
  std::optional<CollectiveOp> header_op;  // from the last "# OSU ..." line
  std::string header;                     // that line, for messages
  std::int64_t number = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = trim_line(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++number;
    const auto at = [&](std::string field) {
      return InputLocation{file, number, std::nullopt, std::move(field)};
    };
    if (line.empty()) continue;
    if (line.front() == '#') {
      // A new benchmark header (files may hold several runs one after another).
      if (line.find("OSU ") != std::string_view::npos &&
          line.find("Test") != std::string_view::npos) {
        header_op = op_from_benchmark_name(line);
        header = std::string(trim_line(line.substr(1)));
      }
      continue;
    }

    const auto words = split_whitespace(line);
    Measurement m;
    m.source = file;
    m.line = number;
    std::string_view size = words[0];
    if (const std::size_t comma = size.find(','); comma != std::string_view::npos) {
      m.ranks = parse_whole_number(size.substr(0, comma), at("nodes"));
      if (m.ranks < 2) {
        throw InputError(at("nodes"),
                         fmt::format("{} node(s): a collective needs at least 2", m.ranks));
      }
      if (m.ranks > kMaxMeasuredRanks) {
        throw InputError(at("nodes"), fmt::format("{} node(s): more than the {} ranks ssgd models",
                                                  m.ranks, kMaxMeasuredRanks));
      }
      size = size.substr(comma + 1);
    } else if (options.ranks) {
      m.ranks = *options.ranks;
    } else {
      throw InputError(at("nodes"),
                       "the line has no 'nodes,' prefix and --ranks was not given: the number of "
                       "ranks is unknown");
    }
    const std::int64_t size_bytes = parse_whole_number(size, at("size"));
    if (size_bytes == 0) throw InputError(at("size"), "must be greater than zero, got '0'");
    if (words.size() < 2) {
      throw InputError(at("latency"),
                       "missing: expected 'bytes latency_us' or 'nodes,bytes latency_us'");
    }
    m.time = measured_microseconds(parse_positive_number(words[1], at("latency")), at("latency"));
    for (std::size_t c = 2; c < words.size(); ++c)
      check_extra_column(words[c], at(fmt::format("column {}", c + 1)));
    const std::optional<CollectiveOp> op = header_op ? header_op : options.op;
    if (!op) {
      throw InputError(at("op"),
                       header.empty()
                           ? "no '# OSU ... Latency Test' header names the collective; give --op"
                           : fmt::format("'{}' is not a collective ssgd models ({}); give --op",
                                         header, collective_op_names()));
    }
    m.op = *op;
    m.bytes = static_cast<double>(size_bytes) *
              (size_is_per_rank(m.op) ? static_cast<double>(m.ranks) : 1.0);
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace ssgd::trace
