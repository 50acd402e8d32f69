#pragma once
// Where a worker's time went. Over a window of a rank's timeline, every
// instant is counted once, in the first class that applies:
//   compute       a forward, backward or update task of the rank is running
//   io            the rank's io or h2d task is running (and no compute)
//   exposed_comm  a gradient collective is running (and neither of the above)
//   idle          nothing of the rank is running
// so compute + io + exposed_comm + idle is the window's length.

#include <array>
#include <cstdint>
#include <vector>
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

// average_breakdown() of an S-SGD DAG, measured while its schedule runs, so
// that nothing of a task need be kept once it has ended: events arrive in
// time order (started() and ended() at the engine's time), and each rank's
// window is the one replay() measures, from the end of its last update of
// iteration `window_from` (time zero when it is -1) to the end of its last
// update of the last iteration, `updates` update tasks a rank and
// iteration. Collectives are shared (rank kAllRanks) and run one at a time
// or several together, never overlapping otherwise. The result equals
// average_breakdown() over the same windows to the nanosecond.
//
// With collectives_may_lag(), events need only arrive in time order for
// each rank, and the collectives in time order, each reported once it has
// ended (started() then ended()) and none starting before the previous one
// ended; a rank's events may then come before collectives that start
// earlier (a list schedule's order, simulator/engine/windowed_schedule.h):
// the collective time of a rank's idle spell is counted once the
// collectives are known up to its end.
class OnlineBreakdown {
 public:
  OnlineBreakdown(std::int64_t ranks, std::int64_t iterations, std::int64_t updates,
                  std::int64_t window_from, std::span<const std::int64_t> weight = {});
  void collectives_may_lag() { lag_ = true; }
  void started(const Task& task, Time now);
  void ended(const Task& task, Time now);
  // The average over the ranks, divided by the iterations in the window
  // (iterations - 1 - window_from). Throws std::logic_error when a rank's
  // window has not closed.
  [[nodiscard]] TimeBreakdown result() const;

 private:
  struct Rank {
    std::int64_t cursor = 0;
    std::int32_t compute = 0;
    std::int32_t io = 0;
    std::int32_t updates_seen = 0;  // of the iteration that opens or closes its window
    std::uint8_t state = 0;         // 0 before its window, 1 in it, 2 after it
    std::array<std::int64_t, 4> sum{};
  };
  void account(Rank& rank, std::int64_t until);
  // A rank's idle spell [from, until): its collective time to sum[2], the
  // rest to sum[3].
  struct Idle {
    std::size_t rank;
    std::int64_t from, until;
  };
  void add_idle(std::array<std::int64_t, 4>& sum, const Idle& idle) const;
  [[nodiscard]] std::int64_t comm_before(std::int64_t t) const;  // collective time in [0, t)

  std::vector<Rank> ranks_;
  std::vector<std::int64_t> weight_;
  std::int64_t iterations_, updates_, from_;
  // The collectives' union so far: closed intervals in time order, the time
  // they cover before each, and the one running (when running_ > 0).
  std::vector<std::int64_t> comm_start_, comm_end_, comm_cum_;
  std::int32_t running_ = 0;
  std::int64_t running_since_ = 0;
  // collectives_may_lag(): the collectives are known up to `known_`; the
  // idle spells that end later wait for them.
  bool lag_ = false;
  std::int64_t known_ = 0;
  std::vector<Idle> waiting_;
};

}  // namespace ssgd::dag
