#pragma once
// A tracing window (`ssgd trace --window`, SSGD_TRACER_WINDOW): the activity
// source records only the steps inside it, and every step's boundaries are
// recorded anyway, so the trace knows each step's time, untraced ones
// included, and a replay can tell the window's own cost (walk/trace_profile.h).
//
//   steps:A:B   steps A <= N < B, by the step numbers the program reports
//   time:S:E    from the first step that begins S seconds after the session
//               opened, to the end of the first that ends E seconds after it
//   signal      from the first step that begins after a SIGUSR2, to the end
//               of the first that ends after the next one (installed only
//               where the program keeps SIGUSR2's default)
//
// The program reports its steps through ssgd_tracer_step(N, 0) at a step's
// start and ssgd_tracer_step(N, 1) at its end (tracer/python/ssgd_marks.py
// does, for the steps it numbers). The window opens and closes only at step
// boundaries, so a step is traced whole or not at all; a program that
// reports no step is never traced, and the trace says so.
//
// Written into the trace (MarkerActivity, domain "ssgd-window"):
//   step/<N>       every reported step, from its start to its end
//   window/open    zero-length, when recording was turned on
//   window/close   zero-length, when it was turned off
//
// Recording is switched through a WindowControl (the CUPTI source: every
// activity kind it enabled, off and on; a flush of CUPTI's buffers is asked
// of the writer thread when it closes). Nothing here throws, blocks beyond
// an uncontended lock, or writes to stdout.

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "tracer/core/activity_record.h"
#include "tracer/core/rank_env.h"
#include "traces/marker_names.h"

namespace ssgd::tracer {

inline constexpr std::string_view kWindowDomain = trace::kWindowMarkDomain;

struct WindowSettings {
  enum class Kind : std::uint8_t { kNone, kSteps, kTime, kSignal };
  Kind kind = Kind::kNone;
  std::int64_t first = 0;  // steps: the first traced; time: ns after the session opened
  std::int64_t last = 0;   // steps: the first not traced; time: ns after the session opened
  std::vector<std::string> problems;  // a malformed setting, set aside: no window
};

// Reads SSGD_TRACER_WINDOW through `env`; a malformed value means no window
// (everything traced, as without the setting) and is listed in `problems`.
WindowSettings read_window_settings(const EnvLookup& env) noexcept;

class WindowControl {
 public:
  virtual ~WindowControl() = default;
  // Turns recording on or off; called with the window's lock held, from
  // the thread that reported the step.
  virtual void set_recording(bool on) noexcept = 0;
};

class TraceWindow {
 public:
  using Append = std::function<void(const ActivityRecord&)>;

  TraceWindow(WindowSettings settings, std::int64_t session_start_ns, Append append) noexcept;

  [[nodiscard]] bool active() const noexcept { return settings_.kind != WindowSettings::Kind::kNone; }
  // The source that records, once it runs: a window that starts closed
  // turns recording off now.
  void set_control(WindowControl* control) noexcept;
  // A step's start (`end` false) or end, at `now_ns` on the event clock.
  void step(std::int64_t n, bool end, std::int64_t now_ns) noexcept;
  // A SIGUSR2 (signal windows): async-signal-safe, acted on at the next
  // step boundary.
  void signal() noexcept { signals_.fetch_add(1, std::memory_order_relaxed); }

  [[nodiscard]] bool recording() const noexcept;
  [[nodiscard]] std::int64_t steps_seen() const noexcept;
  [[nodiscard]] std::int64_t steps_traced() const noexcept;

 private:
  void open(std::int64_t now_ns);
  void close(std::int64_t now_ns);
  void mark(std::string_view name, std::int64_t start_ns, std::int64_t end_ns);

  WindowSettings settings_;
  std::int64_t session_start_ns_;
  Append append_;
  mutable std::mutex mutex_;
  WindowControl* control_ = nullptr;
  bool recording_ = true;        // as the source starts: everything on
  bool done_ = false;            // opened and closed: stays closed
  bool in_step_ = false;
  std::int64_t step_ = 0;
  std::int64_t step_start_ns_ = 0;
  std::int64_t seen_ = 0;
  std::int64_t traced_ = 0;
  std::atomic<int> signals_{0};
  int signals_used_ = 0;         // signals acted on
};

// The process's window, from its environment (made on first use).
TraceWindow& process_window() noexcept;

// Step `step` starts (phase 0) or ends (phase 1) on the process's window;
// any other phase is ignored. libssgd_tracer.so exports it to the traced
// program as `extern "C" void ssgd_tracer_step(int64_t step, int phase)`
// (tracer/inject/injection_entry.cc).
void report_step(std::int64_t step, int phase) noexcept;

}  // namespace ssgd::tracer
