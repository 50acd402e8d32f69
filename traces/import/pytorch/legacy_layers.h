#pragma once
// Layer marks for a PyTorch profile that has neither layer annotations nor
// autograd sequence numbers (the legacy profiler's files): forward/<layer>
// and backward/<layer> MarkerRanges, one iteration at a time.
//
// Layers are the top-level forward operators of an iteration, as in
// traces/import/pytorch/kineto_layers.h (`--layers ops`): the outermost operators on the
// forward thread before its first backward op, outside the optimizer's
// ranges and outside communication. Without sequence numbers, a backward
// node is tied to the forward op that made it by its name: the autograd
// engine runs the nodes of a CPU graph in exactly decreasing sequence
// number order, i.e. the reverse of their creation, so walking the
// iteration's `autograd::engine::evaluate_function: XBackwardN` ops in order
// and the forward ops (and the operators nested in them) in reverse, each
// node is matched to the next earlier operator whose name is X
// (traces/torch_op_names.h: AddmmBackward0 -> aten::addmm, TBackward0 ->
// aten::t inside aten::linear, LogSoftmaxBackward0 -> aten::_log_softmax).
// The top-level op holding that operator owns the node. A top-level op that
// owns no node is no layer (without sequence numbers it cannot be told from
// bookkeeping such as DDP's aten::zeros); AccumulateGrad nodes belong to no
// layer. Layers are named `<op name>#<k>`, k their position among the
// iteration's layers, so every iteration gives the same names.
//
// Best effort: a node whose forward op is not among the recorded operators
// (a custom autograd.Function, an op recorded under another name) is
// unmatched, and a name that repeats may tie a node to the wrong instance
// when nodes are skipped. docs/kineto.md ("Layers of a legacy file") has
// the limits.

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "traces/import/pytorch/cpu_range.h"
#include "traces/proto/trace_events.pb.h"

namespace ssgd::trace {

struct LegacyLayerStats {
  std::uint64_t layers = 0;           // distinct layer names
  std::uint64_t forward_ranges = 0;   // forward/<layer> marks written
  std::uint64_t backward_ranges = 0;  // backward/<layer> marks written
  std::uint64_t iterations = 0;       // iterations read
  // evaluate_function ops whose node matched no earlier forward operator.
  std::uint64_t backward_unmatched = 0;
  std::uint64_t accumulate_grad = 0;  // AccumulateGrad nodes: no layer
  // Top-level forward ops that own no node: not layers.
  std::uint64_t forward_ops_without_backward = 0;
  std::uint64_t peak_iteration_ranges = 0;  // most ranges held for one iteration
};

class LegacyLayerAligner {
 public:
  using Emit = std::function<void(const v1::Event&)>;
  // `domain` is written on every mark.
  LegacyLayerAligner(Emit emit, std::string domain)
      : emit_(std::move(emit)), domain_(std::move(domain)) {}

  // One iteration: its ranges in time order (traces/import/pytorch/cpu_range.h), all
  // threads, and the thread its forward pass ran on.
  void iteration(const std::vector<CpuRange>& ranges, std::uint64_t forward_thread);

  [[nodiscard]] LegacyLayerStats stats() const;

 private:
  void mark(const std::string& name, const CpuRange& r);

  Emit emit_;
  std::string domain_;
  LegacyLayerStats stats_;
  std::set<std::string> names_;
  v1::Event event_;  // reused
};

}  // namespace ssgd::trace
