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

namespace ssgd::trace {

// The ranges sharded data parallelism records with record_function (Kineto
// files them as user_annotation), read by the importer
// (traces/import/pytorch/kineto_mapping.h keeps them as MarkerRanges, name
// unchanged) and by the walker (walk/trace_walk.h), which takes the sharding
// units and the place of each collective from them. Sources in docs/kineto.md
// ("Sharded runs"):
//   FSDP2 (torch.distributed.fsdp.fully_shard, _fsdp_param_group.py,
//   _fsdp_state.py, _fsdp_collectives.py): "FSDP::<phase> (<fqn>)", the
//   module's fully qualified name in parentheses, none for the root module
//   ("FSDP::pre_forward"); "FSDP::forward_prefetch for <fqn>",
//   "FSDP::backward_prefetch for <fqn>"; "FSDP::root_pre_forward",
//   "FSDP::root_post_backward_callback", "FSDP::inputs_to_device".
//   FSDP1 (FullyShardedDataParallel, _runtime_utils.py):
//   "FullyShardedDataParallel._pre_forward", "._post_forward",
//   "._pre_forward_prefetch", "._pre_backward_hook", "._pre_backward_prefetch",
//   "._post_backward_hook", "._post_backward_prefetch", "._root_pre_forward",
//   ... without the unit's name.
struct ShardingRange {
  enum class Framework { kFsdp1, kFsdp2 };
  enum class Phase {
    kPreForward,       // the unit's parameters are gathered here before its forward
    kPostForward,      // ... and freed here (resharded) after it
    kForwardPrefetch,  // FSDP2: the named unit's gather, issued early; FSDP1: the next unit's
    kAllGather,        // FSDP2: the gather itself (world size > 1 only)
    kPreBackward,      // gathered again before the unit's backward (zero3)
    kBackwardPrefetch, // FSDP2: the named unit's backward gather, issued early
    kPostBackward,     // accumulate, reshard, reduce: the unit's gradients are reduced here
    kOther,            // root_pre_forward, inputs_to_device, rate_limiter, copy-in/out, ...
  };
  Framework framework = Framework::kFsdp2;
  Phase phase = Phase::kOther;
  // FSDP2: the unit's fully qualified name ("" for the root module); FSDP1:
  // always empty (its ranges do not say which unit they are).
  std::string unit;
  bool named = false;  // FSDP2's ranges that name a unit (the root's included)
};

// nullopt for any name that is not one of the ranges above.
std::optional<ShardingRange> parse_sharding_range(std::string_view name);

}  // namespace ssgd::trace
