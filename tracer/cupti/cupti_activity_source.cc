#include "tracer/cupti/cupti_activity_source.h"

#include <cupti.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <utility>

#include "tracer/core/host_clock.h"
#include "tracer/core/process_session.h"
#include "tracer/core/trace_window.h"
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
// The runtime and driver API calls are enabled one by one (kRuntimeApis,
// kDriverApis), unless SSGD_TRACER_API_CALLS=all.
constexpr Kind kKinds[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL", true},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY", true},
    {CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2", false},
    {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET", true},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION", false},
    {CUPTI_ACTIVITY_KIND_CUDA_EVENT, "CUDA_EVENT", false},
    {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "EXTERNAL_CORRELATION", false},
    {CUPTI_ACTIVITY_KIND_DEVICE, "DEVICE", false},
    {CUPTI_ACTIVITY_KIND_CONTEXT, "CONTEXT", false},
    {CUPTI_ACTIVITY_KIND_NVLINK, "NVLINK", false},
    {CUPTI_ACTIVITY_KIND_PCIE, "PCIE", false},
};

// Every kind above but the API calls.
constexpr Kind kAllRuntimeApis{CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME", true};
constexpr Kind kAllDriverApis{CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER", false};

// The API calls the trace uses: those that put work on the GPU (their
// records give each kernel, copy and memset its launch time through the
// correlation id, walk/trace_walk.h) and those that wait for it or order
// streams. A training step makes ten to twenty other calls per kernel
// (cudaGetDevice, cuDevicePrimaryCtxGetState, cudaGetLastError,
// cuKernelGetName...): recording them all cost ResNet-50 on an H200 a fifth
// of its iteration time (docs/runs/2026-11-26-h200-checklist.md).
constexpr CUpti_CallbackId kRuntimeApis[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernelMultiDevice_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_ptsz_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2D_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2D_ptds_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3D_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3D_ptds_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeer_v4000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToSymbol_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToSymbol_ptds_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyFromSymbol_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyFromSymbol_ptds_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3DAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3DAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3DPeerAsync_v4000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3DPeerAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToSymbolAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToSymbolAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyFromSymbolAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyFromSymbolAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyBatchAsync_v12080,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyBatchAsync_ptsz_v12080,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyBatchAsync_v13000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyBatchAsync_ptsz_v13000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemset_ptds_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemset2D_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemset2D_ptds_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemset3D_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemset3D_ptds_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemset2DAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemset2DAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemset3DAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemset3DAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventRecordWithFlags_v11010,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventRecordWithFlags_ptsz_v11010,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000,
};

constexpr CUpti_CallbackId kDriverApis[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DPeerAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DPeerAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyBatchAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyBatchAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyBatchAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyBatchAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD16_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD16_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD16Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD16Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuEventRecord,
    CUPTI_DRIVER_TRACE_CBID_cuEventRecord_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags,
    CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz,
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
  bool api_calls_one_by_one = false;  // kRuntimeApis and kDriverApis enabled
  std::string reason;  // written before state becomes kStoodDown
  // SSGD_TRACER_WINDOW_DETACH: started when the window opens; once it has
  // closed and CUPTI's buffers are flushed, the next runtime API call's exit
  // detaches CUPTI (detach_or_nothing).
  bool attach_at_window = false;
  std::atomic<bool> detach_when_flushed{false};
  std::atomic<bool> detach_requested{false};

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

void note(std::string_view message);

// Subscribing claims CUPTI's single subscriber slot; the callback is enabled
// for no domain, but for the runtime API's once a tracing window asks to
// detach CUPTI (SSGD_TRACER_WINDOW_DETACH): then, at the exit of the first
// runtime API call, CUPTI is finalized, as its documentation recommends
// (a callback's exit is where no other CUPTI call of this thread is under
// way). Once only; nothing else calls CUPTI after it (the state says so).
void CUPTIAPI detach_or_nothing(void*, CUpti_CallbackDomain domain, CUpti_CallbackId,
                                const void* data) {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API || data == nullptr) return;
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (cb->callbackSite != CUPTI_API_EXIT) return;
  Source& s = source();
  if (!s.detach_requested.exchange(false, std::memory_order_acq_rel)) return;
  s.state.store(SourceState::kDetached, std::memory_order_release);
  const CUptiResult r = cuptiFinalize();
  try {
    note(r == CUPTI_SUCCESS
             ? "CUPTI detached: the tracing window closed"
             : std::string("cuptiFinalize failed after the tracing window: ") + result_text(r));
    log_to_stderr_if_asked(r == CUPTI_SUCCESS ? "CUPTI detached after the tracing window"
                                              : "cuptiFinalize failed after the tracing window");
  } catch (...) {
  }
}

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
  if (s.api_calls_one_by_one) {
    for (const CUpti_CallbackId id : kRuntimeApis) cuptiActivityEnableRuntimeApi(id, 0);
    for (const CUpti_CallbackId id : kDriverApis) cuptiActivityEnableDriverApi(id, 0);
    s.api_calls_one_by_one = false;
  }
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
// A window that closed with SSGD_TRACER_WINDOW_DETACH asks for this flush too:
// once CUPTI's buffers are in, the runtime API's callbacks are turned on, and
// the first one to exit detaches CUPTI (detach_or_nothing).
void flush_for_signal() noexcept {
  Source& s = source();
  if (s.state.load(std::memory_order_acquire) != SourceState::kRunning) return;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (s.detach_when_flushed.exchange(false, std::memory_order_acq_rel)) {
    s.detach_requested.store(true, std::memory_order_release);
    if (cuptiEnableDomain(1, s.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API) != CUPTI_SUCCESS) {
      s.detach_requested.store(false, std::memory_order_release);
    }
  }
}

// Enables one activity kind; false when a required one failed (the
// source has then stood down).
bool enable_kind(Source& s, const Kind& k) {
  const CUptiResult r = cuptiActivityEnable(k.kind);
  if (r == CUPTI_SUCCESS) {
    s.enabled.push_back(k.kind);
  } else if (k.required) {
    stand_down(s, std::string("cannot enable ") + k.name + ": " + result_text(r));
    return false;
  } else {
    log_to_stderr_if_asked(std::string("activity kind ") + k.name +
                           " not captured: " + result_text(r));
  }
  return true;
}

// The API calls of kRuntimeApis and kDriverApis (or kRuntimeApis alone),
// one by one; every call of both APIs with SSGD_TRACER_API_CALLS=all, or
// where CUPTI cannot enable any of them one by one (before CUDA 12.6); none
// with SSGD_TRACER_API_CALLS=none. A call this CUPTI does not know is
// skipped (logged): falling back to every call for it would bring back the
// cost the filter removes. False when the source stood down.
bool enable_api_calls(Source& s) {
  using ApiCalls = ActivitySourceSettings::ApiCalls;
  if (s.settings.api_calls == ApiCalls::kNone) return true;
  if (s.settings.api_calls != ApiCalls::kAll) {
    std::size_t enabled = 0, refused = 0;
    for (const CUpti_CallbackId id : kRuntimeApis) {
      ++(cuptiActivityEnableRuntimeApi(id, 1) == CUPTI_SUCCESS ? enabled : refused);
    }
    if (s.settings.api_calls == ApiCalls::kLaunches) {
      for (const CUpti_CallbackId id : kDriverApis) {
        ++(cuptiActivityEnableDriverApi(id, 1) == CUPTI_SUCCESS ? enabled : refused);
      }
    }
    s.api_calls_one_by_one = true;
    if (enabled > 0) {
      if (refused > 0) {
        log_to_stderr_if_asked(std::to_string(refused) +
                               " API call(s) of the launch list not known to this CUPTI: skipped");
      }
      return true;
    }
    log_to_stderr_if_asked("CUPTI cannot record API calls one by one: recording them all");
  }
  return enable_kind(s, kAllRuntimeApis) && enable_kind(s, kAllDriverApis);
}

// The tracing window's switch (tracer/core/trace_window.h): every kind the
// source enabled, and the API calls, off and on again; off, the writer
// thread is asked to take CUPTI's buffers (the signal flush's path, which
// does not wait on the program's thread).
SourceState start(Source& s);

class CuptiWindowControl final : public WindowControl {
 public:
  void set_recording(bool on) noexcept override {
    Source& s = source();
    if (on && s.attach_at_window &&
        s.state.load(std::memory_order_acquire) == SourceState::kNotStarted) {
      try {
        (void)start(s);  // as a whole-run trace starts: kinds, API calls, NVTX
      } catch (...) {
        log_to_stderr_if_asked("CUPTI tracing is off: could not start (out of memory)");
      }
      return;
    }
    if (s.state.load(std::memory_order_acquire) != SourceState::kRunning) return;
    for (const CUpti_ActivityKind k : s.enabled) {
      if (on) {
        cuptiActivityEnable(k);
      } else {
        cuptiActivityDisable(k);
      }
    }
    if (s.api_calls_one_by_one) {
      const std::uint8_t v = on ? 1 : 0;
      for (const CUpti_CallbackId id : kRuntimeApis) cuptiActivityEnableRuntimeApi(id, v);
      if (s.settings.api_calls == ActivitySourceSettings::ApiCalls::kLaunches) {
        for (const CUpti_CallbackId id : kDriverApis) cuptiActivityEnableDriverApi(id, v);
      }
    }
    if (!on) {
      if (s.attach_at_window) s.detach_when_flushed.store(true, std::memory_order_release);
      if (TraceSink* sink = ProcessSession::get().sink()) (void)sink->request_signal_flush();
    }
  }
};

SourceState start(Source& s) {
  CUptiResult r = cuptiSubscribe(&s.subscriber, detach_or_nothing, nullptr);
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
    if (!enable_kind(s, k)) return SourceState::kStoodDown;
  }
  if (!enable_api_calls(s)) return SourceState::kStoodDown;
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
    read_switch(env, "SSGD_TRACER_NVTX", s.nvtx, "NVTX ranges are off", s.problems);
    if (auto v = env("SSGD_TRACER_API_CALLS")) {
      using ApiCalls = ActivitySourceSettings::ApiCalls;
      if (*v == "all") {
        s.api_calls = ApiCalls::kAll;
      } else if (*v == "runtime") {
        s.api_calls = ApiCalls::kRuntime;
      } else if (*v == "none") {
        s.api_calls = ApiCalls::kNone;
      } else if (!v->empty() && *v != "launches") {
        s.problems.push_back("SSGD_TRACER_API_CALLS='" + *v +
                             "' is not 'launches', 'runtime', 'none' or 'all'; recording launches");
      }
    }
    read_switch(env, "SSGD_TRACER_WINDOW_DETACH", s.window_detach,
                "a window pauses CUPTI without detaching it", s.problems);
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
      // With SSGD_TRACER_WINDOW_DETACH, attached when the window opens and
      // detached when it closes: until then CUPTI is not even subscribed.
      s.attach_at_window = settings.window_detach && process_window().active();
      if (s.attach_at_window) {
        log_to_stderr_if_asked(
            "CUPTI is attached when the tracing window opens and detached "
            "when it closes (SSGD_TRACER_WINDOW_DETACH=1)");
      }
      if (s.attach_at_window || start(s) == SourceState::kRunning) {
        std::atexit(flush_at_exit);
        ProcessSession::get().set_signal_flush_hook(flush_for_signal);
        // A tracing window starts closed: recording off until it opens.
        static CuptiWindowControl window_control;
        if (process_window().active()) process_window().set_control(&window_control);
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
