#pragma once
// What the name of a PyTorch profiler range says about it: the autograd
// engine's backward ops, the optimizer's and the profiler's own ranges, and
// the name rules that tie a backward node to the forward op that made it.
// Sources are cited in docs/kineto.md ("The PyTorch facts it relies on").

#include <optional>
#include <string>
#include <string_view>

namespace ssgd::trace {

// The autograd engine runs each backward node inside a range named
// "autograd::engine::evaluate_function: <node>" (torch/csrc/autograd/engine.cpp).
inline constexpr std::string_view kEvaluateFunctionPrefix = "autograd::engine::evaluate_function: ";

// "autograd::engine::evaluate_function: AddmmBackward0" -> "AddmmBackward0";
// nullopt for any other name.
std::optional<std::string_view> backward_node_name(std::string_view op_name);

// torch::autograd::AccumulateGrad: the node that adds a gradient to a leaf
// tensor (DDP launches its all-reduces from its hooks). Belongs to no layer.
bool is_accumulate_grad_node(std::string_view node);

// The key that matches a backward node to the forward op that created it:
// the node's name without its "Backward<N>" suffix, and an op's name
// without its namespace, both lower case with underscores dropped, so that
// CamelCase and snake_case meet and leading underscores do not matter:
// AddmmBackward0 and aten::addmm -> "addmm", LogSoftmaxBackward0 and
// aten::_log_softmax -> "logsoftmax", NllLossBackward0 and aten::nll_loss ->
// "nllloss". Empty for a node name without a "Backward" suffix.
std::string backward_node_key(std::string_view node);
// The folding both keys use, and collective names too: lower case,
// underscores dropped ("_allgather_base" -> "allgatherbase").
std::string fold_op_name(std::string_view name);
std::string forward_op_key(std::string_view op_name);

// The optimizer's ranges: "Optimizer.step#SGD.step",
// "Optimizer.zero_grad#SGD.zero_grad" (torch/optim/optimizer.py).
bool is_optimizer_range(std::string_view name);
// Only the step: "Optimizer.step#<Class>.step".
bool is_optimizer_step(std::string_view name);

// The profiler's step ranges, "ProfilerStep#<N>".
bool is_profiler_step_range(std::string_view name);

// Ranges of the autograd engine itself ("autograd::engine::...").
bool is_autograd_engine_op(std::string_view name);

// With with_stack (or with_modules), the Python tracer records each
// nn.Module call as "nn.Module: <Class>_<i>" (torch/csrc/profiler/collection.cpp):
// -> "<Class>_<i>"; nullopt for any other name.
std::optional<std::string_view> module_range_name(std::string_view name);

// The legacy profiler (no Kineto) has no categories: a range whose name
// has no "::" is a record_function annotation or a Python-level wrapper
// (DistributedDataParallel.forward, Optimizer.step#SGD.step, detach), not an
// operator.
bool is_legacy_annotation(std::string_view name);

}  // namespace ssgd::trace
