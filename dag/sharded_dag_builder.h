#pragma once
// The S-SGD DAG of sharded data parallelism (ZeRO stages, FSDP, HSDP) and of
// gradient accumulation, for P workers and N iterations; docs/sharding.md
// draws it. Replicated data parallelism without accumulation is
// ProfileDagBuilder's (profile_dag_builder.h); this builder is used when a
// step has more than one micro-batch or the parameters are sharded.
//
// Per worker r, iteration i and micro-batch m = 0..k-1, on r's resources:
//   io(m) -> h2d(m) -> f(m,0) -> ... -> f(m,L-1) -> b(m,L-1) -> ... -> b(m,0)
// then one update u(r,i) after b(k-1,0). Micro-batch m+1's io follows b(m,0)
// (with I/O prefetch of depth d, io of micro-batch j follows h2d of j-d and
// its h2d follows b of the micro-batch before, as in ProfileDagBuilder, with
// micro-batches counted across iterations).
//
// Collectives (shared tasks on the network, each the whole buffer's op over
// its scope; ShardedPlan::collectives holds their op, scope and bytes, and a
// task's `group` indexes it):
//   gradients   after each synchronised micro-batch (the last one; every one
//               without no_sync), in plan order: gradient collective g after
//               b(m, trigger layer of g) on every worker (b(m,0) under BSP),
//               then its `then` collective (HSDP's all-reduce across the
//               shard groups); the update waits for the last of them
//   step        after every worker's update, in order (ZeRO-1 and ZeRO-2: the
//   gathers     updated parameters gathered); the next iteration's first
//               forward waits for the last of them
//   per-unit    (ZeRO-3, HSDP) before f(m, first layer of unit u):
//   gathers     AGf(m,u), issued once the forward of unit u-d has started
//               (d = forward_prefetch >= 1: at the micro-batch's start for
//               u <= d) or, with d = 0, once unit u-1's forward (for u = 0 the
//               h2d) has finished; with max_gathers_in_flight M, also after
//               unit u-M's forward, whose gathered parameters are then freed.
//               With reshard_after_forward, every unit but the last (whose
//               parameters stay gathered into its backward) is gathered again
//               before b(m, last layer of u): AGb(m,u), issued when unit
//               u+1's backward starts (backward_prefetch pre), or when it ends
//               (post: before unit u+1's gradient collective; none: after it)
// Stream order: with one stream (separate_streams false) every collective of
// an iteration runs in the order it was issued, one after the other, as on
// one CUDA stream: AGf in unit order, then in backward for each unit from the
// last: its gather for the unit below (pre, post) or its gradient collective
// first (none). With separate streams, the gathers keep their order on one
// network resource and the gradient collectives theirs on another; they
// overlap in time, and share links only under a network model that shares
// them (network.model flow).
//
// Task ids are iteration-major as ProfileDagBuilder's: an iteration's ranks'
// tasks, tasks_per_rank() each in rank order, then its collectives in issue
// order. With one worker nothing is communicated, unless the worker stands
// for many (DagShape::folded).

#include <cstdint>
#include <string>
#include <vector>

#include "dag/comm_plan.h"
#include "dag/profile_dag_builder.h"
#include "dag/task_graph.h"
#include "traces/layer_profile.h"

namespace ssgd::dag {

enum class BackwardPrefetch : std::uint8_t { kPre, kPost, kNone };

// A sharding unit (FSDP's wrapped module): consecutive layers whose
// parameters are gathered together, by the collective `gather`.
struct ShardUnit {
  std::int32_t first = 0;
  std::int32_t last = 0;
  std::int32_t gather = -1;
};

struct GradientCollective {
  std::int32_t collective = 0;     // index in ShardedPlan::collectives
  std::int32_t trigger_layer = 0;  // the layer whose backward releases it
  std::int32_t then = -1;          // the collective that follows it, or -1
};

struct StepGather {
  std::int32_t collective = 0;
};

struct ShardedPlan {
  std::vector<CommGroup> collectives;         // every kind of collective a step issues
  std::vector<GradientCollective> gradients;  // in issue order
  bool wait_for_full_backward = false;        // BSP: every gradient collective after b(m,0)
  std::vector<StepGather> step_gathers;       // after the update, in issue order
  // Per-unit gathers (ZeRO-3, HSDP); empty otherwise. The units cover the
  // layers in order; `gradients` then holds one collective per unit, the
  // last unit's first, each released by its unit's first layer.
  std::vector<ShardUnit> units;
  bool reshard_after_forward = true;
  std::int64_t forward_prefetch = 1;
  BackwardPrefetch backward_prefetch = BackwardPrefetch::kPre;
  std::int64_t max_gathers_in_flight = 0;  // 0: no limit
  bool separate_streams = false;
  std::int64_t accumulation = 1;  // micro-batches a step
  bool no_sync = true;            // gradients communicated on the last micro-batch only
};

// Throws std::invalid_argument on what build_profile_dag() refuses, an
// accumulation below 1, a negative prefetch, units that do not cover the
// layers in order, gradient collectives that do not match the units, an
// index outside the collectives, or a graph above 1e9 tasks.
class ShardedDagBuilder {
 public:
  ShardedDagBuilder(const trace::LayerProfile& profile, const DagShape& shape,
                    const ShardedPlan& plan);
  ShardedDagBuilder(const ShardedDagBuilder&) = delete;
  ShardedDagBuilder& operator=(const ShardedDagBuilder&) = delete;

  [[nodiscard]] const std::vector<Resource>& resources() const { return resources_; }
  [[nodiscard]] std::size_t tasks_per_iteration() const { return tasks_per_iteration_; }
  [[nodiscard]] std::int64_t ranks() const { return P_; }
  [[nodiscard]] std::size_t tasks_per_rank() const {
    return static_cast<std::size_t>(K_) * (2 * static_cast<std::size_t>(L_) + 2) + 1;
  }
  [[nodiscard]] std::size_t edges_per_iteration_hint() const {
    return tasks_per_iteration_ + 3 * collectives_ * static_cast<std::size_t>(P_);
  }
  [[nodiscard]] std::int64_t iterations() const { return N_; }
  [[nodiscard]] std::int64_t reach() const { return reach_; }
  [[nodiscard]] std::vector<std::string> layer_names() const;
  // The update, the h2d with I/O prefetch, and the step gathers.
  [[nodiscard]] bool reaches_forward(const Task& task) const;

  template <class Sink>
  void add_iteration(Sink& sink);

 private:
  [[nodiscard]] bool synced(std::int32_t m) const { return !plan_.no_sync || m == K_ - 1; }

  const trace::LayerProfile& profile_;
  const ShardedPlan& plan_;
  std::int32_t L_, P_, N_, K_, U_;
  std::int64_t depth_, reach_;
  bool communicate_;
  Duration io_time_, h2d_time_, update_time_;
  std::vector<Resource> resources_;
  ResourceId reduce_net_ = 0, gather_net_ = 0;
  std::size_t collectives_ = 0;
  std::size_t tasks_per_iteration_ = 0;
  std::vector<bool> is_step_gather_;  // by collective index
  // Per built rank: ids of the current iteration's tasks, [m][l] flattened.
  std::vector<TaskId> h2d_, fwd_, bwd_, update_;
  std::vector<TaskId> prev_update_;         // per rank, of the iteration before
  std::vector<std::vector<TaskId>> h2d_history_;  // per rank, with I/O prefetch
  TaskId prev_step_gather_ = kNoTask;       // the last step gather of the iteration before
  std::int32_t next_ = 0;
};

TaskGraph build_sharded_dag(const trace::LayerProfile& profile, const DagShape& shape,
                            const ShardedPlan& plan);

// Tasks a sharded DAG holds, collectives left out (a double, as
// profile_dag_task_count()).
double sharded_dag_task_count(std::size_t layers, const DagShape& shape,
                              std::int64_t accumulation);

}  // namespace ssgd::dag
