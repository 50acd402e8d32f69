#include "traces/import/pytorch/cpu_compute.h"

#include <algorithm>
#include <iterator>
#include <limits>

#include "traces/kernel_names.h"

namespace ssgd::trace {

void CpuComputeExtractor::add(const CpuRange& r) {
  close_before(r.start_ns);
  auto& stack = stacks_[r.thread_id];
  while (!stack.empty() && stack.back().end_ns <= r.start_ns) stack.pop_back();
  const bool covered = !stack.empty() && stack.back().covered;
  // A child written with a later end than its parent (the legacy profiler
  // rounds start and duration to microseconds apart) still closes with it.
  const std::int64_t end = stack.empty() ? r.end_ns : std::min(r.end_ns, stack.back().end_ns);
  const bool outermost = r.kind == CpuRange::Kind::kOperator && !covered;
  if (r.kind == CpuRange::Kind::kOperator) {
    if (outermost) {
      // The thread's previous outermost operator, if still open (cut short
      // by an annotation it ran past), is written first.
      if (const auto open = outer_.find(r.thread_id); open != outer_.end()) {
        write(open->second);
        outer_.erase(open);
      }
      Outer& outer = outer_[r.thread_id];
      outer = Outer{};
      outer.range = r;
      outer.cursor = r.start_ns;
    } else if (std::any_of(stack.begin(), stack.end(), [](const Open& o) {
                 return o.kind == CpuRange::Kind::kCommunication;
               })) {
      ++stats_.under_communication;
    } else {
      ++stats_.nested_operators;
    }
  }
  if (!outermost && r.kind != CpuRange::Kind::kAnnotation) {
    // An operator or a call inside the thread's outermost operator covers its time.
    const auto it = outer_.find(r.thread_id);
    if (it != outer_.end() && r.start_ns < it->second.range.end_ns) note_inside(it->second, r);
  }
  if (r.kind == CpuRange::Kind::kCommunication) comm_ends_.insert(r.end_ns);
  stack.push_back({end, r.kind, covered || r.kind != CpuRange::Kind::kAnnotation});
}

void CpuComputeExtractor::note_inside(Outer& outer, const CpuRange& r) {
  outer.holds = true;
  if (r.start_ns - outer.cursor >= kOperatorWaitMinNs)
    outer.gaps.emplace_back(outer.cursor, r.start_ns);
  outer.cursor = std::max(outer.cursor, std::min(r.end_ns, outer.range.end_ns));
}

void CpuComputeExtractor::close_before(std::int64_t ns) {
  std::vector<std::uint64_t> done;
  std::int64_t needed = ns;  // the earliest time a wait may still start at
  for (const auto& [thread, outer] : outer_) {
    if (outer.range.end_ns <= ns) {
      done.push_back(thread);
    } else {
      needed = std::min(needed, outer.range.start_ns);
    }
  }
  std::sort(done.begin(), done.end(), [&](std::uint64_t a, std::uint64_t b) {
    return outer_.at(a).range.start_ns < outer_.at(b).range.start_ns;
  });
  for (const std::uint64_t thread : done) {
    write(outer_.at(thread));
    outer_.erase(thread);
  }
  // No operator open now, nor any later one, can hold an end before `needed`.
  comm_ends_.erase(comm_ends_.begin(), comm_ends_.lower_bound(needed));
}

void CpuComputeExtractor::finish() { close_before(std::numeric_limits<std::int64_t>::max()); }

void CpuComputeExtractor::write_piece(const CpuRange& r, std::int64_t start, std::int64_t end) {
  event_.Clear();
  auto* k = event_.mutable_kernel();
  k->set_name(r.name);
  k->set_device(kHostDevice);
  k->set_stream(static_cast<std::uint32_t>(r.thread_id));
  k->set_start_ns(start);
  k->set_end_ns(end);
  ++stats_.kernels;
  emit_(event_);
}

void CpuComputeExtractor::write(Outer& outer) {
  const CpuRange& r = outer.range;
  if (outer.holds && r.end_ns - outer.cursor >= kOperatorWaitMinNs) {
    outer.gaps.emplace_back(outer.cursor, r.end_ns);
  }
  std::int64_t start = r.start_ns;
  bool cut = false;
  if (outer.holds) {
    for (const auto& [from, to] : outer.gaps) {
      // The last end of a collective in (from, to].
      auto it = comm_ends_.upper_bound(to);
      if (it == comm_ends_.begin()) continue;
      const std::int64_t waited_until = *std::prev(it);
      if (waited_until <= from || to - waited_until > kOperatorWaitResumeNs) continue;
      if (from > start) write_piece(r, start, from);
      start = waited_until;
      ++stats_.waits;
      stats_.wait_ns += waited_until - from;
      cut = true;
    }
  }
  if (cut) ++stats_.operators_cut;
  if (r.end_ns > start || !cut) write_piece(r, start, r.end_ns);
}

}  // namespace ssgd::trace
