#include "tracer/core/trace_sink.h"

#include <fmt/format.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <csignal>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

#include "tracer/core/event_conversion.h"
#include "tracer/core/timestamp_check.h"
#include "traces/event_rules.h"

namespace ssgd::tracer {

namespace v1 = trace::v1;

// What the caller's threads and the writer thread share.
struct TraceSink::Shared {
  std::mutex mutex;
  std::condition_variable wake;  // the writer waits on it
  std::condition_variable done;  // flush() waits on it
  std::uint64_t flush_requested = 0;
  std::uint64_t flush_done = 0;
  bool stop = false;
  bool writer_exited = false;
  bool closed = false;
  std::mutex close_mutex;
  std::thread thread;

  SessionWindow window;
  v1::Event event;  // reused by the writer thread
  std::atomic<std::uint64_t> invalid{0};
  std::atomic<std::uint64_t> written{0};
  std::atomic<std::uint64_t> written_when_flushed{0};  // `written` at the last flush to the OS
  std::atomic<std::uint64_t> dropped_after_error{0};
  // Records the trace's rules refuse (traces/event_rules.h: a name that is
  // not UTF-8, a size beyond 2^50): dropped one by one, the writer goes on.
  std::atomic<std::uint64_t> broke_rules{0};
  std::atomic<std::uint64_t> dropped_by_source{0};
  std::atomic<std::uint64_t> nccl_events_dropped{0};
  std::atomic<std::uint64_t> nccl_collectives_dropped{0};
  std::atomic<std::uint64_t> nccl_incomplete{0};
  std::atomic<std::uint64_t> nccl_orphans{0};
  std::atomic<std::uint64_t> write_errors{0};
  std::atomic<bool> writer_failed{false};  // set by the writer thread (or close(), after join)
  std::optional<v1::ClockCalibration> clock_calibration;  // under `mutex`

  // Signal flushes (request_signal_flush): written by signal handlers and
  // the writer thread only through these lock-free atomics.
  std::atomic<std::uint64_t> signal_requested{0};
  std::atomic<std::uint64_t> signal_done{0};
  std::atomic<bool> writer_alive{false};  // from open() until the writer thread exits
  std::atomic<pid_t> writer_tid{0};        // the writer thread's, once it runs
  std::atomic<void (*)() noexcept> signal_hook{nullptr};
};

static_assert(std::atomic<std::uint64_t>::is_always_lock_free &&
                  std::atomic<pid_t>::is_always_lock_free &&
                  std::atomic<bool>::is_always_lock_free &&
                  std::atomic<void (*)() noexcept>::is_always_lock_free,
              "signal handlers may touch only lock-free atomics");

namespace {
pid_t current_tid() noexcept { return static_cast<pid_t>(::syscall(SYS_gettid)); }
}  // namespace

std::filesystem::path rank_trace_path(const std::filesystem::path& out_dir, std::int32_t rank) {
  return out_dir / fmt::format("rank-{}.ssgdt", rank);
}

void log_to_stderr_if_asked(std::string_view message) noexcept {
  const char* v = std::getenv("SSGD_TRACER_LOG");
  if (v == nullptr || *v == '\0' || std::string_view(v) == "0") return;
  try {
    const std::string line = fmt::format("ssgd-tracer: {}\n", message);
    // One write(2) per line, so lines from several threads do not interleave.
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
  } catch (...) {
  }
}

namespace {

v1::CaptureMetadata header_metadata(const TraceSinkOptions& o, const HostClockSample& clock) {
  v1::CaptureMetadata m = o.metadata;
  if (m.tool().empty()) m.set_tool("ssgd-tracer");
  if (m.provenance().empty()) m.set_provenance("captured");
  m.set_rank(o.rank);
  m.set_world_size(o.world_size);
  m.set_process_id(clock.process_id);
  m.set_capture_start_ns(clock.realtime_ns);
  v1::Host* host = m.hosts_size() > 0 ? m.mutable_hosts(0) : m.add_hosts();
  if (host->hostname().empty()) host->set_hostname(clock.hostname);
  v1::ClockDomain* domain = host->mutable_clock();
  domain->set_kind(clock.kind);
  if (clock.kind != v1::ClockDomain::REALTIME) {
    domain->set_realtime_offset_ns(clock.realtime_ns - clock.event_clock_ns);
    domain->set_realtime_offset_uncertainty_ns(clock.uncertainty_ns);
  }
  return m;
}

}  // namespace

void TraceSink::log(std::string_view message) const noexcept {
  if (options_.log) {
    try {
      options_.log(message);
    } catch (...) {
    }
    return;
  }
  log_to_stderr_if_asked(message);
}

std::unique_ptr<TraceSink> TraceSink::open(TraceSinkOptions options, std::string* error) noexcept {
  std::unique_ptr<TraceSink> sink;
  try {
    sink.reset(new TraceSink());
    sink->options_ = std::move(options);
    const TraceSinkOptions& o = sink->options_;
    const HostClockSample clock = o.clock_sample ? *o.clock_sample : sample_host_clock(o.event_clock);
    sink->shared_ = std::make_unique<Shared>();
    sink->shared_->window = {clock.event_clock_ns - o.window_before_ns,
                             clock.event_clock_ns + o.window_after_ns};
    sink->pool_ = std::make_unique<RecordBufferPool>(o.buffers);
    std::filesystem::create_directories(o.out_dir);
    sink->path_ = rank_trace_path(o.out_dir, o.rank);
    sink->writer_ =
        std::make_unique<trace::TraceWriter>(sink->path_, header_metadata(o, clock), o.writer);
    sink->temporary_path_ = sink->writer_->temporary_path();
    sink->writer_->flush();  // the header reaches the file before any chunk can
    sink->shared_->writer_alive.store(true, std::memory_order_release);
    // The writer thread is born with the process-directed fatal signals
    // blocked (it inherits this thread's mask), so the kernel hands them to
    // another thread: one it took before it had recorded its own tid would
    // have waited, in the fatal-signal handler, for a flush only it could do
    // (fatal_signal_flush.h).
    sigset_t process_directed;
    sigset_t previous;
    sigemptyset(&process_directed);
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaddset(&process_directed, sig);
    ::pthread_sigmask(SIG_BLOCK, &process_directed, &previous);
    try {
      sink->shared_->thread = std::thread([s = sink.get()] { s->run_writer(); });
    } catch (...) {
      ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
      sink->shared_->writer_alive.store(false, std::memory_order_release);
      throw;
    }
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  } catch (const std::exception& e) {
    const std::string message = fmt::format("cannot open the trace in '{}': {}",
                                            sink ? sink->options_.out_dir.string() : "", e.what());
    if (sink) sink->log(message);
    if (error != nullptr) *error = message;
    return nullptr;
  } catch (...) {
    if (error != nullptr) *error = "cannot open the trace: unknown error";
    return nullptr;
  }
  return sink;
}

TraceSink::~TraceSink() {
  if (shared_ && shared_->thread.joinable()) close();
}

RecordProducer TraceSink::producer() noexcept { return pool_->producer(); }

void TraceSink::drain() noexcept {
  Shared& s = *shared_;
  std::uint32_t index = 0;
  while (pool_->pop_completed(index)) {
    const RecordBuffer& buffer = pool_->buffer(index);
    for (std::size_t i = 0; i < buffer.size(); ++i) {
      const ActivityRecord& record = buffer[i];
      const TimestampVerdict verdict = check_timestamps(record, s.window);
      if (verdict != TimestampVerdict::kValid && verdict != TimestampVerdict::kNoTime) {
        s.invalid.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      if (s.writer_failed) {
        s.dropped_after_error.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      try {
        to_event(record, options_.rank, s.event);
        writer_->append(s.event);
        s.written.fetch_add(1, std::memory_order_relaxed);
      } catch (const trace::InvalidTraceContent& e) {
        if (s.broke_rules.fetch_add(1, std::memory_order_relaxed) == 0) {
          log(fmt::format("a {} record breaks the trace's rules and is dropped ({}); further ones "
                          "are counted in the footer's dropped_records",
                          activity_kind_name(record.kind()), e.what()));
        }
      } catch (const std::exception& e) {
        s.writer_failed = true;
        s.write_errors.fetch_add(1, std::memory_order_relaxed);
        s.dropped_after_error.fetch_add(1, std::memory_order_relaxed);
        log(fmt::format("writing '{}' failed, further records are dropped: {}",
                        temporary_path_.string(), e.what()));
      }
    }
    pool_->recycle(index);
  }
}

void TraceSink::write_to_os() noexcept {
  Shared& s = *shared_;
  if (s.writer_failed) return;
  try {
    writer_->flush();
    s.written_when_flushed.store(s.written.load(std::memory_order_relaxed),
                                 std::memory_order_relaxed);
  } catch (const std::exception& e) {
    s.writer_failed = true;
    s.write_errors.fetch_add(1, std::memory_order_relaxed);
    log(fmt::format("flushing '{}' failed, further records are dropped: {}",
                    temporary_path_.string(), e.what()));
  }
}

void TraceSink::run_writer() noexcept {
  Shared& s = *shared_;
  s.writer_tid.store(current_tid(), std::memory_order_release);
  using Clock = std::chrono::steady_clock;
  const auto interval = options_.flush_interval;
  auto next_flush = Clock::now() + interval;
  const auto signalled = [&s] {
    return s.signal_requested.load(std::memory_order_acquire) >
           s.signal_done.load(std::memory_order_relaxed);
  };
  for (;;) {
    std::uint64_t requested = 0;
    bool stop = false;
    {
      std::unique_lock lock(s.mutex);
      s.wake.wait_for(lock, options_.poll_interval,
                      [&] { return s.stop || s.flush_requested > s.flush_done || signalled(); });
      requested = s.flush_requested;
      stop = s.stop;
    }
    // Read before the buffers are taken: every record appended before the
    // request is then in this flush.
    const std::uint64_t signal_ticket = s.signal_requested.load(std::memory_order_acquire);
    const bool by_signal = signal_ticket > s.signal_done.load(std::memory_order_relaxed);
    if (by_signal) {
      if (auto* hook = s.signal_hook.load(std::memory_order_acquire)) hook();
    }
    const bool periodic = interval.count() > 0 && Clock::now() >= next_flush;
    const bool asked = requested > s.flush_done;  // flush_done is only written here
    // A producer found no free buffer: take the partly filled ones too (the
    // records go into the current chunk; nothing more is written to the OS).
    const bool starved = pool_->take_starved();
    if (asked || periodic || by_signal || starved) pool_->collect_partial();
    drain();
    if (asked || periodic || by_signal) {
      write_to_os();
      next_flush = Clock::now() + interval;
    }
    if (by_signal) s.signal_done.store(signal_ticket, std::memory_order_release);
    {
      std::lock_guard lock(s.mutex);
      s.flush_done = requested;
      if (stop) s.writer_exited = true;
    }
    s.done.notify_all();
    if (stop) {
      s.writer_alive.store(false, std::memory_order_release);
      return;
    }
  }
}

std::uint64_t TraceSink::request_signal_flush() noexcept {
  Shared& s = *shared_;
  if (!s.writer_alive.load(std::memory_order_acquire)) return 0;
  return s.signal_requested.fetch_add(1, std::memory_order_acq_rel) + 1;
}

bool TraceSink::signal_flush_done(std::uint64_t ticket) const noexcept {
  const Shared& s = *shared_;
  return s.signal_done.load(std::memory_order_acquire) >= ticket ||
         !s.writer_alive.load(std::memory_order_acquire);
}

bool TraceSink::on_writer_thread() const noexcept {
  return shared_->writer_tid.load(std::memory_order_acquire) == current_tid();
}

void TraceSink::set_signal_flush_hook(void (*hook)() noexcept) noexcept {
  shared_->signal_hook.store(hook, std::memory_order_release);
}

SinkStatus TraceSink::flush() noexcept {
  Shared& s = *shared_;
  const std::uint64_t errors_before = s.write_errors.load();
  {
    std::unique_lock lock(s.mutex);
    if (s.stop) return SinkStatus::kClosed;
    const std::uint64_t ticket = ++s.flush_requested;
    s.wake.notify_one();
    s.done.wait(lock, [&] { return s.flush_done >= ticket || s.writer_exited; });
  }
  return s.write_errors.load() != errors_before || s.writer_failed ? SinkStatus::kError
                                                                    : SinkStatus::kOk;
}

SinkStatus TraceSink::close() noexcept {
  Shared& s = *shared_;
  std::lock_guard close_lock(s.close_mutex);
  if (s.closed) return SinkStatus::kClosed;
  {
    std::lock_guard lock(s.mutex);
    s.stop = true;
  }
  s.wake.notify_one();
  if (s.thread.joinable()) s.thread.join();
  s.closed = true;

  pool_->collect_partial();
  drain();
  if (s.writer_failed) {
    // No footer can be written: the counts it would hold go to the log.
    try {
      const SinkCounters c = counters();
      log(fmt::format(
          "'{}' ends at the write error, without a footer: {} records dropped after the write "
          "error, and up to {} records handed to the file since its last flush are lost "
          "({} dropped in all, {} invalid timestamps); it reads up to its last whole chunk",
          temporary_path_.string(), s.dropped_after_error.load(),
          c.written - s.written_when_flushed.load(), c.dropped, c.invalid_timestamps));
    } catch (...) {
    }
    return SinkStatus::kError;
  }
  const SinkCounters c = counters();
  try {
    writer_->add_dropped(c.dropped);
    writer_->add_invalid_timestamps(c.invalid_timestamps);
    {
      std::lock_guard lock(s.mutex);
      if (s.clock_calibration) writer_->set_clock_calibration(*s.clock_calibration);
    }
    writer_->add_nccl_plugin_counts(s.nccl_events_dropped.load(), s.nccl_incomplete.load(),
                                    s.nccl_orphans.load());
    writer_->close();
  } catch (const std::exception& e) {
    s.write_errors.fetch_add(1, std::memory_order_relaxed);
    try {
      log(fmt::format("closing '{}' failed: {}; the footer ({} records dropped, {} invalid "
                      "timestamps) is lost and '{}' reads up to its last whole chunk",
                      path_.string(), e.what(), c.dropped, c.invalid_timestamps,
                      temporary_path_.string()));
    } catch (...) {
    }
    return SinkStatus::kError;
  }
  return SinkStatus::kOk;
}

void TraceSink::add_dropped(std::uint64_t n) noexcept {
  shared_->dropped_by_source.fetch_add(n, std::memory_order_relaxed);
}

void TraceSink::set_clock_calibration(const v1::ClockCalibration& calibration) noexcept {
  try {
    std::lock_guard lock(shared_->mutex);
    shared_->clock_calibration = calibration;
  } catch (...) {
    log("cannot keep the clock calibration for the footer");
  }
}

void TraceSink::set_nccl_plugin_counts(const NcclPluginCounts& counts) noexcept {
  Shared& s = *shared_;
  s.nccl_events_dropped.store(counts.events_dropped, std::memory_order_relaxed);
  s.nccl_collectives_dropped.store(counts.collectives_dropped, std::memory_order_relaxed);
  s.nccl_incomplete.store(counts.incomplete_collectives, std::memory_order_relaxed);
  s.nccl_orphans.store(counts.orphan_events, std::memory_order_relaxed);
}

SinkCounters TraceSink::counters() const noexcept {
  const Shared& s = *shared_;
  const PoolCounters p = pool_->counters();
  SinkCounters c;
  c.appended = p.appended;
  c.dropped = p.dropped + s.dropped_after_error.load(std::memory_order_relaxed) +
              s.broke_rules.load(std::memory_order_relaxed) +
              s.dropped_by_source.load(std::memory_order_relaxed) +
              s.nccl_collectives_dropped.load(std::memory_order_relaxed);
  c.invalid_timestamps = s.invalid.load(std::memory_order_relaxed);
  c.written = s.written.load(std::memory_order_relaxed);
  c.truncated_names = p.truncated_names;
  c.write_errors = s.write_errors.load(std::memory_order_relaxed);
  return c;
}

}  // namespace ssgd::tracer
