#pragma once
// The what-if to another GPU as simulate prints it and writes it to its JSON
// report (simulator/perturb/gpu_change.h): which GPU the input was measured
// on, which the scenario computes on, the kernels' time before and after by
// the rate that bounds it, and the input's kernels by class with those in no
// class (traces/kernel_class.h).

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "simulator/perturb/gpu_change.h"
#include "traces/layer_profile.h"

namespace ssgd::report {

// "gemm 83.4%, elementwise 8.6%, ..., other <0.1%": each class's share of the
// kernels' time, in class order, the classes without kernels left out.
std::string kernel_class_shares(const trace::KernelClassTable& classes);

nlohmann::json gpu_change_json(const sim::GpuChange& change,
                               const trace::KernelClassTable& classes);

// "  gpu: ..." lines, and the class table when the change was applied.
void print_gpu_change(const sim::GpuChange& change, const trace::KernelClassTable& classes,
                      std::ostream& out);

}  // namespace ssgd::report
