#pragma once
// How much of its unsharded gradients a rank holds at once, waiting for their
// reduction, in a sharded job (ZeRO-2, ZeRO-3, HSDP): a unit's (or bucket's)
// gradient buffer exists from the start of the backward of its first layer
// to run (the unit's last layer, on the micro-batch that reduces) until its
// reduction (reduce-scatter, reduces to the owners, or all-reduce) ends.
// Reductions that lag behind the backward leave several buffers waiting; the
// formula of gpu_memory.h counts one. Read off the simulated schedule, on
// rank 0 (a collective's tasks run on every rank at once).

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "common/time.h"
#include "dag/comm_plan.h"
#include "simulator/replay/iteration_observer.h"

namespace ssgd::sim {

// The latest start of a layer's backward on rank 0, by (iteration, layer).
using BackwardStarts = std::map<std::pair<std::int64_t, std::int32_t>, Time>;

// The most bytes of gradient buffers alive at once over the run: the
// gradient collectives of `comm` (their `group` indexing `groups`; gathers and
// the all-reduce across HSDP's groups are not gradient buffers of the unit),
// each alive from its group's highest layer's backward start to its end.
// nullopt when the run has no gradient collective.
std::optional<std::int64_t> waiting_gradient_peak(const std::vector<dag::CommGroup>& groups,
                                                  const std::vector<CommRun>& comm,
                                                  const BackwardStarts& backward);

}  // namespace ssgd::sim
