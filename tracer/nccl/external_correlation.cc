#include "tracer/nccl/external_correlation.h"

#include <dlfcn.h>

#if __has_include(<cupti_activity.h>)
#include <cupti_activity.h>
static_assert(ssgd::tracer::kNcclExternalCorrelationKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2,
              "the plugin's external correlation kind must be CUPTI's CUSTOM2");
#endif

namespace ssgd::tracer {

ExternalCorrelationApi resolve_cupti_external_correlation() noexcept {
  ExternalCorrelationApi api;
  // dlsym hands back a void*; the cast to a function pointer is how POSIX
  // means it to be used.
  api.push = reinterpret_cast<int (*)(int, std::uint64_t)>(
      ::dlsym(RTLD_DEFAULT, "cuptiActivityPushExternalCorrelationId"));
  api.pop = reinterpret_cast<int (*)(int, std::uint64_t*)>(
      ::dlsym(RTLD_DEFAULT, "cuptiActivityPopExternalCorrelationId"));
  if (!api.usable()) return {};
  return api;
}

}  // namespace ssgd::tracer
