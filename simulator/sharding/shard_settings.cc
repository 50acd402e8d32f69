#include "simulator/sharding/shard_settings.h"

namespace ssgd::sim {

const char* to_string(ShardStrategy strategy) {
  switch (strategy) {
    case ShardStrategy::kNone: return "none";
    case ShardStrategy::kZero1: return "zero1";
    case ShardStrategy::kZero2: return "zero2";
    case ShardStrategy::kZero3: return "zero3";
    case ShardStrategy::kHsdp: return "hsdp";
  }
  return "?";
}

const char* to_string(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::kSgd: return "sgd";
    case Optimizer::kMomentum: return "momentum";
    case Optimizer::kAdam: return "adam";
  }
  return "?";
}

const char* to_string(Dtype dtype) {
  switch (dtype) {
    case Dtype::kFp32: return "fp32";
    case Dtype::kBf16: return "bf16";
    case Dtype::kFp16: return "fp16";
  }
  return "?";
}

const char* to_string(dag::BackwardPrefetch prefetch) {
  switch (prefetch) {
    case dag::BackwardPrefetch::kPre: return "pre";
    case dag::BackwardPrefetch::kPost: return "post";
    case dag::BackwardPrefetch::kNone: return "none";
  }
  return "?";
}

std::optional<ShardStrategy> parse_shard_strategy(std::string_view name) {
  if (name == "none" || name == "ddp" || name == "no_shard") return ShardStrategy::kNone;
  if (name == "zero1") return ShardStrategy::kZero1;
  if (name == "zero2") return ShardStrategy::kZero2;
  if (name == "zero3" || name == "full_shard") return ShardStrategy::kZero3;
  if (name == "hsdp" || name == "hybrid_shard") return ShardStrategy::kHsdp;
  return std::nullopt;
}

std::optional<Optimizer> parse_optimizer(std::string_view name) {
  if (name == "sgd") return Optimizer::kSgd;
  if (name == "momentum") return Optimizer::kMomentum;
  if (name == "adam" || name == "adamw") return Optimizer::kAdam;
  return std::nullopt;
}

std::optional<Dtype> parse_dtype(std::string_view name) {
  if (name == "fp32") return Dtype::kFp32;
  if (name == "bf16") return Dtype::kBf16;
  if (name == "fp16") return Dtype::kFp16;
  return std::nullopt;
}

std::optional<dag::BackwardPrefetch> parse_backward_prefetch(std::string_view name) {
  if (name == "pre") return dag::BackwardPrefetch::kPre;
  if (name == "post") return dag::BackwardPrefetch::kPost;
  if (name == "none") return dag::BackwardPrefetch::kNone;
  return std::nullopt;
}

const char* to_string(GradientReduction reduction) {
  switch (reduction) {
    case GradientReduction::kReduceScatter: return "reduce_scatter";
    case GradientReduction::kReduce: return "reduce";
    case GradientReduction::kAllReduce: return "all_reduce";
  }
  return "?";
}

std::optional<GradientReduction> parse_gradient_reduction(std::string_view name) {
  if (name == "reduce_scatter") return GradientReduction::kReduceScatter;
  if (name == "reduce") return GradientReduction::kReduce;
  if (name == "all_reduce") return GradientReduction::kAllReduce;
  return std::nullopt;
}

std::int64_t dtype_bytes(Dtype dtype) { return dtype == Dtype::kFp32 ? 4 : 2; }

}  // namespace ssgd::sim
