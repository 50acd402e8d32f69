#include "traces/torch_op_names.h"

#include <cctype>

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
