#include "traces/import/nccl_tests/nccl_tests_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include "common/logging.h"

namespace ssgd::trace {
namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
}

// Removes the rank tag srun -l ("0: ") or mpirun --tag-output ("[1,0]<stdout>:")
// puts in front of every line.
std::string_view strip_launcher_prefix(std::string_view line) {
  if (const std::size_t colon = line.find(": ");
      colon != std::string_view::npos && colon <= 6 && all_digits(trim_line(line.substr(0, colon)))) {
    return line.substr(colon + 2);
  }
  if (!line.empty() && line.front() == '[') {
    if (const std::size_t tag = line.find(">:"); tag != std::string_view::npos && tag < 32) {
      return line.substr(tag + 2);
    }
  }
  return line;
}

// The number after " nranks " in an NCCL INFO line ("... rank 3 nranks 16 cudaDev 3 ...").
std::optional<std::int64_t> nranks_in_nccl_log(std::string_view line) {
  const std::size_t at = line.find(" nranks ");
  if (at == std::string_view::npos) return std::nullopt;
  const auto words = split_whitespace(line.substr(at + 8));
  if (words.empty() || !all_digits(words[0]) || words[0].size() > 9) return std::nullopt;
  return std::stoll(std::string(words[0]));
}

// One run: from "# nccl-tests version" (or the top of the file) to its footer.
struct Run {
  bool op_named = false;           // a "Collective test starting" line was seen
  std::optional<CollectiveOp> op;  // what it names, when ssgd models it
  std::string test;                // the name as written
  std::set<std::int64_t> ranks;    // "#  Rank N" lines
  std::int64_t log_nranks = 0;     // from NCCL INFO lines
  bool in_table = false;
  std::size_t time_column = 0;  // index of the time used in a row
  std::int64_t header_line = 0;
};

}  // namespace

bool looks_like_nccl_tests_text(std::string_view head) {
  return head.find("# nccl-tests version") != std::string_view::npos ||
         head.find("# Collective test starting:") != std::string_view::npos ||
         (head.find("# nThread ") != std::string_view::npos &&
          head.find("minBytes") != std::string_view::npos) ||
         head.find("out-of-place") != std::string_view::npos;
}

std::vector<Measurement> read_nccl_tests_text(const std::string& file, std::string_view text,
                                              const MeasurementOptions& options) {
  std::vector<Measurement> out;
  Run run;
  std::int64_t number = 0;
  std::int64_t zero_size_rows = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view raw = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++number;
    const auto at = [&](std::string field) {
      return InputLocation{file, number, std::nullopt, std::move(field)};
    };
    const std::string_view line = trim_line(strip_launcher_prefix(trim_line(raw)));
    if (line.empty()) continue;
    if (line.find("NCCL INFO") != std::string_view::npos ||
        line.find("NCCL WARN") != std::string_view::npos) {
      if (const auto n = nranks_in_nccl_log(line)) run.log_nranks = std::max(run.log_nranks, *n);
      continue;
    }
    if (line.front() == '#') {
      const std::string_view body = trim_line(line.substr(1));
      const auto words = split_whitespace(body);
      if (body.starts_with("nccl-tests version")) {
        run = Run{};
      } else if (body.starts_with("Collective test starting:")) {
        run.op_named = true;
        run.test =
            std::string(trim_line(body.substr(std::string_view("Collective test starting:").size())));
        run.op = op_from_benchmark_name(run.test);
      } else if (body.starts_with("Using devices")) {
        run.ranks.clear();
      } else if (words.size() >= 2 && words[0] == "Rank" && all_digits(words[1]) &&
                 words[1].size() <= 9) {
        run.ranks.insert(std::stoll(std::string(words[1])));
      } else if (!words.empty() && words[0] == "size" &&
                 std::find(words.begin(), words.end(), "count") != words.end()) {
        std::vector<std::size_t> times;
        for (std::size_t i = 0; i < words.size(); ++i) {
          if (words[i] == "time" || words[i] == "cputime") times.push_back(i);
        }
        const std::size_t wanted = options.in_place ? 1 : 0;
        if (times.size() <= wanted) {
          throw InputError(at(options.in_place ? "in-place time" : "time"),
                           "the column header has no such column");
        }
        run.time_column = times[wanted];
        run.in_table = true;
        run.header_line = number;
      } else if (body.starts_with("Out of bounds values") ||
                 body.starts_with("Avg bus bandwidth") ||
                 body.starts_with("Collective test concluded")) {
        run.in_table = false;
      }
      continue;
    }
    // Text outside a result table (launcher chatter) is not ours to judge.
    if (!run.in_table) continue;

    const auto words = split_whitespace(line);
    const std::int64_t size_bytes = parse_whole_number(words[0], at("size"));
    if (words.size() < 2) throw InputError(at("count"), "missing column");
    parse_whole_number(words[1], at("count"));
    if (words.size() <= run.time_column) {
      throw InputError(at(options.in_place ? "in-place time" : "time"),
                       fmt::format("missing column: the row has {} columns, the header on line {} "
                                   "puts the time in column {}",
                                   words.size(), run.header_line, run.time_column + 1));
    }
    const std::string field = options.in_place ? "in-place time" : "time";
    const Duration time =
        measured_microseconds(parse_positive_number(words[run.time_column], at(field)), at(field));
    if (size_bytes == 0) {
      ++zero_size_rows;
      continue;
    }
    Measurement m;
    if (run.op_named && !run.op) {
      throw InputError(at("op"), fmt::format("'{}' is not a collective ssgd models ({})", run.test,
                                             collective_op_names()));
    }
    if (run.op) {
      m.op = *run.op;
    } else if (options.op) {
      m.op = *options.op;
    } else {
      throw InputError(at("op"),
                       "no '# Collective test starting:' line names the test (nccl-tests before "
                       "2.14 print none); give --op");
    }
    if (!run.ranks.empty()) {
      m.ranks = static_cast<std::int64_t>(run.ranks.size());
    } else if (run.log_nranks > 0) {
      m.ranks = run.log_nranks;
    } else if (options.ranks) {
      m.ranks = *options.ranks;
    } else {
      throw InputError(at("nranks"),
                       "no '#  Rank N' lines before the table and --ranks was not given: the "
                       "number of ranks is unknown");
    }
    m.bytes = static_cast<double>(size_bytes);
    m.time = time;
    m.source = file;
    m.line = number;
    out.push_back(std::move(m));
  }
  if (zero_size_rows > 0) {
    logger("calibration")->debug("{}: {} rows of 0 bytes skipped", file, zero_size_rows);
  }
  return out;
}

}  // namespace ssgd::trace
