#pragma once
// Streams the events out of a Kineto (PyTorch profiler) Chrome-trace JSON
// file, plain or gzip, one at a time, in constant memory.
//
// The file is one JSON object: top-level keys such as `schemaVersion`,
// `deviceProperties`, `distributedInfo`, `baseTimeNanoseconds`, and
// `traceEvents`, an array of events (docs/kineto.md). A SAX parser
// (nlohmann::json::sax_parse) runs over GzipReader's bytes; each event is
// assembled into one small KinetoEvent, handed to a callback and reused for
// the next. The top-level keys other than `traceEvents` are small and are
// kept as JSON values. A bare array of events (the Chrome "JSON array
// format") is read as `traceEvents`.
//
// Numbers are kept as the text the file holds (`12.345`), never as a
// double, so that microsecond times with three decimals become exact
// integer nanoseconds (parse_microseconds_ns).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ssgd::trace {

// One JSON value of an event field or arg, as far as the importer needs it.
struct KinetoValue {
  enum class Type {
    kMissing,
    kNull,
    kBool,
    kInteger,
    kNumber,
    kString,
    kIntArray,     // "grid": [8, 1, 1]
    kStringArray,  // "Input type": ["float", ""]
    kIntArrays,    // "Input Dims": [[64, 512], []]: an array of int arrays
    kOther
  };
  Type type = Type::kMissing;
  std::string text;                 // number text, string contents, "true"/"false"
  // kIntArray: the ints; kIntArrays: every inner array's ints, one after
  // the other, with `lengths` saying how many each has.
  std::vector<std::int64_t> ints;
  std::vector<std::size_t> lengths;
  std::vector<std::string> strings;  // kStringArray

  [[nodiscard]] bool present() const { return type != Type::kMissing; }
  [[nodiscard]] bool is_number() const { return type == Type::kInteger || type == Type::kNumber; }
  // The value as an integer: an integer number, or a number with no
  // fraction; nullopt otherwise (a string, a fraction, out of range).
  [[nodiscard]] std::optional<std::int64_t> as_int() const;
  void clear();
};

// One element of `traceEvents`, with the fields the importer reads. Args
// keep their order; nested objects inside args are kOther.
struct KinetoEvent {
  std::uint64_t index = 0;  // 0-based position in traceEvents
  KinetoValue ph, cat, name, ts, dur, pid, tid, id;
  std::vector<std::pair<std::string, KinetoValue>> args;
  std::size_t arg_count = 0;  // args[0, arg_count) are this event's; the rest are reused storage

  // The arg named `key`, or a kMissing value.
  [[nodiscard]] const KinetoValue& arg(std::string_view key) const;
  void clear();
};

// Microseconds written as decimal text (`12`, `12.345`, `-3.5`, `1.2e3`) to
// integer nanoseconds, exactly: digits below a nanosecond are dropped
// (toward zero). nullopt when the text is not a number or overflows int64.
std::optional<std::int64_t> parse_microseconds_ns(std::string_view text);

struct KinetoReadProgress {
  std::uint64_t file_bytes_read = 0;
  std::uint64_t file_size = 0;
  std::uint64_t events = 0;
};

struct KinetoReaderOptions {
  // Called with each event of traceEvents, in file order.
  std::function<void(const KinetoEvent&)> on_event;
  // Called about every `progress_seconds` of wall time while reading.
  std::function<void(const KinetoReadProgress&)> on_progress;
  double progress_seconds = 5.0;
};

struct KinetoReadResult {
  // Every top-level key but traceEvents, with its value.
  std::map<std::string, nlohmann::json> top_level;
  std::uint64_t events = 0;
  bool had_trace_events = false;
  bool top_level_array = false;  // a bare array of events (the legacy profiler's shape)
  std::uint64_t file_size = 0;
  std::uint64_t uncompressed_bytes = 0;
  bool compressed = false;
};

// Reads the whole file. Throws ssgd::InputError naming the file and, for
// problems inside traceEvents, the event index (InputLocation::record):
// - the file ends early, plain or gzip: "... is truncated ...", with the
//   uncompressed byte offset where the JSON stops;
// - a JSON syntax error: the byte offset and what the parser expected;
// - a damaged gzip stream: GzipReader's message, with the event index.
KinetoReadResult read_kineto_json(const std::filesystem::path& path,
                                  const KinetoReaderOptions& options);

}  // namespace ssgd::trace
