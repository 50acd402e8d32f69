#pragma once
// The one trace session of a traced process, shared by every way the tracer
// enters it: the CUDA injection entry point (tracer/inject) and the NCCL
// profiler plugin (tracer/nccl), whichever runs first. It opens the process's
// TraceSink from the environment that `ssgd trace` sets:
//
//   SSGD_TRACER_OUT              folder of the trace files (default "ssgd-trace")
//   SSGD_TRACER_FLUSH_MS         milliseconds between flushes (default 1000; 0: at exit only)
//   SSGD_TRACER_SIGNALS          0: no flush on fatal signals (default 1)
//   SSGD_TRACER_SIGNAL_FLUSH_MS  how long a fatal signal waits for its flush (default 2000)
//   SSGD_TRACER_CLOCK_SERVER      HOST:PORT of the clock server (clock_exchange.h):
//                                 measure the clock offset at open and at close
//   SSGD_TRACER_CLOCK_REFERENCE   the reference host name to store, instead of
//                                 the name the server sends
//   SSGD_TRACER_CLOCK_TIMEOUT_MS  time budget of each measurement (default 500)
//   SSGD_TRACER_HOSTNAME          for tests: the host name written in the header,
//                                 instead of gethostname()'s
//
// and the rank from the launcher's variables (rank_env.h). The file is
// closed at exit (atexit) or by shutdown(); on a fatal signal it is flushed
// first (fatal_signal_flush.h), installed when the session opens. Every function is noexcept and
// cheap after the first call; when the session could not be opened (an
// unwritable folder, a bad setting), append() drops and counts, and the
// reason is logged once, never thrown.

#include <cstdint>
#include <mutex>
#include <string>

#include "tracer/core/activity_record.h"
#include "tracer/core/capture_calibration.h"
#include "tracer/core/rank_env.h"
#include "tracer/core/record_buffer_pool.h"
#include "tracer/core/trace_sink.h"

namespace ssgd::tracer {

struct SessionSettings {
  std::string out_dir = "ssgd-trace";
  std::int64_t flush_ms = 1000;
  ClockCalibrationSettings clock;
  std::string hostname;  // empty: gethostname()
  bool signals = true;
  std::int64_t signal_flush_ms = 2000;
  std::vector<std::string> problems;  // settings that were malformed and set aside, with why
};

// Reads the settings above through `env`; a malformed value keeps the
// default and is listed in `problems`.
SessionSettings read_session_settings(const EnvLookup& env) noexcept;

class ProcessSession {
 public:
  // The process's session, opened on the first call (thread-safe).
  static ProcessSession& get() noexcept;

  // Appends through the calling thread's producer. kDropped when the
  // session is not open or no buffer was free.
  AppendStatus append(const ActivityRecord& record) noexcept;
  // Counts records the source lost before appending them (CUPTI's drops)
  // in the footer's dropped_records; counted as dropped_while_closed when
  // the session is not open.
  void add_dropped(std::uint64_t n) noexcept;
  // The NCCL plugin's totals, for the footer (TraceSink::set_nccl_plugin_counts);
  // the plugin sets them from its close hook.

  void set_nccl_plugin_counts(const NcclPluginCounts& counts) noexcept;
  // Writes everything so far to the file (exit paths only: it waits).
  void flush() noexcept;
  // The hook the writer thread calls before the flush of a fatal signal
  // (TraceSink::set_signal_flush_hook); the CUPTI source sets it.
  void set_signal_flush_hook(void (*hook)() noexcept) noexcept;
  // Closes the file (footer, rename); later appends are dropped. Called at
  // exit; safe to call more than once. Runs the close hooks first.
  void shutdown() noexcept;
  // A function shutdown() calls before it closes the file, while appends
  // still count (the NCCL plugin: its unfinished collectives and counters),
  // whatever the order of the exit handlers. Adding one twice adds it once.
  // False when all kMaxCloseHooks are taken.
  bool add_close_hook(void (*hook)() noexcept) noexcept;
  static constexpr std::size_t kMaxCloseHooks = 4;

  [[nodiscard]] bool is_open() const noexcept { return sink_ != nullptr; }
  [[nodiscard]] std::int32_t rank() const noexcept { return rank_.rank; }
  [[nodiscard]] std::uint64_t dropped_while_closed() const noexcept { return dropped_closed_; }
  [[nodiscard]] TraceSink* sink() noexcept { return sink_.get(); }

 private:
  ProcessSession() noexcept;
  RankEnv rank_;
  std::unique_ptr<CaptureCalibration> calibration_;  // null without a clock server
  std::unique_ptr<TraceSink> sink_;
  std::atomic<bool> closed_{false};
  std::atomic<std::uint64_t> dropped_closed_{0};
  // For appends after the calling thread's own producer was destroyed.
  std::mutex late_mutex_;
  RecordProducer late_producer_;
  std::atomic<void (*)() noexcept> close_hooks_[kMaxCloseHooks] = {};
};

}  // namespace ssgd::tracer
