#pragma once
// Chrome trace-event JSON, the format that ui.perfetto.dev and chrome://tracing
// open, written as a stream: `{"displayTimeUnit":"ns","traceEvents":[`, one
// event object per line, then `]}`. Shared by the simulator's timeline
// (presentation/report/timeline.h) and the trace exporter
// (traces/export/perfetto/perfetto_export.h), so that both format times and
// escape names the same way.
//
// Times are integer nanoseconds written as microseconds with exactly three
// decimals ("ts":1.500 for 1500 ns), from integers, never through floating
// point, so nanoseconds survive. The output is gzip-compressed through
// GzipWriter when asked (`.json.gz`, which Perfetto opens as is).

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>

namespace ssgd {

class AtomicFile;
class GzipWriter;

// `s` with '"', '\\' and control characters escaped for a JSON string.
std::string json_escape(std::string_view s);
// Exact decimal microseconds with three decimals: 1500 -> "1.500", -1 -> "-0.001".
std::string chrome_micros(std::int64_t ns);

class ChromeTraceWriter {
 public:
  // Writes the opening of the document to `out`, through gzip when `gzip`.
  ChromeTraceWriter(std::ostream& out, bool gzip);
  ~ChromeTraceWriter();
  ChromeTraceWriter(const ChromeTraceWriter&) = delete;
  ChromeTraceWriter& operator=(const ChromeTraceWriter&) = delete;

  // One event: a whole JSON object, `{...}`.
  void event(std::string_view json_object);

  // Metadata events ("ph":"M"): names and order of processes and tracks.
  void process_name(std::int64_t pid, std::string_view name);
  void process_sort_index(std::int64_t pid, std::int64_t index);
  void thread_name(std::int64_t pid, std::int64_t tid, std::string_view name);
  void thread_sort_index(std::int64_t pid, std::int64_t tid, std::int64_t index);

  // A complete slice ("ph":"X"). `args` is the inside of the args object,
  // already JSON (`"bytes":4,"layer":"fc"`); no args object when empty.
  void slice(std::string_view name, std::string_view category, std::int64_t pid,
             std::int64_t tid, std::int64_t start_ns, std::int64_t duration_ns,
             std::string_view args = {});
  // A thread-scoped instant event ("ph":"i","s":"t").
  void instant(std::string_view name, std::string_view category, std::int64_t pid,
               std::int64_t tid, std::int64_t at_ns, std::string_view args = {});
  // The two ends of a flow arrow: "ph":"s" binds to the slice enclosing
  // `at_ns` on its track, "ph":"f" with "bp":"e" to the slice enclosing its
  // own `at_ns`. `id` must be unique in the file.
  void flow_start(std::uint64_t id, std::string_view name, std::string_view category,
                  std::int64_t pid, std::int64_t tid, std::int64_t at_ns);
  void flow_end(std::uint64_t id, std::string_view name, std::string_view category,
                std::int64_t pid, std::int64_t tid, std::int64_t at_ns);

  // Closes the document and, with gzip, writes the trailer. Throws
  // std::runtime_error when the stream failed. Nothing may be written after.
  void finish();

  [[nodiscard]] std::uint64_t events() const { return events_; }

 private:
  void write(std::string_view bytes);
  std::ostream& out_;
  std::unique_ptr<GzipWriter> gzip_;
  std::uint64_t events_ = 0;
  bool finished_ = false;
  int error_ = 0;  // errno of the first failed write
};

// A Chrome-trace JSON output file: an AtomicFile (nothing is left behind
// unless commit() is reached) written through gzip when the name ends in
// ".gz".
class ChromeTraceFile {
 public:
  explicit ChromeTraceFile(const std::filesystem::path& path);
  ~ChromeTraceFile();
  ChromeTraceFile(const ChromeTraceFile&) = delete;
  ChromeTraceFile& operator=(const ChromeTraceFile&) = delete;

  ChromeTraceWriter& writer() { return *writer_; }
  // finish(), then renames the file into place.
  void commit();

 private:
  std::unique_ptr<AtomicFile> file_;
  std::unique_ptr<ChromeTraceWriter> writer_;
};

}  // namespace ssgd
