#pragma once
// The scaling table: one row per GPU count (or per run and its one-GPU
// baseline), as `ssgd simulate` prints its scaling section and `ssgd scale`
// its sweep, and the same rows as JSON. docs/scaling.md defines the numbers.

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/time.h"

namespace ssgd::sim {

struct ScalingRow {
  std::string label;  // "16 GPUs", "1 GPU": the table's first column
  std::int64_t gpus = 1;
  std::int64_t nodes = 1;
  std::int64_t gpus_per_node = 1;
  std::int64_t per_gpu_batch = 1;  // the largest share when the global batch does not divide
  std::int64_t global_batch = 1;
  Duration iteration_time;
  double throughput_samples_per_s = 0;
  std::optional<double> speedup;  // against one GPU
  std::optional<double> efficiency;
};

// Per-GPU batch as the table shows it: "16", or "15..16" when the global
// batch leaves some GPUs one sample fewer.
std::string per_gpu_batch_text(std::int64_t per_gpu_batch, std::int64_t global_batch,
                               std::int64_t gpus);

// A header line and one line per row, each starting with `indent`.
void print_scaling_table(const std::vector<ScalingRow>& rows, const std::string& indent,
                         std::ostream& out);

// {gpus, nodes, gpus_per_node, per_gpu_batch, min_per_gpu_batch, global_batch, iteration_time_ns,
//  throughput_samples_per_s, speedup, scaling_efficiency} (null when not known).
nlohmann::json scaling_row_json(const ScalingRow& row);

}  // namespace ssgd::sim
