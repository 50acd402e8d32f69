#pragma once
// Sharded data parallelism (FSDP1, FSDP2, ZeRO) read back from a walked
// trace (walk/trace_walk.h), for the layer profile of walk/trace_profile.h:
// the sharding units, the layer rows each unit holds, the strategy, the
// shard group, the gradients' dtype and each unit's gradient bytes.
//
// Units. FSDP2 names each unit in its ranges ("FSDP::pre_forward
// (encoder.layers.0)"; the root module's has no name and is "(root)");
// FSDP1's ranges name none, and its units are "unit<k>", k the position of
// their FullyShardedDataParallel._pre_forward range in the iteration, paired
// with _post_forward by nesting. Units are ordered by their first forward.
// A unit's forward window runs from its pre-forward range's start to the
// end of its post-forward range; a layer belongs to the innermost window
// holding the start of its forward range (FSDP2's root window holds every
// other unit's: the embeddings before them and the head after them are the
// root's). A layer in no window takes the unit of the layer before it.
//
// Collectives. Each collective belongs to the innermost sharding range
// open at its launch that names a unit: FSDP2's all_gather, pre_forward,
// *_prefetch for <unit>, pre_backward and post_backward_reduce ranges name
// theirs; FSDP1's _pre_forward names the unit it opens, and a
// _pre_forward_prefetch inside it the next unit. Collectives no range
// places (FSDP1's backward, DeepSpeed, a trace without FSDP ranges) are
// placed by order, when units are known: the k-th such all-gather before
// the backward to the k-th unit in forward order without one, the k-th such
// reduce-scatter to the k-th unit in backward (reverse forward) order
// without one. A collective is in the forward before the iteration's first
// backward range (layer or FSDP pre_backward), after the backward from the
// end of the last (layer, FSDP post_backward), else in the backward.
//
// The strategy, over every steady iteration used:
//   hsdp   all-reduces over fewer ranks than the world (across the shard
//          groups) after reduce-scatters, or after reduces over fewer ranks
//          than the world (the gradients sent to their owners in the shard
//          group by dist.reduce: gradient_reduction "reduce", as the
//          testbed's HSDP loop over gloo)
//   zero3  some unit's parameters gathered again in the backward: an
//          all-gather there, or, with no all-gather in the trace at all (FSDP2
//          on one GPU issues none), GPU work launched in a unit's
//          pre_backward or backward_prefetch range (its copy-in)
//   zero2  gathered before the forward only (FSDP2 reshard_after_forward=False,
//          FSDP1 SHARD_GRAD_OP)
//   zero1  gathered only after the backward (after the optimizer step)
// shard_group is the all-gathers' group size; grad_dtype the reduce-scatters'
// datatype (fp32, bf16, fp16; the reduces' or all-reduces' without them).
//
// gradient_reduction. Without a reduce-scatter, a sharded run's gradients
// went to their owners by reduces (DeepSpeed ZeRO-1/2's one reduce per
// owner: "reduce"; the reduces then give the units' gradient bytes) or by
// all-reduces ("all_reduce"); with one, it stays unset (reduce_scatter, the
// default).
//
// grad_bytes. A unit's gradient bytes are its reduce-scatters' whole buffers
// (without any, its reduces'; without those either, its all-reduces'),
// averaged over the iterations used; all-gathers never count, nor do HSDP's
// all-reduces across the groups, which carry the shards the reduce-scatters
// or reduces made (all_reduces_carry_shards()). A unit with several rows has them split over its
// rows in proportion to each row's backward time (a layer's gradient work
// grows with its parameters; rows without backward get none), evenly when
// none has any, the rounding left on the unit's last row. A unit with
// bytes but no row gives them to the last row of a unit before it (the first
// row when there is none), with a warning. Everything that cannot be
// recovered is said in a warning.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "walk/trace_walk.h"
#include "traces/layer_profile.h"

namespace ssgd::walk {

class TraceSharding {
 public:
  // `layers`: the walker's layer count; `world_size`: the trace's (0: unknown).
  TraceSharding(std::size_t layers, std::int32_t world_size);

  // Reads one steady iteration of one rank.
  void add(const IterationWork& work);

  // The trace shows sharding: an all-gather, or FSDP ranges.
  [[nodiscard]] bool sharded() const { return gathers_ > 0 || framework_seen_; }
  [[nodiscard]] std::int64_t reduce_scatters() const { return reduce_scatters_; }
  // HSDP: all-reduces over fewer ranks than the world after reduce-scatters
  // or after reduces over fewer ranks than the world.
  [[nodiscard]] bool hsdp() const {
    return small_group_all_reduces_ > 0 && (reduce_scatters_ > 0 || small_group_reduces_ > 0);
  }
  // The all-reduces only carry the shards of gradients another collective
  // already counted (reduce-scatters, or HSDP's reduces): they never count
  // as gradient bytes.
  [[nodiscard]] bool all_reduces_carry_shards() const { return reduce_scatters_ > 0 || hsdp(); }
  // Units by first forward.
  [[nodiscard]] const std::vector<std::string>& units() const { return units_; }

  // Sets `profile`'s sharding, shard_group, grad_dtype, its rows' unit and,
  // where the reduce-scatters give them, their grad_bytes. `samples` is the
  // number of rank-iterations added. Appends what it could not recover to
  // `warnings`.
  void fill(trace::LayerProfile& profile, std::int64_t samples,
            std::vector<std::string>& warnings) const;

 private:
  struct Unit {
    std::int64_t gradient_bytes = 0;  // summed over iterations
    std::int64_t gradient_ops = 0;
    bool gathered_forward = false;
    bool gathered_backward = false;
  };
  std::int32_t unit_index(const std::string& name);

  std::int32_t world_size_ = 0;
  std::vector<std::string> units_;
  std::map<std::string, std::int32_t> unit_by_name_;
  std::vector<Unit> unit_stats_;
  std::vector<std::int32_t> layer_unit_;  // -1: not placed yet
  std::int64_t layer_unit_conflicts_ = 0;
  bool framework_seen_ = false;
  bool fsdp1_ = false;
  std::int64_t gathers_ = 0, gathers_forward_ = 0, gathers_backward_ = 0, gathers_after_ = 0;
  std::int64_t gathers_without_size_ = 0, first_unsized_gather_ = -1;
  std::int64_t reduce_scatters_ = 0, reduce_scatters_without_size_ = 0;
  std::int64_t first_unsized_reduce_scatter_ = -1;
  std::int64_t all_reduces_ = 0, small_group_all_reduces_ = 0;
  std::int64_t reduces_ = 0;                   // reduces to one rank (ZeRO-1/2's per-owner reduces)
  std::int64_t small_group_reduces_ = 0;       // of them, over fewer ranks than the world (HSDP's)
  std::int64_t unplaced_gradients_ = 0;        // reduce-scatters no unit took
  std::int64_t backward_copy_ins_ = 0;         // GPU work in pre_backward ranges
  std::int64_t gradient_bytes_unplaced_ = 0;   // bytes of those
  std::map<std::int32_t, std::int64_t> gather_groups_;   // nranks -> count
  std::map<std::string, std::int64_t> gradient_dtypes_;  // datatype -> count
  std::map<std::string, std::int64_t> all_reduce_dtypes_;
};

}  // namespace ssgd::walk
