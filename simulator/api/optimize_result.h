#pragma once
// What `ssgd optimize` searched and found (simulator/api/optimize.h runs
// it); its JSON report is presentation/report/optimize_report.h.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/time.h"
#include "simulator/perturb/gpu_change.h"
#include "simulator/perturb/interference.h"
#include "traces/kernel_class.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {

// One setting of the searched key, replayed.
struct OptimizePoint {
  std::string value;  // as `--set KEY=value` takes it
  Duration iteration_time;
  double throughput_samples_per_s = 0;
  std::int64_t collectives_per_iteration = 0;
  Duration exposed_comm;
  std::int64_t memory_bytes = 0;   // one GPU's, at the peak of a step
  bool activations_known = false;  // else memory_bytes leaves them out
  std::optional<bool> fits;        // nullopt: the GPU's memory is unknown
};

// What `ssgd optimize` searched and found.
struct OptimizeResult {
  std::string param;                 // the scenario key searched (--param)
  std::string input;                 // the INPUT argument, as given
  std::string scenario_file;         // --scenario; empty when none
  std::vector<std::string> scenario_sets;  // --set KEY=VALUE, as given
  std::vector<OptimizePoint> curve;  // in the order tried
  std::size_t best = 0;              // index in curve: the shortest iteration that fits, first of ties
  Duration as_given_iteration_time;  // the scenario without the key set
  std::int64_t gpu_memory = 0;       // platform.gpu.memory of the scenario as given; 0: unknown
  bool none_fit = false;             // no candidate fits: best is the shortest of all
  InterferencePlan interference;     // the scenario's interference, as given
  GpuChange gpu_change;              // the input moved to the scenario's GPU, as given
  trace::KernelClassTable kernel_classes;
};

}  // namespace ssgd::sim
