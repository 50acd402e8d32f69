// Fixed-size fusion: PyTorch DDP buckets and Horovod's fusion buffer
// (overlap_policy.h gives the rules and their sources).

#include "simulator/policy/merge_policies.h"

namespace ssgd::sim::detail {

dag::CommPlan ddp_plan(const std::vector<Gradient>& g, std::int64_t first_bucket_bytes,
                       std::int64_t bucket_cap_bytes) {
  std::vector<std::size_t> starts;
  std::int64_t size = 0;
  std::int64_t cap = first_bucket_bytes;
  bool open = false;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (!open) {
      starts.push_back(i);
      open = true;
      size = 0;
    }
    size += g[i].bytes;  // added first, then checked: a bucket may pass its cap by one tensor
    if (size >= cap) {
      open = false;
      cap = bucket_cap_bytes;
    }
  }
  return plan_of_groups(g, starts);
}

dag::CommPlan horovod_plan(const std::vector<Gradient>& g, std::int64_t threshold_bytes,
                           Duration cycle) {
  std::vector<std::size_t> starts;
  std::size_t next = 0;  // first gradient not yet sent
  // Ticks at cycle, 2 cycle, ... from the start of backward; a zero cycle
  // means every gradient is looked at as soon as it is ready.
  Duration tick = cycle;  // time of the current tick, from the start of backward
  while (next < g.size()) {
    if (cycle > Duration::zero()) {
      if (tick < g[next].ready) {  // the first tick at or after it is ready
        const std::int64_t n = (g[next].ready.ns() + cycle.ns() - 1) / cycle.ns();
        tick = Duration(n * cycle.ns());
      }
    } else {
      tick = g[next].ready;
    }
    // Everything ready by this tick, packed in ready order, checked before adding.
    std::int64_t size = 0;
    bool open = false;
    while (next < g.size() && g[next].ready <= tick) {
      if (open && size + g[next].bytes > threshold_bytes) open = false;
      if (!open) {
        starts.push_back(next);
        open = true;
        size = 0;
      }
      size += g[next].bytes;
      ++next;
    }
  }
  return plan_of_groups(g, starts);
}

}  // namespace ssgd::sim::detail
