#include "simulator/replay/gradient_buffers.h"

#include <algorithm>

namespace ssgd::sim {
namespace {

bool holds_unit_gradients(const dag::CommGroup& g) {
  switch (g.op) {
    case dag::CommOp::kReduceScatter:
    case dag::CommOp::kReduce: return true;
    case dag::CommOp::kAllReduce: return g.scope != dag::CommScope::kReplicas;
    default: return false;
  }
}

}  // namespace

std::optional<std::int64_t> waiting_gradient_peak(const std::vector<dag::CommGroup>& groups,
                                                  const std::vector<CommRun>& comm,
                                                  const BackwardStarts& backward) {
  // (time, bytes): +bytes when a buffer is made, -bytes when it is freed.
  std::vector<std::pair<Time, std::int64_t>> changes;
  for (const CommRun& c : comm) {
    if (c.task.group < 0 || static_cast<std::size_t>(c.task.group) >= groups.size()) continue;
    const dag::CommGroup& g = groups[static_cast<std::size_t>(c.task.group)];
    if (!holds_unit_gradients(g) || g.layers.empty()) continue;
    const std::int32_t first_to_run = *std::max_element(g.layers.begin(), g.layers.end());
    Time made = c.start;
    if (const auto it = backward.find({c.task.iteration, first_to_run}); it != backward.end()) {
      made = std::min(made, it->second);
    }
    changes.emplace_back(made, g.bytes);
    changes.emplace_back(c.end, -g.bytes);
  }
  if (changes.empty()) return std::nullopt;
  // Frees before makes at the same instant: a buffer freed as another is
  // made is not held beside it.
  std::sort(changes.begin(), changes.end());
  std::int64_t held = 0, peak = 0;
  for (const auto& [at, bytes] : changes) {
    held += bytes;
    peak = std::max(peak, held);
  }
  return peak;
}

}  // namespace ssgd::sim
