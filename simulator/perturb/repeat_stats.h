#pragma once
// The mean and 95% confidence interval of repeated runs (perturb.repeats):
// mean m, sample standard deviation s (n - 1 in the denominator), half-width
// t(0.975, n - 1) s / sqrt(n) with Student's t quantile: exact table values
// for 1..30 degrees of freedom, beyond that the Cornish-Fisher expansion
// about the normal quantile 1.959964 (error below 1e-4 there).

#include <cstdint>
#include <vector>

#include "common/time.h"

namespace ssgd::sim {

struct RepeatStats {
  std::int64_t count = 0;
  Duration mean;
  Duration ci95_half_width;  // 0 with one run
  Duration min, max;
};

// Throws std::invalid_argument on an empty list.
RepeatStats repeat_stats(const std::vector<Duration>& runs);

// Student's t quantile t(0.975, df), df >= 1.
double student_t_975(std::int64_t df);

}  // namespace ssgd::sim
