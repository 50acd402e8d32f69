#pragma once
// The platform a scenario describes: its preset (or the generic platform of
// network.intra_node and network.inter_node), the platform.* keys on top,
// then the transport.

#include <cstdint>
#include <string>

#include "simulator/platform/platform_spec.h"
#include "simulator/scenario/scenario.h"

namespace ssgd::sim {

// Throws std::invalid_argument naming the keys at fault: network.intra_node
// or network.inter_node given with a named platform preset, or
// cluster.gpus_per_node differing from the preset's.
PlatformSpec scenario_platform_spec(const Scenario& scenario);

// The GPU preset a scenario's workers compute on (simulator/platform/gpu_preset.h):
// platform.gpu.model, else the platform preset's; empty for none (the generic
// platform) and for `capture` (the input's times as measured). Cheap: builds
// no more than the preset's template.
std::string scenario_gpu_model(const Scenario& scenario);

// The GPUs per node a scenario runs with: cluster.gpus_per_node, or the
// preset's when that key was not given.
std::int64_t scenario_gpus_per_node(const Scenario& scenario);

}  // namespace ssgd::sim
