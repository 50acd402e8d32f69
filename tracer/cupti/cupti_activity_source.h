#pragma once
// The CUPTI activity source: subscribes to CUPTI, puts CUPTI's timestamps on
// the trace's event clock, enables the activity kinds the trace needs, hands
// CUPTI record buffers and decodes the completed ones (cupti_record_decoder.h)
// into the process's trace session (tracer/core/process_session.h).
//
// CUPTI's callbacks are plain C functions, so the source's state is one
// object per process, made by start(). Nothing here throws across a C
// callback, blocks the program's threads, or writes to stdout. When CUPTI
// cannot be used (another subscriber such as Nsight Systems or
// torch.profiler holds it, no driver, no GPU) the source stands down: it
// undoes what it enabled, logs the reason (stderr only with SSGD_TRACER_LOG)
// and appends a marker in the "ssgd-tracer" domain that says so.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tracer/core/rank_env.h"

namespace ssgd::tracer {

struct ActivitySourceSettings {
  // SSGD_TRACER_NVTX=1: also capture NVTX ranges (CUPTI_ACTIVITY_KIND_MARKER).
  bool nvtx = false;
  // SSGD_TRACER_API_CALLS: which runtime and driver API calls are recorded.
  enum class ApiCalls : std::uint8_t {
    kLaunches,  // "launches" (default): the calls that launch, copy, set,
                // synchronize or record events, in both APIs
    kRuntime,   // "runtime": those of the runtime API only (a program that
                // calls the driver API itself loses its launch times)
    kNone,      // "none": no API call (kernels lose their launch times,
                // and with them the host-bound idle time of the replay)
    kAll,       // "all": every call of both APIs
  };
  ApiCalls api_calls = ApiCalls::kLaunches;
  // Bytes of each buffer handed to CUPTI (SSGD_TRACER_BUFFER_KB, default 4096).
  std::size_t buffer_bytes = 4u << 20;
  // SSGD_TRACER_WINDOW_DETACH=1, with a tracing window: CUPTI is attached
  // when the window opens (not at CUDA's start) and detached when it closes
  // (cuptiFinalize, at the exit of the next runtime API call, as CUPTI's
  // documentation asks), so that the steps outside the window run without
  // it. Without it (0, the default) the window turns CUPTI's activity kinds
  // off and on, and CUPTI's cost stays after it closes
  // (docs/runs/2026-11-28-h200-window-graphs). Not yet measured on a GPU.
  bool window_detach = false;
  std::vector<std::string> problems;  // malformed settings, set aside with why
};

// Reads the settings above through `env`; a malformed value keeps the
// default and is listed in `problems`.
ActivitySourceSettings read_activity_settings(const EnvLookup& env) noexcept;

enum class SourceState : std::uint8_t {
  kNotStarted,
  kRunning,
  kStoodDown,  // CUPTI could not be used; see stand_down_reason()
  kDetached,   // the tracing window closed and CUPTI was detached: nothing more is recorded
};

// Starts the source once per process (later calls do nothing and return
// the state). Opens the process's trace session first, so that the flush
// registered here with atexit runs before the session's close (atexit runs
// handlers in reverse order of registration).
SourceState start_cupti_activity_source(const ActivitySourceSettings& settings) noexcept;

// Asks CUPTI to hand over every buffer, full or not, and counts the records
// CUPTI dropped. Exit paths only: it waits for CUPTI.
void flush_cupti_activity_source() noexcept;

SourceState cupti_activity_source_state() noexcept;
// Why the source stood down; empty while it runs.
std::string cupti_stand_down_reason();

}  // namespace ssgd::tracer
