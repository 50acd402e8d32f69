#include "traces/torch_op_names.h"

#include <cctype>
#include <utility>

namespace ssgd::trace {
std::string fold_op_name(std::string_view name) {
  std::string n;
  for (char c : name) {
    if (c != '_') n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return n;
}

std::optional<std::string_view> backward_node_name(std::string_view op_name) {
  if (!op_name.starts_with(kEvaluateFunctionPrefix)) return std::nullopt;
  return op_name.substr(kEvaluateFunctionPrefix.size());
}

bool is_accumulate_grad_node(std::string_view node) {
  return node.size() >= 14 && node.substr(node.size() - 14) == "AccumulateGrad";
}

std::string backward_node_key(std::string_view node) {
  if (const auto ns = node.rfind("::"); ns != std::string_view::npos) node.remove_prefix(ns + 2);
  // XBackward, XBackward0, XBackward12
  std::size_t end = node.size();
  while (end > 0 && std::isdigit(static_cast<unsigned char>(node[end - 1])) != 0) --end;
  constexpr std::string_view kSuffix = "Backward";
  if (end < kSuffix.size() || node.substr(end - kSuffix.size(), kSuffix.size()) != kSuffix) {
    return {};
  }
  return fold_op_name(node.substr(0, end - kSuffix.size()));
}

std::string forward_op_key(std::string_view op_name) {
  if (const auto ns = op_name.rfind("::"); ns != std::string_view::npos) {
    op_name.remove_prefix(ns + 2);
  }
  return fold_op_name(op_name);
}

bool is_optimizer_range(std::string_view name) { return name.starts_with("Optimizer."); }

bool is_optimizer_step(std::string_view name) { return name.starts_with("Optimizer.step#"); }

bool is_profiler_step_range(std::string_view name) { return name.starts_with("ProfilerStep#"); }

bool is_autograd_engine_op(std::string_view name) { return name.starts_with("autograd::"); }

std::optional<std::string_view> module_range_name(std::string_view name) {
  constexpr std::string_view kPrefix = "nn.Module: ";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  return name.substr(kPrefix.size());
}

bool is_legacy_annotation(std::string_view name) {
  return name.find("::") == std::string_view::npos;
}

}  // namespace ssgd::trace

namespace ssgd::trace {
namespace {

using Phase = ShardingRange::Phase;

struct PhaseName {
  std::string_view name;
  Phase phase;
};

// FSDP2's labels before " (<fqn>)" (FSDPParamGroup._with_fqn).
constexpr PhaseName kFsdp2Phases[] = {
    {"pre_forward", Phase::kPreForward},
    {"post_forward", Phase::kPostForward},
    {"all_gather", Phase::kAllGather},
    {"all_gather_copy_in", Phase::kOther},
    {"all_gather_copy_out", Phase::kOther},
    {"pre_backward", Phase::kPreBackward},
    {"post_backward_accumulate", Phase::kPostBackward},
    {"post_backward_reshard", Phase::kPostBackward},
    {"post_backward_reduce", Phase::kPostBackward},
};

// FSDP1's record_function names after "FullyShardedDataParallel.".
constexpr PhaseName kFsdp1Phases[] = {
    {"_pre_forward", Phase::kPreForward},
    {"_post_forward", Phase::kPostForward},
    {"_pre_forward_prefetch", Phase::kForwardPrefetch},
    {"_pre_backward_hook", Phase::kPreBackward},
    {"_pre_backward_prefetch", Phase::kBackwardPrefetch},
    {"_post_backward_hook", Phase::kPostBackward},
    {"_post_backward_prefetch", Phase::kBackwardPrefetch},
};

}  // namespace

std::optional<ShardingRange> parse_sharding_range(std::string_view name) {
  constexpr std::string_view kFsdp2 = "FSDP::";
  constexpr std::string_view kFsdp1 = "FullyShardedDataParallel.";
  ShardingRange r;
  if (name.starts_with(kFsdp1)) {
    r.framework = ShardingRange::Framework::kFsdp1;
    name.remove_prefix(kFsdp1.size());
    for (const auto& p : kFsdp1Phases) {
      if (name == p.name) r.phase = p.phase;
    }
    return r;
  }
  if (!name.starts_with(kFsdp2)) return std::nullopt;
  name.remove_prefix(kFsdp2.size());
  // "<pass>_prefetch for <fqn>" (FSDPParamGroup._prefetch_unshard)
  for (const auto& [pass, phase] : {std::pair{std::string_view("forward_prefetch for "),
                                              Phase::kForwardPrefetch},
                                    {std::string_view("backward_prefetch for "),
                                     Phase::kBackwardPrefetch}}) {
    if (name.starts_with(pass)) {
      r.phase = phase;
      r.unit = std::string(name.substr(pass.size()));
      // The root's fqn is empty, and an f-string writes "None" for an unset one.
      if (r.unit == "None") r.unit.clear();
      r.named = true;
      return r;
    }
  }
  std::string_view label = name;
  if (const auto open = name.find(" ("); open != std::string_view::npos && name.ends_with(")")) {
    label = name.substr(0, open);
    r.unit = std::string(name.substr(open + 2, name.size() - open - 3));
  }
  for (const auto& p : kFsdp2Phases) {
    if (label == p.name) {
      r.phase = p.phase;
      r.named = true;
    }
  }
  return r;
}

}  // namespace ssgd::trace
