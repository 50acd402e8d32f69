#include "traces/import/pytorch/host_collectives.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <utility>

#include "traces/import/pytorch/kineto_mapping.h"

namespace ssgd::trace {
namespace {

// Send and recv are not queued: they pair among themselves.
int queue_of(const HostCollectiveName& n) {
  return n.op == v1::Collective::SEND || n.op == v1::Collective::RECV ? 1 : 0;
}

bool same_kind(const HostCollectiveName& a, const HostCollectiveName& b) {
  return a.barrier == b.barrier && a.op == b.op;
}

}  // namespace

void HostCollectiveMatcher::add(const CpuRange& r) {
  if (r.kind != CpuRange::Kind::kCommunication) return;
  const auto what = parse_host_collective_name(r.name);
  if (what) sides_.push_back({r, *what});
}

HostCollectiveStats HostCollectiveMatcher::finish(const HostCollectiveOptions& o,
                                                  const Emit& emit) {
  HostCollectiveStats s;
  // The kinds gloo ran: calls of other kinds are another backend's.
  std::set<std::pair<bool, int>> executed;
  for (const auto& side : sides_) {
    if (side.what.role == HostCollectiveName::Role::kExecution) {
      executed.insert({side.what.barrier, static_cast<int>(side.what.op)});
    }
  }
  std::vector<Pair> pairs;             // in launch order
  std::deque<std::size_t> waiting[2];  // calls without execution: queued work, send/recv
  for (const auto& side : sides_) {
    auto& queue = waiting[queue_of(side.what)];
    if (side.what.role == HostCollectiveName::Role::kCaller) {
      if (executed.count({side.what.barrier, static_cast<int>(side.what.op)}) == 0) {
        ++s.other_backend_calls;
        continue;
      }
      queue.push_back(pairs.size());
      pairs.push_back({&side, nullptr});
    } else if (!queue.empty()) {
      pairs[queue.front()].execution = &side;
      queue.pop_front();
    } else {
      pairs.push_back({nullptr, &side});
    }
  }
  // The iteration each collective was launched in (-1: none), for sizes.
  auto iteration_of = [&](std::int64_t t) -> std::int64_t {
    auto it = std::upper_bound(
        o.iterations.begin(), o.iterations.end(), t,
        [](std::int64_t v, const IterationSpan& span) { return v < span.start_ns; });
    if (it == o.iterations.begin()) return -1;
    --it;
    return t < it->end_ns ? it - o.iterations.begin() : -1;
  };
  struct Out {
    const Pair* pair;
    bool linked;
    std::int64_t launch_ns;
    std::int64_t iteration;  // -1: none
    std::int64_t size_bytes = 0;
  };
  std::vector<Out> out;
  for (const Pair& p : pairs) {
    const bool barrier = (p.call != nullptr && p.call->what.barrier) ||
                         (p.execution != nullptr && p.execution->what.barrier);
    bool linked = p.call != nullptr && p.execution != nullptr;
    if (linked && !same_kind(p.call->what, p.execution->what)) {
      ++s.kind_mismatches;
      linked = false;
    } else if (linked && barrier) {
      ++s.barriers;
      continue;
    }
    if (!p.execution) ++s.calls_without_execution;
    if (!p.call) ++s.executions_without_call;
    const std::int64_t launch =
        p.call != nullptr ? p.call->range.start_ns : p.execution->range.start_ns;
    out.push_back({&p, linked, launch, iteration_of(launch)});
  }
  // Sizes from the marks, per iteration, in launch order.
  if (!o.size_marks.empty()) {
    std::vector<CollectiveSizesMark> marks = o.size_marks;
    std::stable_sort(marks.begin(), marks.end(),
                     [](const CollectiveSizesMark& a, const CollectiveSizesMark& b) {
                       return a.start_ns < b.start_ns;
                     });
    std::map<std::int64_t, std::vector<Out*>> by_iteration;
    for (auto& c : out) {
      const bool collective = c.pair->execution != nullptr && !c.pair->execution->what.barrier;
      if (!collective) continue;
      if (c.iteration < 0) {
        ++s.outside_iterations;
      } else {
        by_iteration[c.iteration].push_back(&c);
      }
    }
    for (auto& [iteration, list] : by_iteration) {
      const std::int64_t first = list.front()->launch_ns;
      auto mark = std::upper_bound(
          marks.begin(), marks.end(), first,
          [](std::int64_t t, const CollectiveSizesMark& m) { return t < m.start_ns; });
      if (mark == marks.begin()) {
        ++s.iterations_without_size_mark;
        continue;
      }
      const auto& sizes = std::prev(mark)->sizes_bytes;
      if (list.size() != sizes.size()) {
        s.size_mismatches.push_back(fmt::format(
            "{}: {} collective(s), its ssgd/collective_bytes mark lists {}",
            o.iterations[static_cast<std::size_t>(iteration)].label, list.size(), sizes.size()));
        continue;
      }
      for (std::size_t k = 0; k < list.size(); ++k) {
        // Recorded shapes come first.
        if (list[k]->pair->execution->range.size_bytes > 0) continue;
        list[k]->size_bytes = sizes[k];
        ++s.sized;
      }
    }
  }
  const std::uint64_t communicator = kineto_communicator_id("world");
  std::uint64_t correlation = o.first_correlation_id;
  std::uint64_t sequence = 0;
  v1::Event event;
  for (const auto& c : out) {
    const std::uint64_t id = c.linked ? correlation++ : 0;
    if (c.linked) ++s.linked;
    if (const Side* call = c.pair->call; call != nullptr && !call->what.barrier) {
      event.Clear();
      auto* a = event.mutable_api_call();
      a->set_api(v1::ApiCall::FRAMEWORK);
      a->set_name(call->range.name);
      a->set_thread_id(call->range.thread_id);
      a->set_start_ns(call->range.start_ns);
      a->set_end_ns(call->range.end_ns);
      a->set_correlation_id(id);
      ++s.framework_calls;
      emit(event);
    }
    if (const Side* run = c.pair->execution; run != nullptr && !run->what.barrier) {
      event.Clear();
      auto* col = event.mutable_collective();
      col->set_op(run->what.op);
      if (run->what.op == v1::Collective::UNKNOWN) ++s.unknown_ops;
      if (run->range.size_bytes > 0) {
        col->set_size_bytes(run->range.size_bytes);
        col->set_count(run->range.count);
        col->set_datatype(run->range.datatype);
        ++s.sized_from_shapes;
      } else {
        col->set_size_bytes(c.size_bytes);
      }
      col->set_communicator_id(communicator);
      col->set_rank(o.rank);
      col->set_nranks(o.world_size);
      col->set_sequence_number(sequence++);
      col->set_start_ns(run->range.start_ns);
      col->set_end_ns(run->range.end_ns);
      col->set_device(-1);
      col->set_stream(static_cast<std::uint32_t>(run->range.thread_id));
      col->set_correlation_id(id);
      ++s.collectives;
      emit(event);
    }
  }
  sides_.clear();
  return s;
}

}  // namespace ssgd::trace
