#include "traces/import/pytorch/cpu_compute.h"

#include <algorithm>

#include "traces/kernel_names.h"

namespace ssgd::trace {

void CpuComputeExtractor::add(const CpuRange& r) {
  auto& stack = stacks_[r.thread_id];
  while (!stack.empty() && stack.back().end_ns <= r.start_ns) stack.pop_back();
  const bool covered = !stack.empty() && stack.back().covered;
  // A child written with a later end than its parent (the legacy profiler
  // rounds start and duration to microseconds apart) still closes with it.
  const std::int64_t end = stack.empty() ? r.end_ns : std::min(r.end_ns, stack.back().end_ns);
  if (r.kind == CpuRange::Kind::kOperator) {
    if (!covered) {
      event_.Clear();
      auto* k = event_.mutable_kernel();
      k->set_name(r.name);
      k->set_device(kHostDevice);
      k->set_stream(static_cast<std::uint32_t>(r.thread_id));
      k->set_start_ns(r.start_ns);
      k->set_end_ns(r.end_ns);
      ++stats_.kernels;
      emit_(event_);
    } else if (std::any_of(stack.begin(), stack.end(), [](const Open& o) {
                 return o.kind == CpuRange::Kind::kCommunication;
               })) {
      ++stats_.under_communication;
    } else {
      ++stats_.nested_operators;
    }
  }
  stack.push_back({end, r.kind, covered || r.kind != CpuRange::Kind::kAnnotation});
}

}  // namespace ssgd::trace
