#pragma once
// Where a worker's time went. Over a window of a rank's timeline, every
// instant is counted once, in the first class that applies:
//   compute       a forward, backward or update task of the rank is running
//   io            the rank's io or h2d task is running (and no compute)
//   exposed_comm  a gradient collective is running (and neither of the above)
//   idle          nothing of the rank is running
// so compute + io + exposed_comm + idle is the window's length.

#include <cstdint>
#include <span>

#include "dag/scheduled_times.h"
#include "dag/task_graph.h"

namespace ssgd::dag {

struct TimeBreakdown {
  Duration compute;
  Duration io;
  Duration exposed_comm;
  Duration idle;
  [[nodiscard]] Duration total() const { return compute + io + exposed_comm + idle; }
};

// The breakdown of each rank over [window_start[r], window_end[r]), divided
// by `iterations` (the iterations in each window), then averaged over ranks.
// Both spans hold one entry per rank 0..P-1. `weight`, when given (one entry
// per rank, each at least 1), counts rank r weight[r] times: a rank standing
// for a class of identical ones, so that the average is the one over every
// rank of the class, to the nanosecond.
TimeBreakdown average_breakdown(const TaskGraph& graph, const ScheduledTimes& times,
                                std::span<const Time> window_start,
                                std::span<const Time> window_end, std::int64_t iterations,
                                std::span<const std::int64_t> weight = {});

}  // namespace ssgd::dag
