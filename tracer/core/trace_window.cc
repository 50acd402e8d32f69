#include "tracer/core/trace_window.h"

#include <signal.h>

#include <charconv>
#include <cmath>
#include <cstdio>

#include "tracer/core/host_clock.h"
#include "tracer/core/process_session.h"
#include "tracer/core/trace_sink.h"

namespace ssgd::tracer {
namespace {

bool parse_int(std::string_view s, std::int64_t& out) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// Seconds, decimals allowed, into ns; false on anything else or past a year.
bool parse_seconds(std::string_view s, std::int64_t& ns) {
  double v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !(v >= 0) || v > 365.0 * 86400) {
    return false;
  }
  ns = static_cast<std::int64_t>(std::llround(v * 1e9));
  return true;
}

}  // namespace

WindowSettings read_window_settings(const EnvLookup& env) noexcept {
  WindowSettings s;
  try {
    const auto v = env("SSGD_TRACER_WINDOW");
    if (!v || v->empty()) return s;
    const std::string_view text = *v;
    const auto bad = [&](const char* why) {
      s = WindowSettings{};
      s.problems.push_back("SSGD_TRACER_WINDOW='" + *v + "': " + why +
                           "; no window: every step is traced");
      return s;
    };
    if (text == "signal") {
      s.kind = WindowSettings::Kind::kSignal;
      return s;
    }
    const auto colon1 = text.find(':');
    const auto colon2 = colon1 == std::string_view::npos ? colon1 : text.find(':', colon1 + 1);
    if (colon2 == std::string_view::npos) {
      return bad("expected steps:A:B, time:S:E or signal");
    }
    const std::string_view kind = text.substr(0, colon1);
    const std::string_view a = text.substr(colon1 + 1, colon2 - colon1 - 1);
    const std::string_view b = text.substr(colon2 + 1);
    if (kind == "steps") {
      if (!parse_int(a, s.first) || !parse_int(b, s.last) || s.first < 0 || s.first >= s.last) {
        return bad("steps:A:B needs integers 0 <= A < B");
      }
      s.kind = WindowSettings::Kind::kSteps;
    } else if (kind == "time") {
      if (!parse_seconds(a, s.first) || !parse_seconds(b, s.last) || s.first >= s.last) {
        return bad("time:S:E needs seconds 0 <= S < E");
      }
      s.kind = WindowSettings::Kind::kTime;
    } else {
      return bad("expected steps:A:B, time:S:E or signal");
    }
  } catch (...) {
    s = WindowSettings{};
    s.problems.push_back("could not read SSGD_TRACER_WINDOW (out of memory); no window");
  }
  return s;
}

TraceWindow::TraceWindow(WindowSettings settings, std::int64_t session_start_ns,
                         Append append) noexcept
    : settings_(std::move(settings)),
      session_start_ns_(session_start_ns),
      append_(std::move(append)) {}

void TraceWindow::set_control(WindowControl* control) noexcept {
  const std::lock_guard lock(mutex_);
  control_ = control;
  // Every window starts closed: the source started with everything on.
  if (active() && control_ != nullptr && recording_ && traced_ == 0 && !in_step_) {
    control_->set_recording(false);
    recording_ = false;
  }
}

void TraceWindow::mark(std::string_view name, std::int64_t start_ns, std::int64_t end_ns) {
  MarkerActivity m;
  m.domain = kWindowDomain;
  m.start_ns = start_ns;
  m.end_ns = end_ns;
  ActivityRecord r;
  r.payload = m;
  r.name = name;
  if (append_) append_(r);
}

void TraceWindow::open(std::int64_t now_ns) {
  if (control_ != nullptr) control_->set_recording(true);
  recording_ = true;
  mark("window/open", now_ns, now_ns);
}

void TraceWindow::close(std::int64_t now_ns) {
  if (control_ != nullptr) control_->set_recording(false);
  recording_ = false;
  done_ = true;
  mark("window/close", now_ns, now_ns);
}

void TraceWindow::step(std::int64_t n, bool end, std::int64_t now_ns) noexcept {
  if (!active()) return;
  try {
    const std::lock_guard lock(mutex_);
    const std::int64_t since = now_ns - session_start_ns_;
    const int signals = signals_.load(std::memory_order_relaxed);
    if (!end) {
      in_step_ = true;
      step_ = n;
      step_start_ns_ = now_ns;
      ++seen_;
      if (recording_ || done_) return;
      bool opens = false;
      switch (settings_.kind) {
        case WindowSettings::Kind::kSteps:
          opens = n >= settings_.first && n < settings_.last;
          done_ = n >= settings_.last;  // started past the window: it never opens
          break;
        case WindowSettings::Kind::kTime:
          opens = since >= settings_.first && since < settings_.last;
          done_ = since >= settings_.last;
          break;
        case WindowSettings::Kind::kSignal:
          opens = signals > signals_used_;
          if (opens) signals_used_ = signals;
          break;
        case WindowSettings::Kind::kNone:
          break;
      }
      if (opens && control_ != nullptr) open(now_ns);
      return;
    }
    if (!in_step_ || step_ != n) return;  // an end without its start: not a step
    in_step_ = false;
    char name[32];
    std::snprintf(name, sizeof name, "step/%lld", static_cast<long long>(n));
    mark(name, step_start_ns_, now_ns);
    if (!recording_ || control_ == nullptr) return;
    ++traced_;
    bool closes = false;
    switch (settings_.kind) {
      case WindowSettings::Kind::kSteps: closes = n + 1 >= settings_.last; break;
      case WindowSettings::Kind::kTime: closes = since >= settings_.last; break;
      case WindowSettings::Kind::kSignal:
        closes = signals > signals_used_;
        if (closes) signals_used_ = signals;
        break;
      case WindowSettings::Kind::kNone: break;
    }
    if (closes) close(now_ns);
  } catch (...) {
    // Never across the program's call: the step goes unmarked.
  }
}

bool TraceWindow::recording() const noexcept {
  const std::lock_guard lock(mutex_);
  return recording_;
}

std::int64_t TraceWindow::steps_seen() const noexcept {
  const std::lock_guard lock(mutex_);
  return seen_;
}

std::int64_t TraceWindow::steps_traced() const noexcept {
  const std::lock_guard lock(mutex_);
  return traced_;
}

namespace {

TraceWindow* g_window = nullptr;

void on_sigusr2(int) { if (g_window != nullptr) g_window->signal(); }

}  // namespace

TraceWindow& process_window() noexcept {
  static TraceWindow* window = [] {
    WindowSettings settings = read_window_settings(process_environment);
    for (const auto& p : settings.problems) log_to_stderr_if_asked(p);
    const bool wants_signal = settings.kind == WindowSettings::Kind::kSignal;
    auto* w = new TraceWindow(std::move(settings),
                              read_clock_ns(trace::v1::ClockDomain::MONOTONIC_RAW),
                              [](const ActivityRecord& r) { ProcessSession::get().append(r); });
    g_window = w;
    if (wants_signal) {
      // Only where the program keeps SIGUSR2's default: its own handler stays.
      struct sigaction old {};
      if (sigaction(SIGUSR2, nullptr, &old) == 0 && (old.sa_flags & SA_SIGINFO) == 0 &&
          old.sa_handler == SIG_DFL) {
        struct sigaction sa {};
        sa.sa_handler = on_sigusr2;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        sigaction(SIGUSR2, &sa, nullptr);
      } else {
        log_to_stderr_if_asked("SSGD_TRACER_WINDOW=signal: the program handles SIGUSR2 itself; "
                               "the window cannot be opened");
      }
    }
    return w;
  }();
  return *window;
}

}  // namespace ssgd::tracer

namespace ssgd::tracer {

void report_step(std::int64_t step, int phase) noexcept {
  if (phase != 0 && phase != 1) return;
  process_window().step(step, phase == 1, read_clock_ns(trace::v1::ClockDomain::MONOTONIC_RAW));
}

}  // namespace ssgd::tracer
