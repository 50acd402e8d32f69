#include "simulator/sharding/shard_settings.h"

#include "common/enum_names.h"

namespace ssgd::sim {

namespace {

// FSDP's and DDP's words are aliases: none is ddp or no_shard, zero3
// full_shard, hsdp hybrid_shard; adamw is Adam's memory.
constexpr EnumNames<ShardStrategy, 5, 4> kStrategyNames{{{
                                                            {ShardStrategy::kNone, "none"},
                                                            {ShardStrategy::kZero1, "zero1"},
                                                            {ShardStrategy::kZero2, "zero2"},
                                                            {ShardStrategy::kZero3, "zero3"},
                                                            {ShardStrategy::kHsdp, "hsdp"},
                                                        }},
                                                        {{
                                                            {ShardStrategy::kNone, "ddp"},
                                                            {ShardStrategy::kNone, "no_shard"},
                                                            {ShardStrategy::kZero3, "full_shard"},
                                                            {ShardStrategy::kHsdp, "hybrid_shard"},
                                                        }}};
constexpr EnumNames<Optimizer, 3, 1> kOptimizerNames{
    {{{Optimizer::kSgd, "sgd"}, {Optimizer::kMomentum, "momentum"}, {Optimizer::kAdam, "adam"}}},
    {{{Optimizer::kAdam, "adamw"}}}};
constexpr EnumNames<Dtype, 3> kDtypeNames{
    {{{Dtype::kFp32, "fp32"}, {Dtype::kBf16, "bf16"}, {Dtype::kFp16, "fp16"}}}};
constexpr EnumNames<dag::BackwardPrefetch, 3> kPrefetchNames{{{
    {dag::BackwardPrefetch::kPre, "pre"},
    {dag::BackwardPrefetch::kPost, "post"},
    {dag::BackwardPrefetch::kNone, "none"},
}}};

}  // namespace

const char* to_string(ShardStrategy strategy) { return kStrategyNames.name(strategy); }
const char* to_string(Optimizer optimizer) { return kOptimizerNames.name(optimizer); }
const char* to_string(Dtype dtype) { return kDtypeNames.name(dtype); }
const char* to_string(dag::BackwardPrefetch prefetch) { return kPrefetchNames.name(prefetch); }

std::optional<ShardStrategy> parse_shard_strategy(std::string_view name) {
  return kStrategyNames.parse(name);
}

std::optional<Optimizer> parse_optimizer(std::string_view name) {
  return kOptimizerNames.parse(name);
}

std::optional<Dtype> parse_dtype(std::string_view name) { return kDtypeNames.parse(name); }

std::optional<dag::BackwardPrefetch> parse_backward_prefetch(std::string_view name) {
  return kPrefetchNames.parse(name);
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
