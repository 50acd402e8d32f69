#include "simulator/scaling/scaling_choice.h"

namespace ssgd::sim {

const char* to_string(ScalingMode mode) {
  switch (mode) {
    case ScalingMode::kWeak: return "weak";
    case ScalingMode::kStrong: return "strong";
  }
  return "?";
}

}  // namespace ssgd::sim
