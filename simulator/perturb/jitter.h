#pragma once
// Per-task jitter (perturb.jitter): a stream of independent multiplicative
// factors, one per forward or backward task, drawn in task-id order from
// std::mt19937_64 seeded with perturb.seed (repeat k uses seed + k).
//
// mt19937_64's output is fixed by the C++ standard, but the library's
// distributions are not, so the draws are made here: a uniform u in [0, 1)
// from the top 53 bits of one output, a standard normal z by Box-Muller
// (u1 in (0, 1], z = sqrt(-2 ln u1) cos(2 pi u2), one z per two outputs).
//   normal:<cv>           1 + cv z
//   uniform:<half-width>  1 + h (2u - 1)
//   lognormal:<sigma>     exp(sigma z - sigma^2 / 2)   (mean 1, median exp(-sigma^2/2))
// each clamped at 0. The same seed gives the same factors on any machine
// whose libm rounds log, cos and exp alike (glibc does on every x86-64).

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "simulator/perturb/perturbation.h"

namespace ssgd::sim {

class TaskJitter {
 public:
  TaskJitter(JitterSpec spec, std::uint64_t seed) : spec_(spec), engine_(seed) {}
  // The next task's factor (1 with kind none).
  double next();

 private:
  double uniform();  // [0, 1)
  double normal();

  JitterSpec spec_;
  std::mt19937_64 engine_;
};

// perturb.jitter_draw: class. One factor per class of ranks, iteration,
// forward or backward, and layer, drawn from a TaskJitter in that order
// (classes, then iterations, then the forward tasks of layers 0..L-1, then
// the backward ones), so every rank of a class, in any DAG, folded or not,
// gets the same factor for the same task. A table of classes x iterations x
// 2 x layers factors: never more than the unfolded DAG has tasks.
class ClassJitterTable {
 public:
  ClassJitterTable(JitterSpec spec, std::uint64_t seed, std::size_t classes, std::size_t iterations,
                   std::size_t layers);
  [[nodiscard]] double factor(std::size_t cls, std::size_t iteration, std::size_t layer,
                              bool backward) const {
    return draws_[((cls * iterations_ + iteration) * 2 + (backward ? 1 : 0)) * layers_ + layer];
  }

 private:
  std::size_t iterations_;
  std::size_t layers_;
  std::vector<double> draws_;
};

}  // namespace ssgd::sim
