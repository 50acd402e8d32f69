#include "simulator/scaling/scaling_table.h"

#include <algorithm>
#include <ostream>

#include <fmt/format.h>

#include "common/units.h"

namespace ssgd::sim {

std::string per_gpu_batch_text(std::int64_t per_gpu_batch, std::int64_t global_batch,
                               std::int64_t gpus) {
  if (gpus > 1 && global_batch % gpus != 0 && per_gpu_batch == global_batch / gpus + 1) {
    return fmt::format("{}..{}", per_gpu_batch - 1, per_gpu_batch);
  }
  return fmt::format("{}", per_gpu_batch);
}

void print_scaling_table(const std::vector<ScalingRow>& rows, const std::string& indent,
                         std::ostream& out) {
  // The label column only when some row has a label.
  std::size_t label_width = 0;
  for (const auto& r : rows) label_width = std::max(label_width, r.label.size());
  const auto label = [label_width](const std::string& text) {
    return label_width == 0 ? std::string() : fmt::format("{:<{}} ", text, label_width);
  };
  out << fmt::format("{}{}{:>6} {:>6} {:>11} {:>13} {:>12} {:>12} {:>9} {:>11}\n", indent,
                     label(""), "GPUs", "nodes", "batch/GPU", "global batch", "iteration",
                     "samples/s", "speedup", "efficiency");
  for (const auto& r : rows) {
    out << fmt::format(
        "{}{}{:>6} {:>6} {:>11} {:>13} {:>12} {:>12.1f} {:>9} {:>11}\n", indent, label(r.label),
        r.gpus, r.nodes, per_gpu_batch_text(r.per_gpu_batch, r.global_batch, r.gpus),
        r.global_batch, format_duration(r.iteration_time), r.throughput_samples_per_s,
        r.speedup ? fmt::format("{:.2f}x", *r.speedup) : std::string("-"),
        r.efficiency ? fmt::format("{:.1f}%", 100 * *r.efficiency) : std::string("-"));
  }
}

nlohmann::json scaling_row_json(const ScalingRow& r) {
  const std::int64_t smallest = r.gpus > 0 ? r.global_batch / r.gpus : r.per_gpu_batch;
  nlohmann::json j{{"gpus", r.gpus},
                   {"nodes", r.nodes},
                   {"gpus_per_node", r.gpus_per_node},
                   {"per_gpu_batch", r.per_gpu_batch},
                   {"min_per_gpu_batch", std::min(smallest, r.per_gpu_batch)},
                   {"global_batch", r.global_batch},
                   {"iteration_time_ns", r.iteration_time.ns()},
                   {"throughput_samples_per_s", r.throughput_samples_per_s}};
  j["speedup"] = r.speedup ? nlohmann::json(*r.speedup) : nlohmann::json(nullptr);
  j["scaling_efficiency"] = r.efficiency ? nlohmann::json(*r.efficiency) : nlohmann::json(nullptr);
  return j;
}

}  // namespace ssgd::sim
