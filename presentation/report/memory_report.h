#pragma once
// One GPU's memory as simulate, scale and optimize print it and write it to
// their JSON reports: every part of the estimate
// (simulator/sharding/gpu_memory.h), the GPU's memory when the platform
// knows it, whether the estimate fits, and what the estimate leaves out.
// A profile without activation_bytes gives no activations: the total is
// then a floor, and every output says so.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "simulator/replay/replay.h"

namespace ssgd::report {

// Whether `memory` fits a GPU of `gpu_memory` bytes; nullopt when the GPU's
// memory is unknown (0).
std::optional<bool> memory_fits(const sim::MemoryEstimate& memory, std::int64_t gpu_memory);

nlohmann::json memory_json(const sim::MemoryEstimate& memory, std::int64_t gpu_memory);
// The scenario's sharding as replayed (strategy, shard ranks, units, dtypes, knobs).
nlohmann::json sharding_json(const sim::ReplayResult& r, const sim::ShardSettings& s);

// The sharding line and the memory rows of simulate's summary.
void print_sharding_and_memory(const sim::ReplayResult& r, const sim::ShardSettings& s,
                               std::ostream& out);

}  // namespace ssgd::report
