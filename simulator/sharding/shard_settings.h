#pragma once
// How a job shards its model state and runs its steps: the strategy (none,
// ZeRO-1, ZeRO-2, ZeRO-3, HSDP), the units parameters are gathered in, the
// frameworks' overlap knobs, gradient accumulation, the dtypes parameters
// and gradients are stored and communicated in, and the optimizer. The
// scenario's sharding.* and workload.* keys (scenarios/README.md) set them;
// docs/sharding.md describes the model.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "dag/sharded_dag_builder.h"

namespace ssgd::sim {

enum class ShardStrategy : std::uint8_t { kNone, kZero1, kZero2, kZero3, kHsdp };
enum class Optimizer : std::uint8_t { kSgd, kMomentum, kAdam };
enum class Dtype : std::uint8_t { kFp32, kBf16, kFp16 };
// How a sharded step reduces each gradient group to its shards' owners:
//   reduce_scatter  one reduce-scatter (FSDP, DeepSpeed ZeRO-3);
//   reduce          one reduce of each shard to its owner, P of S / P, one
//                   after the other (DeepSpeed ZeRO-1/2 with reduce_scatter:
//                   true, its average_tensor; the testbed's loop over gloo);
//   all_reduce      one all-reduce, each rank keeping its shard (DeepSpeed
//                   ZeRO-1/2 with reduce_scatter: false).
enum class GradientReduction : std::uint8_t { kReduceScatter, kReduce, kAllReduce };

const char* to_string(ShardStrategy strategy);
const char* to_string(Optimizer optimizer);
const char* to_string(Dtype dtype);
const char* to_string(dag::BackwardPrefetch prefetch);
const char* to_string(GradientReduction reduction);
// Names as written in scenarios: none (also ddp, no_shard), zero1, zero2,
// zero3 (also full_shard), hsdp (also hybrid_shard); sgd, momentum, adam
// (also adamw); fp32, bf16, fp16; pre, post, none.
std::optional<ShardStrategy> parse_shard_strategy(std::string_view name);
std::optional<Optimizer> parse_optimizer(std::string_view name);
std::optional<Dtype> parse_dtype(std::string_view name);
std::optional<dag::BackwardPrefetch> parse_backward_prefetch(std::string_view name);
// reduce_scatter, reduce, all_reduce.
std::optional<GradientReduction> parse_gradient_reduction(std::string_view name);
std::int64_t dtype_bytes(Dtype dtype);

// sharding.units: the profile's unit column when it has one, else one unit
// per layer (auto); one unit per layer (layer); or consecutive layers grouped
// until they hold at least `min_params` parameters (FSDP's
// size_based_auto_wrap_policy).
struct UnitsChoice {
  enum class Kind : std::uint8_t { kAuto, kLayer, kMinParams } kind = Kind::kAuto;
  std::int64_t min_params = 0;
  friend bool operator==(const UnitsChoice&, const UnitsChoice&) = default;
};

struct ShardSettings {
  ShardStrategy strategy = ShardStrategy::kNone;  // sharding.strategy
  std::optional<std::int64_t> group;              // sharding.group (hsdp; default gpus_per_node)
  UnitsChoice units;                              // sharding.units
  std::int64_t forward_prefetch = 1;              // sharding.forward_prefetch
  dag::BackwardPrefetch backward_prefetch = dag::BackwardPrefetch::kPre;  // sharding.backward_prefetch
  bool reshard_after_forward = true;              // sharding.reshard_after_forward
  std::int64_t max_gathers_in_flight = 2;         // sharding.max_gathers_in_flight (0: no limit)
  bool separate_streams = false;                  // sharding.separate_streams
  GradientReduction gradient_reduction = GradientReduction::kReduceScatter;  // sharding.gradient_reduction
  std::optional<Dtype> precision;                 // workload.precision (default: the profile's grad_dtype)
  std::optional<Dtype> reduce_dtype;              // workload.reduce_dtype (default: precision)
  std::optional<Dtype> gather_dtype;              // workload.gather_dtype (default: precision)
  // workload.optimizer; unset: Adam assumed, and every output that uses it
  // says so (a trace does not record its optimizer).
  std::optional<Optimizer> optimizer;
  [[nodiscard]] Optimizer optimizer_or_assumed() const { return optimizer.value_or(Optimizer::kAdam); }
  std::int64_t accumulation = 1;                  // workload.accumulation
  bool no_sync = true;                            // workload.no_sync
  bool activation_checkpointing = false;          // workload.activation_checkpointing

  // Whether the step is not ProfileDagBuilder's: parameters sharded, or
  // more than one micro-batch.
  [[nodiscard]] bool needs_sharded_dag() const {
    return strategy != ShardStrategy::kNone || accumulation > 1;
  }
  [[nodiscard]] bool per_unit_gathers() const {
    return strategy == ShardStrategy::kZero3 || strategy == ShardStrategy::kHsdp;
  }
  friend bool operator==(const ShardSettings&, const ShardSettings&) = default;
};

}  // namespace ssgd::sim
