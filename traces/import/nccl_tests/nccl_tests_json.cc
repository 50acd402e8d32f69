#include "traces/import/nccl_tests/nccl_tests_json.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/json_depth.h"

namespace ssgd::trace {
namespace {

using nlohmann::json;

class JsonReader {
 public:
  explicit JsonReader(const std::string& file) : file_(file) {}

  [[noreturn]] void fail(const std::string& path, const std::string& why) const {
    throw InputError(InputLocation{file_, std::nullopt, std::nullopt, path}, why);
  }

  static std::string describe(const json& v) {
    if (v.is_string()) return fmt::format("the string \"{}\"", v.get<std::string>());
    if (v.is_null()) return "null";
    return std::string(v.type_name());
  }

  // A number > 0 at `path` (nccl-tests writes NaN as the string "nan").
  double positive(const json& v, const std::string& path) const {
    if (!v.is_number()) fail(path, "expected a number, got " + describe(v));
    const double x = v.get<double>();
    if (!std::isfinite(x) || !(x > 0))
      fail(path, fmt::format("must be greater than zero, got {}", x));
    return x;
  }

  // A whole number >= 0 at `path`.
  std::int64_t whole(const json& v, const std::string& path) const {
    if (v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0)) {
      if (v.is_number_unsigned() &&
          v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
        fail(path, "too large");
      }
      return v.get<std::int64_t>();
    }
    if (v.is_number_integer())
      fail(path, fmt::format("must not be negative, got {}", v.get<std::int64_t>()));
    fail(path, "expected a whole number, got " + describe(v));
  }

  // config.nthreads or config.ngpus: absent means 1.
  std::int64_t factor(const json& config, const char* key) const {
    if (!config.contains(key)) return 1;
    const std::int64_t n = whole(config[key], fmt::format("config.{}", key));
    if (n < 1) fail(fmt::format("config.{}", key), "must be at least 1");
    return n;
  }

 private:
  const std::string& file_;
};

}  // namespace

std::vector<Measurement> read_nccl_tests_json(const std::string& file, std::string_view text,
                                              const MeasurementOptions& options) {
  const JsonReader r(file);
  json doc;
  // nccl-tests writes one object: anything else is refused before it is
  // parsed ("[{},{},...]" costs about 30 bytes a byte as nlohmann's values).
  if (const auto first = text.find_first_not_of(" \t\r\n");
      first != std::string_view::npos && text[first] != '{') {
    r.fail("", "expected a JSON object (nccl-tests' -J output), which starts with '{'");
  }
  require_json_depth(text, file);
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    r.fail("", std::string("not valid JSON: ") + e.what());
  } catch (const json::exception& e) {  // out_of_range 406: a number beyond a double
    r.fail("", std::string("not usable JSON: ") + e.what());
  }
  if (!doc.is_object()) r.fail("", "expected a JSON object, got " + JsonReader::describe(doc));

  // The collective, from the program name (a wrapper script names none).
  std::optional<CollectiveOp> op;
  if (doc.contains("args")) {
    const json& args = doc["args"];
    std::string program;
    if (args.is_array() && !args.empty() && args[0].is_string()) {
      program = args[0].get<std::string>();
    } else if (args.is_string()) {
      program = args.get<std::string>();
    } else {
      r.fail("args",
             "expected the command line as a list of strings, got " + JsonReader::describe(args));
    }
    if (const std::size_t space = program.find(' '); space != std::string::npos)
      program.resize(space);
    op = op_from_benchmark_name(program);
    if (!op && program.find("_perf") != std::string::npos) {
      r.fail("args[0]", fmt::format("'{}' is not a collective ssgd models ({})", program,
                                    collective_op_names()));
    }
  }
  if (!op) op = options.op;
  if (!op) r.fail("args", "the command line does not name an nccl-tests collective; give --op");

  // The ranks: one device entry per process, nthreads x ngpus ranks each.
  std::int64_t ranks = 0;
  if (doc.contains("config") && doc["config"].is_object() && doc["config"].contains("devices")) {
    const json& config = doc["config"];
    if (!config["devices"].is_array()) {
      r.fail("config.devices", "expected a list, got " + JsonReader::describe(config["devices"]));
    }
    ranks = static_cast<std::int64_t>(config["devices"].size()) * r.factor(config, "nthreads") *
            r.factor(config, "ngpus");
  }
  if (ranks == 0 && options.ranks) ranks = *options.ranks;
  if (ranks == 0)
    r.fail("config.devices",
           "no devices listed and --ranks was not given: the number of ranks is unknown");

  if (!doc.contains("results")) r.fail("results", "missing: expected the list of results");
  const json& results = doc["results"];
  if (!results.is_array())
    r.fail("results", "expected a list, got " + JsonReader::describe(results));
  const char* placement = options.in_place ? "in_place" : "out_of_place";
  std::vector<Measurement> out;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const json& row = results[i];
    const std::string path = fmt::format("results[{}]", i);
    if (!row.is_object()) r.fail(path, "expected an object, got " + JsonReader::describe(row));
    if (!row.contains("size")) r.fail(path + ".size", "missing");
    const std::int64_t size = r.whole(row["size"], path + ".size");
    const std::string where = fmt::format("{}.{}", path, placement);
    if (!row.contains(placement) || row[placement].is_null()) {
      r.fail(where, options.in_place
                        ? "missing: this run measured no in-place time"
                        : "missing: this run measured no out-of-place time (use --in-place)");
    }
    const json& timing = row[placement];
    if (!timing.is_object())
      r.fail(where, "expected an object, got " + JsonReader::describe(timing));
    const char* key = timing.contains("time") ? "time" : "cpu_time";
    if (!timing.contains(key)) r.fail(where + ".time", "missing");
    const std::string time_path = fmt::format("{}.{}", where, key);
    const InputLocation time_at{file, std::nullopt, std::nullopt, time_path};
    const Duration time = measured_microseconds(r.positive(timing[key], time_path), time_at);
    if (size == 0) continue;  // nccl-tests -b 0: no bytes, no bandwidth to learn
    Measurement m;
    m.op = *op;
    m.ranks = ranks;
    m.bytes = static_cast<double>(size);
    m.time = time;
    m.source = file;
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace ssgd::trace
