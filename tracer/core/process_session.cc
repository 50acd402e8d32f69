#include "tracer/core/process_session.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "tracer/core/fatal_signal_flush.h"
#include "tracer/core/rank_env.h"

namespace ssgd::tracer {

namespace v1 = trace::v1;

namespace {

void close_at_exit() { ProcessSession::get().shutdown(); }

// A host name as gethostname() could return it: 1 to 255 printable
// characters, no space.
bool plausible_hostname(const std::string& name) {
  return !name.empty() && name.size() <= 255 &&
         std::all_of(name.begin(), name.end(), [](char c) { return c > ' ' && c < 127; });
}

void read_clock_settings(const EnvLookup& env, SessionSettings& s) {
  if (auto server = env("SSGD_TRACER_CLOCK_SERVER")) {
    std::string why;
    s.clock.server = parse_clock_server_address(*server, why);
    if (!s.clock.server) {
      s.problems.push_back("SSGD_TRACER_CLOCK_SERVER=" + why + "; no clock calibration");
    }
  }
  if (auto reference = env("SSGD_TRACER_CLOCK_REFERENCE")) {
    if (!plausible_hostname(*reference)) {
      s.problems.push_back("SSGD_TRACER_CLOCK_REFERENCE='" + *reference +
                           "' is not a host name; storing the name the clock server sends");
    } else if (!s.clock.server) {
      s.problems.push_back("SSGD_TRACER_CLOCK_REFERENCE is set but no usable "
                           "SSGD_TRACER_CLOCK_SERVER; no clock calibration");
    } else {
      s.clock.reference = *reference;
    }
  }
  if (auto ms = env("SSGD_TRACER_CLOCK_TIMEOUT_MS")) {
    std::string why;
    const auto v = parse_rank_value(*ms, why);  // a non-negative int32
    if (v && (*v < 1 || *v > 60'000)) why = "is not in 1..60000";
    if (v && why.empty()) {
      s.clock.budget = std::chrono::milliseconds(*v);
    } else {
      s.problems.push_back("SSGD_TRACER_CLOCK_TIMEOUT_MS='" + *ms + "' " + why + "; using 500");
    }
  }
  if (auto name = env("SSGD_TRACER_HOSTNAME")) {
    if (plausible_hostname(*name)) {
      s.hostname = *name;
    } else {
      s.problems.push_back("SSGD_TRACER_HOSTNAME='" + *name +
                           "' is not a host name; using gethostname()");
    }
  }
}

}  // namespace

SessionSettings read_session_settings(const EnvLookup& env) noexcept {
  SessionSettings s;
  try {
    if (auto out = env("SSGD_TRACER_OUT")) {
      if (out->empty()) {
        s.problems.push_back("SSGD_TRACER_OUT is empty; writing to ssgd-trace");
      } else {
        s.out_dir = *out;
      }
    }
    if (auto ms = env("SSGD_TRACER_FLUSH_MS")) {
      std::string why;
      const auto v = parse_rank_value(*ms, why);  // a non-negative int32
      if (v) {
        s.flush_ms = *v;
      } else {
        s.problems.push_back("SSGD_TRACER_FLUSH_MS='" + *ms + "' " + why + "; using 1000");
      }
    }
    read_clock_settings(env, s);
    read_switch(env, "SSGD_TRACER_SIGNALS", s.signals, "flushing on fatal signals", s.problems);
    if (auto ms = env("SSGD_TRACER_SIGNAL_FLUSH_MS")) {
      std::string why;
      const auto v = parse_rank_value(*ms, why);  // a non-negative int32
      if (v) {
        s.signal_flush_ms = *v;
      } else {
        s.problems.push_back("SSGD_TRACER_SIGNAL_FLUSH_MS='" + *ms + "' " + why +
                             "; using 2000");
      }
    }
  } catch (...) {
    s.problems.push_back("could not read the settings (out of memory); using the defaults");
  }
  return s;
}

ProcessSession::ProcessSession() noexcept {
  try {
    rank_ = detect_rank(process_environment);
    const SessionSettings settings = read_session_settings(process_environment);
    for (const auto& p : settings.problems) log_to_stderr_if_asked(p);
    for (const auto& p : rank_.skipped) log_to_stderr_if_asked(p);
    TraceSinkOptions o;
    o.out_dir = settings.out_dir;
    o.rank = rank_.rank;
    o.world_size = rank_.world_size.value.value_or(0);
    o.flush_interval = std::chrono::milliseconds(settings.flush_ms);
    o.log = log_to_stderr_if_asked;
    if (!settings.hostname.empty()) o.metadata.add_hosts()->set_hostname(settings.hostname);
    if (settings.clock.server) {
      // Before the header is written, which holds the start estimate.
      const auto kind = o.event_clock;
      calibration_ = std::make_unique<CaptureCalibration>(
          settings.clock, [kind] { return read_clock_ns(kind); }, log_to_stderr_if_asked);
      if (auto c = calibration_->measure_start()) {
        v1::Host* host = o.metadata.hosts_size() > 0 ? o.metadata.mutable_hosts(0)
                                                     : o.metadata.add_hosts();
        *host->mutable_clock()->mutable_calibration() = *c;
      } else {
        o.metadata.set_provenance("captured; " + calibration_->note());
      }
    }
    std::string error;
    sink_ = TraceSink::open(std::move(o), &error);
    if (!sink_) {
      log_to_stderr_if_asked("tracing is off: " + error);
    } else if (settings.signals) {
      install_fatal_signal_flush(*sink_, std::chrono::milliseconds(settings.signal_flush_ms));
    }
  } catch (...) {
    sink_.reset();
    log_to_stderr_if_asked("tracing is off: could not open the session");
  }
}

ProcessSession& ProcessSession::get() noexcept {
  static ProcessSession* session = [] {
    auto* s = new ProcessSession();  // never destroyed: threads may append during exit
    std::atexit(close_at_exit);
    return s;
  }();
  return *session;
}

namespace {

// Set when the calling thread's producer has been destroyed. exit() runs the
// main thread's thread_local destructors before the atexit handlers, so the
// exit-time appends (the CUPTI flush, the NCCL plugin's unfinished
// collectives) come after it. A bool has no destructor: it stays readable.
thread_local bool t_producer_gone = false;

struct ThreadProducer {
  RecordProducer producer;
  ~ThreadProducer() { t_producer_gone = true; }
};

}  // namespace

AppendStatus ProcessSession::append(const ActivityRecord& record) noexcept {
  if (!sink_ || closed_.load(std::memory_order_acquire)) {
    dropped_closed_.fetch_add(1, std::memory_order_relaxed);
    return AppendStatus::kDropped;
  }
  if (t_producer_gone) {
    // Exit paths only: one shared producer; a thread that would have to
    // wait for it drops the record instead, counted in the footer.
    std::unique_lock lock(late_mutex_, std::try_to_lock);
    if (!lock.owns_lock()) {
      sink_->add_dropped(1);
      return AppendStatus::kDropped;
    }
    if (!late_producer_.has_slot()) late_producer_ = sink_->producer();
    return late_producer_.append(record);
  }
  thread_local ThreadProducer t{sink_->producer()};
  return t.producer.append(record);
}

void ProcessSession::add_dropped(std::uint64_t n) noexcept {
  if (!sink_ || closed_.load(std::memory_order_acquire)) {
    dropped_closed_.fetch_add(n, std::memory_order_relaxed);
    return;
  }
  sink_->add_dropped(n);
}

void ProcessSession::flush() noexcept {
  if (sink_ && !closed_.load(std::memory_order_acquire)) sink_->flush();
}

void ProcessSession::set_nccl_plugin_counts(const NcclPluginCounts& counts) noexcept {
  if (sink_ && !closed_.load(std::memory_order_acquire)) sink_->set_nccl_plugin_counts(counts);
}

void ProcessSession::set_signal_flush_hook(void (*hook)() noexcept) noexcept {
  if (sink_) sink_->set_signal_flush_hook(hook);
}

bool ProcessSession::add_close_hook(void (*hook)() noexcept) noexcept {
  for (auto& slot : close_hooks_) {
    void (*expected)() noexcept = nullptr;
    if (slot.load(std::memory_order_acquire) == hook ||
        slot.compare_exchange_strong(expected, hook, std::memory_order_acq_rel) ||
        expected == hook) {
      return true;
    }
  }
  return false;
}

void ProcessSession::shutdown() noexcept {
  if (!sink_ || closed_.load(std::memory_order_acquire)) return;
  for (auto& slot : close_hooks_) {
    if (auto* hook = slot.load(std::memory_order_acquire)) hook();
  }
  if (closed_.exchange(true, std::memory_order_acq_rel)) return;
  uninstall_fatal_signal_flush();  // from here on, signals act as without the tracer
  if (calibration_) {
    if (auto c = calibration_->measure_end()) sink_->set_clock_calibration(*c);
  }
  sink_->close();
}

}  // namespace ssgd::tracer
