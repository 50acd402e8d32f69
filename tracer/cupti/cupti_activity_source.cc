#include "tracer/cupti/cupti_activity_source.h"

#include <cupti.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <utility>

#include "tracer/core/host_clock.h"
#include "tracer/core/process_session.h"
#include "tracer/cupti/cupti_record_decoder.h"

namespace ssgd::tracer {
namespace {

// CUPTI requires 8-byte aligned activity buffers.
constexpr std::size_t kBufferAlignment = 8;

struct Kind {
  CUpti_ActivityKind kind;
  const char* name;
  bool required;  // without it the trace is useless: stand down
};

// What the trace needs. CONCURRENT_KERNEL rather than KERNEL: KERNEL
// serializes kernels. CONTEXT maps synchronization records to devices.
constexpr Kind kKinds[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL", true},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY", true},
    {CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2", false},
    {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET", true},
    {CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME", true},
    {CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER", false},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION", false},
    {CUPTI_ACTIVITY_KIND_CUDA_EVENT, "CUDA_EVENT", false},
    {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "EXTERNAL_CORRELATION", false},
    {CUPTI_ACTIVITY_KIND_DEVICE, "DEVICE", false},
    {CUPTI_ACTIVITY_KIND_CONTEXT, "CONTEXT", false},
    {CUPTI_ACTIVITY_KIND_NVLINK, "NVLINK", false},
    {CUPTI_ACTIVITY_KIND_PCIE, "PCIE", false},
};

const char* result_text(CUptiResult r) {
  const char* text = nullptr;
  if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || text == nullptr) return "unknown error";
  return text;
}

const char* api_name(ApiKind api, std::uint32_t cbid) {
  const char* name = nullptr;
  const CUpti_CallbackDomain domain =
      api == ApiKind::kDriver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
  if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS) return nullptr;
  return name;
}

// The process's source. Never destroyed: CUPTI may call back during exit.
struct Source {
  std::atomic<SourceState> state{SourceState::kNotStarted};
  ActivitySourceSettings settings;
  CUpti_SubscriberHandle subscriber = nullptr;
  std::vector<CUpti_ActivityKind> enabled;
  std::string reason;  // written before state becomes kStoodDown

  // Buffers complete on CUPTI's thread, and on the thread that flushes;
  // one buffer is decoded at a time (markers pair across buffers).
  std::mutex decode_mutex;
  CuptiRecordDecoder decoder{api_name};
  std::atomic<std::uint64_t> buffer_allocation_failures{0};
  std::atomic<std::uint64_t> cupti_dropped{0};
};

Source& source() {
  static Source* s = new Source();
  return *s;
}

// CUPTI's timestamps follow CLOCK_REALTIME on Linux by default; the trace
// header declares MONOTONIC_RAW (TraceSinkOptions::event_clock), so CUPTI
// is given that clock instead. GPU timestamps are converted by CUPTI with
// this callback too (cuptiActivityRegisterTimestampCallback).
std::uint64_t CUPTIAPI event_clock_now() {
  return static_cast<std::uint64_t>(read_clock_ns(trace::v1::ClockDomain::MONOTONIC_RAW));
}

// Subscribing claims CUPTI's single subscriber slot; the callback itself is
// never enabled for any domain.
void CUPTIAPI no_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size,
                               std::size_t* max_records) {
  Source& s = source();
  const std::size_t bytes = s.settings.buffer_bytes;
  *max_records = 0;
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kBufferAlignment, bytes));
  *size = *buffer != nullptr ? bytes : 0;
  // With no buffer CUPTI drops records and counts them (read at completion).
  if (*buffer == nullptr) s.buffer_allocation_failures.fetch_add(1, std::memory_order_relaxed);
}

void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer,
                               std::size_t, std::size_t valid_size) {
  Source& s = source();
  ProcessSession& session = ProcessSession::get();
  {
    std::lock_guard lock(s.decode_mutex);
    CUpti_Activity* record = nullptr;
    DecodeOutput out;
    while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
      if (s.decoder.decode(*record, out) == DecodeStatus::kRecord) session.append(out.record);
      // NVLINK and PCIE records, and DEVICE records that name the GPUs of
      // a waiting NVLink, give directed links.
      while (s.decoder.take_link(out.record)) session.append(out.record);
    }
  }
  std::free(buffer);
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS &&
      dropped > 0) {
    s.cupti_dropped.fetch_add(dropped, std::memory_order_relaxed);
    session.add_dropped(dropped);
  }
}

// A marker in the "ssgd-tracer" domain: the trace itself says what happened.
void note(std::string_view message) {
  MarkerActivity m;
  m.domain = "ssgd-tracer";
  m.start_ns = m.end_ns = read_clock_ns(trace::v1::ClockDomain::MONOTONIC_RAW);
  ActivityRecord r;
  r.payload = m;
  r.name = message;
  ProcessSession::get().append(r);
}

void stand_down(Source& s, std::string reason) {
  for (const CUpti_ActivityKind k : s.enabled) cuptiActivityDisable(k);
  s.enabled.clear();
  if (s.subscriber != nullptr) cuptiUnsubscribe(s.subscriber);
  s.subscriber = nullptr;
  s.reason = "CUPTI tracing is off: " + std::move(reason);
  log_to_stderr_if_asked(s.reason);
  note(s.reason);
  s.state.store(SourceState::kStoodDown, std::memory_order_release);
}

void flush_at_exit() { flush_cupti_activity_source(); }

// Run by the trace writer thread before the flush of a fatal signal
// (tracer/core/fatal_signal_flush.h): CUPTI hands over its buffers, full or
// not, and buffer_completed appends them on this thread. Nothing more: the
// process is dying, CUPTI may be stuck behind the dying thread, and the
// signal handler stops waiting after SSGD_TRACER_SIGNAL_FLUSH_MS.
void flush_for_signal() noexcept { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); }

SourceState start(Source& s) {
  CUptiResult r = cuptiSubscribe(&s.subscriber, no_callback, nullptr);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    s.subscriber = nullptr;
    stand_down(s, "another CUPTI client holds this process (Nsight Systems, Nsight Compute, "
                  "torch.profiler, another tracer); run without it to trace with ssgd");
    return SourceState::kStoodDown;
  }
  if (r != CUPTI_SUCCESS) {
    s.subscriber = nullptr;
    stand_down(s, std::string("cuptiSubscribe failed: ") + result_text(r));
    return SourceState::kStoodDown;
  }
  // The clock first: records made before it would be on another clock.
  if ((r = cuptiActivityRegisterTimestampCallback(event_clock_now)) != CUPTI_SUCCESS) {
    stand_down(s, std::string("cuptiActivityRegisterTimestampCallback failed: ") +
                      result_text(r));
    return SourceState::kStoodDown;
  }
  if ((r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed)) != CUPTI_SUCCESS) {
    stand_down(s, std::string("cuptiActivityRegisterCallbacks failed: ") + result_text(r));
    return SourceState::kStoodDown;
  }
  for (const Kind& k : kKinds) {
    r = cuptiActivityEnable(k.kind);
    if (r == CUPTI_SUCCESS) {
      s.enabled.push_back(k.kind);
    } else if (k.required) {
      stand_down(s, std::string("cannot enable ") + k.name + ": " + result_text(r));
      return SourceState::kStoodDown;
    } else {
      log_to_stderr_if_asked(std::string("activity kind ") + k.name + " not captured: " + result_text(r));
    }
  }
  if (s.settings.nvtx) {
    r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER);
    if (r == CUPTI_SUCCESS) {
      s.enabled.push_back(CUPTI_ACTIVITY_KIND_MARKER);
    } else {
      log_to_stderr_if_asked(std::string("NVTX ranges not captured: ") + result_text(r));
    }
  }
  // CUDA event records carry their GPU time only when asked for.
  if ((r = cuptiActivityEnableCudaEventDeviceTimestamps(1)) != CUPTI_SUCCESS) {
    log_to_stderr_if_asked(std::string("CUDA event timestamps not captured: ") + result_text(r));
  }
  s.state.store(SourceState::kRunning, std::memory_order_release);
  return SourceState::kRunning;
}

}  // namespace

ActivitySourceSettings read_activity_settings(const EnvLookup& env) noexcept {
  ActivitySourceSettings s;
  try {
    if (auto v = env("SSGD_TRACER_NVTX")) {
      if (*v == "1") {
        s.nvtx = true;
      } else if (!v->empty() && *v != "0") {
        s.problems.push_back("SSGD_TRACER_NVTX='" + *v + "' is not 0 or 1; NVTX ranges are off");
      }
    }
    if (auto v = env("SSGD_TRACER_BUFFER_KB")) {
      std::string why;
      const auto kb = parse_rank_value(*v, why);  // a non-negative int32
      if (!kb || *kb < 64) {
        s.problems.push_back("SSGD_TRACER_BUFFER_KB='" + *v + "' " +
                             (kb ? std::string("is below 64") : why) + "; using 4096");
      } else {
        s.buffer_bytes = static_cast<std::size_t>(*kb) * 1024;
      }
    }
  } catch (...) {
    s.problems.push_back("could not read the settings (out of memory); using the defaults");
  }
  return s;
}

SourceState start_cupti_activity_source(const ActivitySourceSettings& settings) noexcept {
  static std::once_flag once;
  try {
    std::call_once(once, [&] {
      Source& s = source();
      s.settings = settings;
      for (const auto& p : settings.problems) log_to_stderr_if_asked(p);
      // The session first: its atexit close must be registered before the
      // flush below, so that the flush runs first at exit.
      ProcessSession::get();
      if (start(s) == SourceState::kRunning) {
        std::atexit(flush_at_exit);
        ProcessSession::get().set_signal_flush_hook(flush_for_signal);
      }
    });
  } catch (...) {
    log_to_stderr_if_asked("CUPTI tracing is off: could not start (out of memory)");
  }
  return source().state.load(std::memory_order_acquire);
}

void flush_cupti_activity_source() noexcept {
  Source& s = source();
  if (s.state.load(std::memory_order_acquire) != SourceState::kRunning) return;
  // FORCED also hands over buffers that are not full yet.
  const CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (r != CUPTI_SUCCESS) {
    try {
      log_to_stderr_if_asked(std::string("cuptiActivityFlushAll failed: ") + result_text(r));
    } catch (...) {
    }
  }
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped > 0) {
    s.cupti_dropped.fetch_add(dropped, std::memory_order_relaxed);
    ProcessSession::get().add_dropped(dropped);
  }
  try {
    std::lock_guard lock(s.decode_mutex);
    const DecoderCounters& c = s.decoder.counters();
    const std::uint64_t unmapped = c.unmapped_links + s.decoder.pending_links();
    if (c.unknown_kinds + c.unmatched_markers + c.dropped_markers + unmapped + c.pcie_bridges >
        0) {
      log_to_stderr_if_asked("decoded " + std::to_string(c.decoded) + " records; skipped " +
                   std::to_string(c.unknown_kinds) + " of kinds not read (last kind " +
                   std::to_string(c.last_unknown_kind) + "), " +
                   std::to_string(c.unmatched_markers) + " unmatched marker ends, " +
                   std::to_string(c.dropped_markers) + " marker starts; of " +
                   std::to_string(c.links) + " topology records, " +
                   std::to_string(unmapped) + " NVLinks to GPUs this process cannot see "
                   "and " + std::to_string(c.pcie_bridges) + " PCIe bridges not written");
    }
  } catch (...) {
  }
}

SourceState cupti_activity_source_state() noexcept {
  return source().state.load(std::memory_order_acquire);
}

std::string cupti_stand_down_reason() {
  Source& s = source();
  return s.state.load(std::memory_order_acquire) == SourceState::kStoodDown ? s.reason
                                                                            : std::string();
}

}  // namespace ssgd::tracer
