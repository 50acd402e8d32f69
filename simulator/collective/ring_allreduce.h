#pragma once
// Ring all-reduce under the alpha-beta (Hockney) model.
//
// P workers in a ring reduce-scatter then all-gather M bytes in 2(P-1) steps,
// each moving M/P bytes over every link of the ring at once (Thakur,
// Rabenseifner and Gropp, "Optimization of Collective Communication
// Operations in MPICH", IJHPCA 2005; Patarasuk and Yuan, JPDC 2009):
//   T(P, M) = 2(P-1) alpha + 2(P-1)/P M beta + (P-1)/P M gamma
// The steps run in lock-step, so the slowest link on the ring sets the pace:
// alpha is the largest latency and beta the inverse of the smallest
// bandwidth. gamma (the reduction's time per byte) is 0 in v1: reduction on
// a GPU runs far faster than any link feeds it.

#include <cstdint>

#include "common/time.h"
#include "simulator/network/network_model.h"

namespace ssgd::sim {

struct RingSteps {
  std::int64_t steps = 0;              // 2(P-1)
  double bytes_per_step_per_link = 0;  // M/P
};

RingSteps ring_allreduce_steps(std::int64_t workers, std::int64_t bytes);

// T(P, M) rounded once to whole nanoseconds; zero for P = 1 or M = 0.
Duration ring_allreduce_time(std::int64_t workers, std::int64_t bytes, const LinkParams& link);

}  // namespace ssgd::sim
