#pragma once
// The tracer's writer: one per traced process. Producers append activity
// records through RecordProducers (record_buffer_pool.h); a writer thread
// drains completed buffers, drops and counts records whose timestamps are
// invalid (timestamp_check.h), converts the rest (event_conversion.h) and
// appends them to `<out_dir>/rank-<r>.ssgdt` through trace::TraceWriter.
//
// The file is written under the TraceWriter's temporary name
// (`rank-<r>.ssgdt.tmp.<pid>.<n>`) and renamed into place by close(). Every
// flush (every `flush_interval`, on flush(), at close()) ends the current
// chunk and hands it to the OS, and chunks are self-contained, so a process
// killed at any moment leaves a temporary file that TraceReader reads up to
// the last flush (it reports it as cut short). The header, with the clock
// domain, is handed to the OS at open().
//
// The tracer must never harm the program it traces. No public function
// throws; they return a status and count what went wrong. Producers never
// block and never allocate (RecordBufferPool). Nothing is written to stdout;
// diagnostics go to `log` when set, else to stderr only when the environment
// variable SSGD_TRACER_LOG is set and not "0". flush() and close() wait for
// the writer thread and do I/O: call them from exit paths, not from
// callbacks on the program's hot threads.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "tracer/core/host_clock.h"
#include "tracer/core/record_buffer_pool.h"
#include "traces/proto/capture_metadata.pb.h"
#include "traces/trace_writer.h"

namespace ssgd::tracer {

using LogCallback = std::function<void(std::string_view message)>;

struct TraceSinkOptions {
  // Folder of the trace files; created when missing.
  std::filesystem::path out_dir;
  std::int32_t rank = 0;
  std::int32_t world_size = 0;  // 0 = unknown
  // Tool, versions, framework, command line, provenance... The sink sets
  // rank, world_size, process_id, capture_start_ns and hosts[0] (host name
  // and clock domain) from the fields here and the clock sample.
  trace::v1::CaptureMetadata metadata;
  // The clock the event timestamps follow; sampled at open().
  trace::v1::ClockDomain::Kind event_clock = trace::v1::ClockDomain::MONOTONIC_RAW;
  // Replaces the sample (tests: byte-identical files).
  std::optional<HostClockSample> clock_sample;
  // Records may start up to this long before open() and end up to this
  // long after it; anything outside is an invalid timestamp.
  std::int64_t window_before_ns = 60'000'000'000;                 // 1 minute
  std::int64_t window_after_ns = 30LL * 24 * 3600 * 1'000'000'000;  // 30 days
  RecordBufferOptions buffers;
  trace::TraceWriterOptions writer;
  // Time between flushes of the file; zero flushes only on flush() and close().
  std::chrono::milliseconds flush_interval{1000};
  // How often the writer thread looks for completed buffers.
  std::chrono::milliseconds poll_interval{5};
  // Where diagnostics go (see above).
  LogCallback log;
};

// What the NCCL profiler plugin (tracer/nccl) lost or set aside, totals
// since it started; the sink writes them into the footer at close().
struct NcclPluginCounts {
  std::uint64_t events_dropped = 0;       // Footer.nccl_events_dropped
  std::uint64_t collectives_dropped = 0;  // of those, collectives: into dropped_records
  std::uint64_t incomplete_collectives = 0;
  std::uint64_t orphan_events = 0;
};

enum class SinkStatus : std::uint8_t {
  kOk,
  kClosed,  // the sink was closed already
  kError,   // an I/O error: see the log; the counts say what was lost
};

// What became of the records so far.
struct SinkCounters {
  std::uint64_t appended = 0;            // stored in a buffer by a producer
  std::uint64_t dropped = 0;             // lost: no buffer, no slot, after a write error,
                                         // breaking the trace's rules (traces/event_rules.h), or
                                         // by the source itself (add_dropped, NCCL collectives)
  std::uint64_t invalid_timestamps = 0;  // discarded by the writer
  std::uint64_t written = 0;             // handed to the trace writer
  std::uint64_t truncated_names = 0;
  std::uint64_t write_errors = 0;
};

class TraceSink {
 public:
  // Creates the folder and the temporary file, writes the header and starts
  // the writer thread. Returns null (with `error` set) when that fails.
  static std::unique_ptr<TraceSink> open(TraceSinkOptions options, std::string* error) noexcept;
  // Closes the sink if close() was not called.
  ~TraceSink();
  TraceSink(const TraceSink&) = delete;
  TraceSink& operator=(const TraceSink&) = delete;

  // A producer for the calling thread (see RecordBufferPool::producer).
  RecordProducer producer() noexcept;

  // Takes every producer's partly filled buffer, writes all records so far
  // as a chunk and hands the file's bytes to the OS.
  SinkStatus flush() noexcept;
  // Stops the writer thread, writes the last records and the footer (with
  // the dropped and invalid counts) and renames the file into place.
  // Producers should be done: records appended afterwards are dropped. After
  // a write error (kError) there is no footer: the counts it would hold are
  // logged, and the temporary file is left as it is, readable up to its last
  // whole chunk while this sink lives (the trace::TraceWriter removes it when
  // the sink is destroyed; the process session never destroys its sink).
  SinkStatus close() noexcept;

  // Counts `n` records lost before they reached a producer (CUPTI's own
  // drops, cuptiActivityGetNumDroppedRecords); they go into `dropped` and
  // the footer's dropped_records.
  void add_dropped(std::uint64_t n) noexcept;
  // Replaces the NCCL plugin's counts (totals) written into the footer;
  // collectives_dropped counts in `dropped` and dropped_records. Records
  // the plugin handed to a full sink are counted by the sink already.
  void set_nccl_plugin_counts(const NcclPluginCounts& counts) noexcept;

  // The flush of a fatal signal (fatal_signal_flush.h). These three are
  // async-signal-safe: lock-free atomics and gettid(2), no lock, no
  // allocation. The writer thread sees the request within `poll_interval`
  // (nothing wakes it: notifying a condition variable is not signal-safe),
  // calls the signal flush hook, takes every producer's partly filled
  // buffer, writes all records so far as a chunk and hands it to the OS.
  // Returns the ticket to wait for; 0 when no writer thread runs.
  std::uint64_t request_signal_flush() noexcept;
  // True once the writer finished the flush of `ticket`, or has exited.
  [[nodiscard]] bool signal_flush_done(std::uint64_t ticket) const noexcept;
  // True when called on the writer thread itself (a fault there must not
  // wait for the writer).
  [[nodiscard]] bool on_writer_thread() const noexcept;
  // Called by the writer thread before a signal flush, so that a source can
  // hand over what it holds (the CUPTI source: cuptiActivityFlushAll). Null:
  // none. Must not throw; it may block (the signal handler waits only so long).
  void set_signal_flush_hook(void (*hook)() noexcept) noexcept;

  // The clock calibration for the footer (Footer.clock_calibration), set
  // before close(); the last one set is written.
  void set_clock_calibration(const trace::v1::ClockCalibration& calibration) noexcept;

  [[nodiscard]] SinkCounters counters() const noexcept;
  // `<out_dir>/rank-<r>.ssgdt`, and the temporary name until close().
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] const std::filesystem::path& temporary_path() const { return temporary_path_; }

 private:
  struct Shared;
  TraceSink() = default;
  void run_writer() noexcept;
  void drain() noexcept;
  void write_to_os() noexcept;
  void log(std::string_view message) const noexcept;

  TraceSinkOptions options_;
  std::filesystem::path path_;
  std::filesystem::path temporary_path_;
  std::unique_ptr<RecordBufferPool> pool_;
  std::unique_ptr<trace::TraceWriter> writer_;
  std::unique_ptr<Shared> shared_;
};

// Writes "ssgd-tracer: <message>" to stderr, in one write(2), when the
// environment variable SSGD_TRACER_LOG is set and not "0"; else nothing.
void log_to_stderr_if_asked(std::string_view message) noexcept;

// `<out_dir>/rank-<rank>.ssgdt`.
std::filesystem::path rank_trace_path(const std::filesystem::path& out_dir, std::int32_t rank);

}  // namespace ssgd::tracer
