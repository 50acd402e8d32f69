#pragma once
// Perturbations of compute, applied where the simulator gets its task times:
//
// - perturbed_profile(): the layer profile as the perturbed run sees it.
//   Layer l's forward and backward times become
//     t x compute_time_factor x prod(factors of the layer_factors patterns l matches)
//       x class_factor(class of l's name) / (mixed_precision_speedup if mixed precision)
//   and, with mixed precision, its gradient bytes ceil(grad_bytes / 2).
//   A layer profile has no kernel names, so a layer's class is that of its
//   name (traces/kernel_class.h); traces reach the simulator as layer profiles too
//   (walk/trace_profile.h), so this holds for every input. Measured comm_ns
//   (replayed collectives) are multiplied by the nccl class factor; mixed
//   precision does not change them (they were measured at the captured size).
// - rank_compute_factors(): per rank r of P, the factor on its forward and
//   backward times from stragglers and load imbalance:
//     (1 + percent_r / 100) x (1 + x (2r / (P - 1) - 1))
//   the imbalance term running linearly from 1 - x on rank 0 to 1 + x on
//   rank P-1 (mean 1; 1 with one worker).
//
// I/O, host-to-device copy and update times are not changed by any of them.

#include <cstdint>
#include <string_view>
#include <vector>

#include "simulator/perturb/perturbation.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {

// Throws std::invalid_argument naming perturb.layer_factors for a pattern that
// matches no layer, and std::out_of_range for a time that would overflow.
trace::LayerProfile perturbed_profile(const trace::LayerProfile& profile, const Perturbation& p);

// Throws std::invalid_argument naming perturb.stragglers for a rank the job
// does not have.
std::vector<double> rank_compute_factors(const Perturbation& p, std::int64_t workers);

// Ranks of equal factor (rank_compute_factors' values compared exactly),
// in the order of each class's first rank: the class of every rank, and
// each class's factor and member count. Ranks of one class run the same
// tasks with the same times (without jitter), so one rank can stand for
// the class (simulator/replay/job_graph.h).
struct RankClasses {
  std::vector<std::uint32_t> of_rank;  // rank -> class
  std::vector<double> factor;          // class -> its factor
  std::vector<std::int64_t> size;      // class -> its ranks
};
RankClasses rank_classes(const std::vector<double>& rank_factor);

// Glob match: '*' any run of characters (also none), '?' any one character.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace ssgd::sim
