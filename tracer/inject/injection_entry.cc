// The CUDA injection entry point. With CUDA_INJECTION64_PATH naming this
// library, the CUDA driver loads it during cuInit and calls
// InitializeInjection once, before the program's first CUDA call returns.
// It starts the CUPTI activity source with the SSGD_TRACER_* settings.
//
// It always returns 1 (success): when CUPTI cannot be used, the tracer
// stands down and the program runs untraced, never failing because of it.
#include "tracer/core/rank_env.h"
#include "tracer/cupti/cupti_activity_source.h"

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  using namespace ssgd::tracer;
  start_cupti_activity_source(read_activity_settings(process_environment));
  return 1;
}
