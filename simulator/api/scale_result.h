#pragma once
// What `ssgd scale` replayed and found (simulator/api/scale.h runs it); its
// JSON report is presentation/report/scale_report.h.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/time.h"
#include "simulator/perturb/gpu_change.h"
#include "simulator/perturb/interference.h"
#include "simulator/scaling/scaling_table.h"
#include "simulator/scenario/scenario.h"
#include "simulator/sharding/gpu_memory.h"
#include "traces/kernel_class.h"

namespace ssgd::sim {

// One GPU count of the sweep: its table row, and the communication its
// replay did not hide.
struct ScaleRow {
  ScalingRow row;
  Duration exposed_comm;
  MemoryEstimate memory;       // one GPU's at this count (simulator/sharding/gpu_memory.h)
  std::int64_t gpu_memory = 0;  // platform.gpu.memory; 0: unknown
};

// What `ssgd scale` replayed and found.
struct ScaleResult {
  std::string input;          // the INPUT argument, as given
  std::string model;          // the input's model name; may be empty
  std::string scenario_file;  // --scenario; empty when none
  std::vector<std::string> scenario_sets;  // --set KEY=VALUE, as given
  ScalingMode mode = ScalingMode::kWeak;
  std::int64_t reference_batch = 1;  // the batch the input's times were measured at
  bool batch_given = false;          // false: no batch known, 1 assumed
  std::optional<std::int64_t>
      global_batch;           // strong scaling: the one global batch every count splits
  std::string compute_model;  // strong: how compute follows the batch, in words; empty when weak
  OverlapPolicy overlap = OverlapPolicy::kWfbp;
  std::int64_t iterations = 0;
  std::int64_t gpus_per_node = 1;  // the scenario's
  ScalingRow single_gpu;           // the baseline every row is compared with
  std::vector<ScaleRow> rows;      // in the order of --gpus
  std::string sharding = "none";   // sharding.strategy as replayed
  InterferencePlan interference;   // the scenario's interference, as every count applies it
  GpuChange gpu_change;            // the input moved to the scenario's GPU (every count alike)
  trace::KernelClassTable kernel_classes;
};

}  // namespace ssgd::sim
