#include "traces/import/pytorch/legacy_layers.h"

#include <algorithm>
#include <limits>

#include "traces/marker_names.h"
#include "traces/torch_op_names.h"

namespace ssgd::trace {

void LegacyLayerAligner::iteration(const std::vector<CpuRange>& ranges,
                                   std::uint64_t forward_thread) {
  ++stats_.iterations;
  stats_.peak_iteration_ranges =
      std::max<std::uint64_t>(stats_.peak_iteration_ranges, ranges.size());
  // The backward pass starts with the first evaluate_function op.
  std::int64_t backward_start = std::numeric_limits<std::int64_t>::max();
  std::vector<std::size_t> backward;  // evaluate_function ops, in order
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const auto node = backward_node_name(ranges[i].name);
    if (!node) continue;
    backward_start = std::min(backward_start, ranges[i].start_ns);
    if (is_accumulate_grad_node(*node)) {
      ++stats_.accumulate_grad;
    } else {
      backward.push_back(i);
    }
  }

  // The forward operators, in time order, each with its top-level op.
  struct Forward {
    std::string key;
    std::size_t owner;  // index into `tops`
  };
  std::vector<Forward> forward;
  std::vector<std::size_t> tops;  // range index of each top-level op
  struct Open {
    std::int64_t end_ns;
    std::ptrdiff_t owner;  // -1: none
    bool excluded;         // optimizer, communication or autograd engine
  };
  std::vector<Open> stack;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const CpuRange& r = ranges[i];
    if (r.thread_id != forward_thread || r.start_ns >= backward_start) continue;
    while (!stack.empty() && stack.back().end_ns <= r.start_ns) stack.pop_back();
    const Open parent =
        stack.empty() ? Open{std::numeric_limits<std::int64_t>::max(), -1, false} : stack.back();
    const bool excluded = parent.excluded || r.kind == CpuRange::Kind::kCommunication ||
                          is_optimizer_range(r.name) || is_autograd_engine_op(r.name);
    std::ptrdiff_t owner = parent.owner;
    if (!excluded && r.kind == CpuRange::Kind::kOperator) {
      if (owner < 0) {
        owner = static_cast<std::ptrdiff_t>(tops.size());
        tops.push_back(i);
      }
      forward.push_back({forward_op_key(r.name), static_cast<std::size_t>(owner)});
    }
    stack.push_back({std::min(r.end_ns, parent.end_ns), owner, excluded});
  }

  // Nodes run in reverse creation order: match each to the next earlier
  // forward operator of its name.
  std::vector<std::vector<std::size_t>> owned(tops.size());
  std::size_t position = forward.size();
  for (const std::size_t b : backward) {
    const std::string key = backward_node_key(*backward_node_name(ranges[b].name));
    std::size_t q = position;
    bool found = false;
    while (!key.empty() && q > 0) {
      --q;
      if (forward[q].key == key) {
        found = true;
        break;
      }
    }
    if (!found) {
      ++stats_.backward_unmatched;
      continue;
    }
    owned[forward[q].owner].push_back(b);
    position = q;
  }

  std::size_t k = 0;
  for (std::size_t t = 0; t < tops.size(); ++t) {
    if (owned[t].empty()) {
      ++stats_.forward_ops_without_backward;
      continue;
    }
    const CpuRange& top = ranges[tops[t]];
    const std::string layer = top.name + "#" + std::to_string(k++);
    names_.insert(layer);
    mark(forward_mark(layer), top);
    ++stats_.forward_ranges;
    for (const std::size_t b : owned[t]) {
      mark(backward_mark(layer), ranges[b]);
      ++stats_.backward_ranges;
    }
  }
}

LegacyLayerStats LegacyLayerAligner::stats() const {
  LegacyLayerStats s = stats_;
  s.layers = names_.size();
  return s;
}

void LegacyLayerAligner::mark(const std::string& name, const CpuRange& r) {
  event_.Clear();
  auto* m = event_.mutable_marker();
  m->set_name(name);
  m->set_domain(domain_);
  m->set_thread_id(r.thread_id);
  m->set_start_ns(r.start_ns);
  m->set_end_ns(r.end_ns);
  emit_(event_);
}

}  // namespace ssgd::trace
