#pragma once
// The scaling model's own types: how the per-GPU batch follows the GPU
// count, and how compute follows the per-GPU batch (docs/scaling.md). Scenario
// keys scaling.* set them.

#include <cstdint>
#include <filesystem>
#include <optional>

namespace ssgd::sim {

enum class ScalingMode { kWeak, kStrong };
const char* to_string(ScalingMode mode);

struct ScalingChoice {
  ScalingMode mode = ScalingMode::kWeak;     // scaling.mode
  std::optional<std::int64_t> global_batch;  // scaling.global_batch (strong only)
  std::optional<double> fixed_fraction;      // scaling.fixed_fraction, in [0, 1); default 0
  std::optional<std::filesystem::path> second_profile;  // scaling.second_profile
};

}  // namespace ssgd::sim
