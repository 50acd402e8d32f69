#include "tracer/core/activity_record.h"

namespace ssgd::tracer {

std::string_view activity_kind_name(ActivityKind kind) {
  switch (kind) {
    case ActivityKind::kKernel: return "kernel";
    case ActivityKind::kMemcpy: return "memcpy";
    case ActivityKind::kMemset: return "memset";
    case ActivityKind::kApiCall: return "api_call";
    case ActivityKind::kSynchronization: return "synchronization";
    case ActivityKind::kCudaEvent: return "cuda_event";
    case ActivityKind::kExternalCorrelation: return "external_correlation";
    case ActivityKind::kDevice: return "device";
    case ActivityKind::kCollective: return "collective";
    case ActivityKind::kMarker: return "marker";
    case ActivityKind::kLink: return "link";
  }
  return "unknown";
}

}  // namespace ssgd::tracer
