#pragma once
// The what-if to another GPU as simulate prints it and writes it to its JSON
// report (simulator/perturb/gpu_change.h): which GPU the input was measured
// on, which the scenario computes on, the kernels' time before and after by
// the rate that bounds it, and the input's kernels by class with those in no
// class (traces/kernel_class.h).

#include <ostream>

#include <nlohmann/json.hpp>

#include "simulator/perturb/gpu_change.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {

nlohmann::json gpu_change_json(const GpuChange& change, const trace::KernelClassTable& classes);

// "  gpu: ..." lines, and the class table when the change was applied.
void print_gpu_change(const GpuChange& change, const trace::KernelClassTable& classes,
                      std::ostream& out);

}  // namespace ssgd::sim
