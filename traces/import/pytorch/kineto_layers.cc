#include "traces/import/pytorch/kineto_layers.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <utility>

#include "traces/collective_names.h"
#include "traces/marker_names.h"
#include "traces/torch_op_names.h"

namespace ssgd::trace {
namespace {

// Operators that are not a layer's work even when they carry a sequence
// number: c10d's collectives and their bookkeeping op, the optimizer, and
// the profiler's and the autograd engine's own ranges.
bool is_layer_op(std::string_view name) {
  return !is_communication_op(name) && !is_optimizer_range(name) &&
         !is_profiler_step_range(name) && !is_autograd_engine_op(name);
}

// A host op in a sorter entry: start and kind are the entry's keys, the
// second key is -end so that an enclosing range sorts before the ranges it
// holds when they start together; the bytes hold end, thread, sequence
// number and name.
EventSorter::Entry encode(const KinetoHostOp& op) {
  EventSorter::Entry e;
  e.start_ns = op.start_ns;
  e.end_ns = -op.end_ns;
  e.kind = static_cast<std::int32_t>(op.kind);
  e.bytes.resize(24 + op.name.size());
  std::memcpy(e.bytes.data(), &op.end_ns, 8);
  std::memcpy(e.bytes.data() + 8, &op.thread_id, 8);
  std::memcpy(e.bytes.data() + 16, &op.sequence_number, 8);
  std::memcpy(e.bytes.data() + 24, op.name.data(), op.name.size());
  return e;
}

void decode(const EventSorter::Entry& e, KinetoHostOp& op) {
  if (e.bytes.size() < 24) throw std::runtime_error("layer derivation: a sorted range is cut short");
  op.kind = static_cast<KinetoHostOp::Kind>(e.kind);
  op.start_ns = e.start_ns;
  std::memcpy(&op.end_ns, e.bytes.data(), 8);
  std::memcpy(&op.thread_id, e.bytes.data() + 8, 8);
  std::memcpy(&op.sequence_number, e.bytes.data() + 16, 8);
  op.name.assign(e.bytes.data() + 24, e.bytes.size() - 24);
}

}  // namespace

std::string_view kineto_layer_source_name(KinetoLayerSource source) {
  switch (source) {
    case KinetoLayerSource::kAuto: return "auto";
    case KinetoLayerSource::kMarks: return "marks";
    case KinetoLayerSource::kModules: return "modules";
    case KinetoLayerSource::kOps: return "ops";
  }
  return "?";
}

std::optional<KinetoLayerSource> parse_kineto_layer_source(std::string_view text) {
  for (auto s : {KinetoLayerSource::kAuto, KinetoLayerSource::kMarks, KinetoLayerSource::kModules,
                 KinetoLayerSource::kOps}) {
    if (text == kineto_layer_source_name(s)) return s;
  }
  return std::nullopt;
}

KinetoLayerDeriver::KinetoLayerDeriver(std::filesystem::path spill_dir, std::size_t run_bytes)
    : sorter_(std::move(spill_dir), run_bytes) {}

void KinetoLayerDeriver::add(const KinetoHostOp& op) { sorter_.add_entry(encode(op)); }

KinetoLayerStats KinetoLayerDeriver::derive(KinetoLayerSource source, const Emit& emit) {
  source_ = source;
  emit_ = &emit;
  KinetoHostOp op;
  sorter_.for_each([&](const EventSorter::Entry& e) {
    decode(e, op);
    ++stats_.ops_sorted;
    close_until(op.start_ns);
    switch (op.kind) {
      case KinetoHostOp::Kind::kStep: step(op); break;
      case KinetoHostOp::Kind::kModule: module(op); break;
      case KinetoHostOp::Kind::kForwardOp: forward_op(op); break;
      case KinetoHostOp::Kind::kBackwardOp: backward_op(op); break;
    }
  });
  close_until(std::numeric_limits<std::int64_t>::max());
  stats_.peak_iteration_ops = std::max<std::uint64_t>(stats_.peak_iteration_ops, owners_.size());
  stats_.layers = layer_names_.size();
  stats_.containers = container_names_.size();
  stats_.sort_runs = sorter_.runs_spilled();
  emit_ = nullptr;
  return stats_;
}

void KinetoLayerDeriver::close_until(std::int64_t t_ns) {
  while (!open_modules_.empty() && open_modules_.back().end_ns <= t_ns) close_module();
  while (!open_op_ends_.empty() && open_op_ends_.back() <= t_ns) open_op_ends_.pop_back();
}

// A module's forward range is written when it closes, once it is known
// whether a module range started inside it.
void KinetoLayerDeriver::close_module() {
  const OpenModule m = open_modules_.back();
  open_modules_.pop_back();
  const Layer& layer = layers_[static_cast<std::size_t>(m.layer)];
  if (layer.leaf) {
    mark(forward_mark(layer.name), m.start_ns, m.end_ns, m.thread_id, "kineto:python_function");
    ++stats_.forward_ranges;
    layer_names_.insert(layer.name);
  } else {
    container_names_.insert(layer.name);
  }
}

void KinetoLayerDeriver::step(const KinetoHostOp& op) {
  // A new iteration: the previous one's forward ops cannot own a backward
  // node any more (each iteration builds a new autograd graph).
  close_until(std::numeric_limits<std::int64_t>::max());
  stats_.peak_iteration_ops = std::max<std::uint64_t>(stats_.peak_iteration_ops, owners_.size());
  owners_.clear();
  layers_.clear();
  max_sequence_ = -1;
  next_k_ = 0;
  forward_thread_ = op.thread_id;
  steps_seen_ = true;
  step_end_ns_ = op.end_ns;
}

void KinetoLayerDeriver::module(const KinetoHostOp& op) {
  if (source_ != KinetoLayerSource::kModules) return;
  if (!forward_thread_) forward_thread_ = op.thread_id;
  if (op.thread_id != *forward_thread_) {
    ++stats_.ranges_ignored;
    return;
  }
  if (!open_modules_.empty()) layers_[static_cast<std::size_t>(open_modules_.back().layer)].leaf = false;
  open_modules_.push_back({op.start_ns, op.end_ns, op.thread_id,
                           static_cast<std::int32_t>(layers_.size())});
  layers_.push_back({op.name, true});
}

void KinetoLayerDeriver::forward_op(const KinetoHostOp& op) {
  if (!forward_thread_) forward_thread_ = op.thread_id;
  if (op.thread_id != *forward_thread_) {
    ++stats_.ranges_ignored;
    return;
  }
  const bool top_level = open_op_ends_.empty();
  open_op_ends_.push_back(op.end_ns);
  max_sequence_ = std::max(max_sequence_, op.sequence_number);
  if (!top_level) return;
  std::int32_t owner = -1;
  if (source_ == KinetoLayerSource::kOps) {
    const bool in_step = !steps_seen_ || op.start_ns < step_end_ns_;
    if (in_step && is_layer_op(op.name)) {
      owner = static_cast<std::int32_t>(layers_.size());
      layers_.push_back({op.name + "#" + std::to_string(next_k_++), true});
      const std::string& name = layers_.back().name;
      mark(forward_mark(name), op.start_ns, op.end_ns, op.thread_id, "kineto:cpu_op");
      ++stats_.forward_ranges;
      layer_names_.insert(name);
    }
  } else if (!open_modules_.empty()) {
    owner = open_modules_.back().layer;
  }
  // An op that made no node leaves its number to the next op, which then
  // takes it over: the later one is the owner.
  owners_[op.sequence_number] = owner;
}

void KinetoLayerDeriver::backward_op(const KinetoHostOp& op) {
  const std::int64_t s = op.sequence_number;
  if (owners_.empty() || s < owners_.begin()->first || s > max_sequence_) {
    ++stats_.backward_unmatched;
    return;
  }
  const std::int32_t owner = std::prev(owners_.upper_bound(s))->second;
  if (owner < 0 || !layers_[static_cast<std::size_t>(owner)].leaf) {
    ++stats_.backward_outside_layers;
    return;
  }
  mark(backward_mark(layers_[static_cast<std::size_t>(owner)].name), op.start_ns, op.end_ns,
       op.thread_id, "kineto:cpu_op");
  ++stats_.backward_ranges;
}

void KinetoLayerDeriver::mark(const std::string& name, std::int64_t start_ns, std::int64_t end_ns,
                              std::uint64_t thread_id, const char* domain) {
  event_.Clear();
  auto* m = event_.mutable_marker();
  m->set_name(name);
  m->set_domain(domain);
  m->set_thread_id(thread_id);
  m->set_start_ns(start_ns);
  m->set_end_ns(end_ns);
  (*emit_)(event_);
}

}  // namespace ssgd::trace
