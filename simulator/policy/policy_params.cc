#include "simulator/policy/policy_params.h"

namespace ssgd::sim {

const char* to_string(OverlapPolicy p) {
  switch (p) {
    case OverlapPolicy::kBsp: return "bsp";
    case OverlapPolicy::kWfbp: return "wfbp";
    case OverlapPolicy::kMgWfbp: return "mgwfbp";
    case OverlapPolicy::kDdp: return "ddp";
    case OverlapPolicy::kHorovod: return "horovod";
    case OverlapPolicy::kSingle: return "single";
    case OverlapPolicy::kPriority: return "priority";
  }
  return "?";
}

const char* to_string(UpdateMode mode) {
  return mode == UpdateMode::kGlobal ? "global" : "per_layer";
}

UpdateMode effective_update(OverlapPolicy overlap, const PolicyParams& params) {
  if (params.update) return *params.update;
  return overlap == OverlapPolicy::kPriority ? UpdateMode::kPerLayer : UpdateMode::kGlobal;
}

}  // namespace ssgd::sim
