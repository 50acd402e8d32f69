#include "traces/import/bcaffe/bcaffe_log.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "common/error.h"
#include "common/text_file.h"
#include "common/work_context.h"
#include "traces/event_rules.h"

namespace ssgd::trace {
namespace {

constexpr std::array<std::string_view, 5> kFieldNames = {"param_id", "size", "compute_time",
                                                         "communication_time", "merged_time"};
constexpr std::string_view kListHint = "[param_id, size, compute_time, communication_time(, merged_time)]";
constexpr std::int64_t kBytesPerElement = 4;  // fp32 gradients
constexpr std::int64_t kBatchPerGpu = 64;     // the authors' GoogLeNet runs

std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// One gradient tensor, one line of the log. Times stay in microseconds, as
// logged, until they become a Duration.
struct Tensor {
  std::int64_t line = 0;
  std::int64_t param_id = 0;
  std::int64_t size = 0;
  double compute_us = 0;
  double comm_us = 0;
  double merged_us = 0;
};

// Consecutive tensors from param_id 0 on.
struct Dump {
  std::vector<Tensor> tensors;
  [[nodiscard]] bool all_zero() const {
    for (const Tensor& t : tensors) {
      if (t.compute_us != 0 || t.comm_us != 0 || t.merged_us != 0) return false;
    }
    return true;
  }
};

class LogParser {
 public:
  explicit LogParser(const std::string& source) : source_(source) {}

  std::vector<Dump> run(std::string_view text) {
    std::int64_t number = 0;
    while (!text.empty()) {
      const std::size_t nl = text.find('\n');
      const std::string_view line = text.substr(0, nl);
      text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
      line_ = ++number;
      read_line(line);
    }
    if (dumps_.empty()) {
      throw InputError({source_, {}, {}, ""}, "no bracketed lists found: expected lines ending in " +
                                                  std::string(kListHint));
    }
    return std::move(dumps_);
  }

 private:
  [[noreturn]] void fail(std::string_view field, const std::string& what) const {
    throw InputError({source_, line_, {}, std::string(field)}, what);
  }

  // Lines with no '[' are glog chatter and skipped; the log prefix itself
  // ("I0214 ... distributed.cpp:112] ") never holds one.
  void read_line(std::string_view line) {
    const std::size_t open = line.rfind('[');
    if (open == std::string_view::npos) return;
    const std::string_view tail = trim(line.substr(open + 1));
    if (tail.empty() || tail.back() != ']') {
      fail("", "bracketed list does not end in ']': expected " + std::string(kListHint));
    }
    const std::string_view inner = trim(tail.substr(0, tail.size() - 1));
    if (inner.find(']') != std::string_view::npos) {
      fail("", "text after the bracketed list: expected the line to end in " + std::string(kListHint));
    }
    std::vector<std::string_view> fields;
    for (std::size_t start = 0; !inner.empty();) {
      const std::size_t comma = inner.find(',', start);
      fields.push_back(trim(inner.substr(start, comma == std::string_view::npos ? comma : comma - start)));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    if (fields.size() < 4) {
      fail(kFieldNames[fields.size()], "list has " + std::to_string(fields.size()) +
                                           " fields, expected 4 or 5: " + std::string(kListHint));
    }
    if (fields.size() > 5) {
      fail("field 6", "list has " + std::to_string(fields.size()) + " fields, expected 4 or 5: " +
                          std::string(kListHint));
    }

    Tensor t;
    t.line = line_;
    t.param_id = parse_count(fields[0], kFieldNames[0]);
    t.size = parse_count(fields[1], kFieldNames[1]);
    if (t.size > std::numeric_limits<std::int64_t>::max() / kBytesPerElement) {
      fail(kFieldNames[1], "size " + std::string(fields[1]) + " elements does not fit in int64 bytes");
    }
    t.compute_us = parse_time(fields[2], kFieldNames[2]);
    t.comm_us = parse_time(fields[3], kFieldNames[3]);
    if (fields.size() == 5) t.merged_us = parse_time(fields[4], kFieldNames[4]);

    if (t.param_id == 0) {
      dumps_.emplace_back();
    } else {
      const std::int64_t expected = dumps_.empty() ? 0 : dumps_.back().tensors.back().param_id + 1;
      if (t.param_id != expected) {
        fail(kFieldNames[0], "param_id " + std::to_string(t.param_id) + " out of order: expected " +
                                 std::to_string(expected) + (expected == 0 ? "" : " or 0 (a new dump)"));
      }
    }
    dumps_.back().tensors.push_back(t);
  }

  std::int64_t parse_count(std::string_view s, std::string_view field) const {
    if (s.empty()) fail(field, "missing value");
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec == std::errc::result_out_of_range) fail(field, "value " + std::string(s) + " does not fit in int64");
    if (ec != std::errc() || end != s.data() + s.size()) {
      fail(field, "expected a non-negative integer, got '" + std::string(s) + "'");
    }
    if (value < 0) fail(field, "negative value " + std::string(s));
    return value;
  }

  double parse_time(std::string_view s, std::string_view field) const {
    if (s.empty()) fail(field, "missing value");
    double value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(value)) {
      fail(field, "expected a time in microseconds, got '" + std::string(s) + "'");
    }
    if (value < 0) fail(field, "negative time " + std::string(s));
    if (value * 1e3 > static_cast<double>(kMaxLayerTimeNs)) {
      fail(field, "time " + std::string(s) + " us exceeds 2^42 ns (73 minutes)");
    }
    return value;
  }

  std::string source_;
  std::int64_t line_ = 0;
  std::vector<Dump> dumps_;
};

Duration from_microseconds(double us, const std::string& source, const Tensor& t, std::string_view field) {
  try {
    return duration_from_seconds(us * 1e-6);
  } catch (const std::out_of_range&) {
    throw InputError({source, t.line, {}, std::string(field)},
                     "time " + std::to_string(us) + " us does not fit in int64 nanoseconds");
  }
}

}  // namespace

LayerProfile parse_bcaffe_log(std::string_view text, const std::string& source) {
  const std::vector<Dump> dumps = LogParser(source).run(text);

  // A dump cut short by the end of the log is incomplete; a dump of zeros is
  // the one logged before the first timed iteration.
  std::size_t longest = 0;
  for (const Dump& d : dumps) longest = std::max(longest, d.tensors.size());
  const Dump* chosen = nullptr;
  for (const Dump& d : dumps) {
    if (d.tensors.size() == longest && !d.all_zero()) chosen = &d;
  }
  if (chosen == nullptr) {
    throw InputError({source, {}, {}, ""},
                     "no complete dump with non-zero times: " + std::to_string(dumps.size()) +
                         " dump(s) found, of up to " + std::to_string(longest) + " tensors");
  }

  LayerProfile profile;
  profile.source = source;
  profile.model = "GoogLeNet (B-Caffe)";
  profile.batch_per_gpu = kBatchPerGpu;
  profile.provenance = "measured: B-Caffe log " + std::filesystem::path(source).filename().string() +
                       ", forward = backward/2 per the authors' simulator";

  const std::vector<Tensor>& tensors = chosen->tensors;
  std::int64_t total_bytes = 0;
  std::int64_t total_ns = 0;
  for (std::size_t first = 0; first < tensors.size();) {
    std::size_t last = first;
    while (last + 1 < tensors.size() && tensors[last + 1].compute_us == tensors[first].compute_us) ++last;

    const Tensor& head = tensors[first];
    LayerRow row;
    row.layer = static_cast<std::int64_t>(profile.layers.size());
    row.name = "layer" + std::to_string(row.layer) + "_params" + std::to_string(head.param_id) + "-" +
               std::to_string(tensors[last].param_id);
    row.backward = from_microseconds(head.compute_us, source, head, kFieldNames[2]);
    // Halved before rounding, so an odd backward time splits to the nearest ns.
    row.forward = from_microseconds(head.compute_us / 2, source, head, kFieldNames[2]);
    Duration comm;
    // The limits of every layer profile (layer_profile.h), checked as the
    // rows are summed, at the tensor that passes one: what is accepted here
    // the CSV reader accepts too.
    for (std::size_t i = first; i <= last; ++i) {
      if (tensors[i].size > (kMaxSizeBytes - total_bytes) / kBytesPerElement) {
        throw InputError({source, tensors[i].line, {}, std::string(kFieldNames[1])},
                         "the gradients of the tensors so far exceed 2^50 bytes (1 PiB)");
      }
      row.grad_bytes += kBytesPerElement * tensors[i].size;
      total_bytes += kBytesPerElement * tensors[i].size;
      comm += from_microseconds(tensors[i].comm_us, source, tensors[i], kFieldNames[3]);
      if (comm.ns() > kMaxLayerTimeNs) {
        throw InputError({source, tensors[i].line, {}, std::string(kFieldNames[3])},
                         "the communication time of the layer exceeds 2^42 ns (73 minutes)");
      }
    }
    row.comm = comm;
    total_ns += row.forward.ns() + row.backward.ns() + comm.ns();  // each <= 2^42
    if (total_ns > kMaxProfileTimeNs) {
      throw InputError({source, tensors[last].line, {}, std::string(kFieldNames[2])},
                       "the times of the layers so far exceed 2^50 ns (13 days)");
    }
    profile.layers.push_back(std::move(row));
    first = last + 1;
  }
  return profile;
}

LayerProfile read_bcaffe_log(const std::filesystem::path& path) {
  const WorkContext context("reading", path.string(), "B-Caffe log");
  return parse_bcaffe_log(read_text_file(path, "B-Caffe log"), path.string());
}

bool looks_like_bcaffe_log(std::string_view head) {
  // The first non-blank line ends in a bracketed list of four or five numbers.
  static const std::regex kLine(R"(\[\s*\d+\s*,\s*\d+\s*,\s*[-0-9.eE+]+\s*,\s*[-0-9.eE+]+\s*(,\s*[-0-9.eE+]+\s*)?\]\s*$)");
  std::size_t pos = 0;
  while (pos < head.size()) {
    auto eol = head.find('\n', pos);
    if (eol == std::string_view::npos) eol = head.size();
    std::string l(head.substr(pos, eol - pos));
    if (!l.empty() && l.back() == '\r') l.pop_back();
    if (l.find_first_not_of(" \t") != std::string::npos) return std::regex_search(l, kLine);
    pos = eol + 1;
  }
  return false;
}

}  // namespace ssgd::trace
