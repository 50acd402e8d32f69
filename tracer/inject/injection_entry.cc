// The injection entry points, and the tracing window's step hook (below).
//
// InitializeInjection: with CUDA_INJECTION64_PATH naming this library, the
// CUDA driver loads it during cuInit and calls InitializeInjection once,
// before the program's first CUDA call returns. It starts the CUPTI activity
// source with the SSGD_TRACER_* settings.
//
// InitializeInjectionNvtx2: with NVTX_INJECTION64_PATH naming this library
// (`ssgd trace --nvtx` sets it), NVTX hands its export table here, and this
// hands it on to the CUPTI this library is bound to. Naming CUPTI's own file
// instead is not enough: a process may load two copies of libcupti.so.13
// (PyTorch's wheel brings one, the CUDA toolkit has another), and NVTX's
// dlopen by path then loads the second, which records the ranges for nobody
// (seen on an H200 with torch 2.11: no marker in the trace).
//
// Both always leave the program running: InitializeInjection returns 1
// (success) when CUPTI cannot be used, the tracer stands down and the program
// runs untraced; InitializeInjectionNvtx2 returns 0 when CUPTI's entry point
// cannot be found, and NVTX then stays off, as without a tool.
#include <cupti.h>
#include <dlfcn.h>

#include <cstdint>
#include <string>

#include "tracer/core/rank_env.h"
#include "tracer/core/trace_sink.h"
#include "tracer/core/trace_window.h"
#include "tracer/cupti/cupti_activity_source.h"

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  using namespace ssgd::tracer;
  start_cupti_activity_source(read_activity_settings(process_environment));
  return 1;
}

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    const void* (*get_export_table)(std::uint32_t)) noexcept {
  using Init = int (*)(const void* (*)(std::uint32_t));
  // The file that holds the cuptiSubscribe this library calls: the CUPTI of
  // this process, whichever copy the dynamic linker bound.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiSubscribe), &info) == 0 || info.dli_fname == nullptr) {
    ssgd::tracer::log_to_stderr_if_asked("NVTX ranges not captured: CUPTI's file not found");
    return 0;
  }
  void* cupti = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  auto* init = cupti != nullptr
                   ? reinterpret_cast<Init>(dlsym(cupti, "InitializeInjectionNvtx2"))
                   : nullptr;
  // A CUPTI linked into this library would name this very file, and its
  // entry point would be this function: no CUPTI to hand NVTX to.
  if (init == &InitializeInjectionNvtx2) return 0;
  if (init == nullptr) {
    try {
      ssgd::tracer::log_to_stderr_if_asked(
          std::string("NVTX ranges not captured: no InitializeInjectionNvtx2 in ") +
          info.dli_fname);
    } catch (...) {
    }
    return 0;
  }
  return init(get_export_table);
}

// The tracing window's step hook (tracer/core/trace_window.h): the traced
// program reports each step's start (phase 0) and end (phase 1);
// tracer/python/ssgd_marks.py finds it with dlopen(RTLD_NOLOAD) on
// CUDA_INJECTION64_PATH. Never throws, never blocks beyond an uncontended lock.
extern "C" __attribute__((visibility("default"))) void ssgd_tracer_step(std::int64_t step,
                                                                        int phase) noexcept {
  ssgd::tracer::report_step(step, phase);
}
