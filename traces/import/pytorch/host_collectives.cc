#include "traces/import/pytorch/host_collectives.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <utility>

#include "traces/import/pytorch/kineto_mapping.h"
#include "traces/marker_names.h"

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
  // An op whose collectives run on a process group of their own
  // (ssgd/collective_ranks/<op> other than the world) has its own queue:
  // each process group's queue is FIFO, so each op's calls run in order.
  std::set<int> own_queue;
  for (const auto& m : o.group_marks) {
    if (m.ranks != o.world_size) own_queue.insert(static_cast<int>(m.op));
  }
  std::vector<Pair> pairs;  // in launch order
  // Calls without execution: queued work (0), send/recv (1), an op's own (by op + 2).
  std::map<int, std::deque<std::size_t>> waiting;
  for (const auto& side : sides_) {
    const int op = static_cast<int>(side.what.op);
    auto& queue =
        waiting[!side.what.barrier && own_queue.count(op) > 0 ? op + 2 : queue_of(side.what)];
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
  // Each mark list by start, and the latest one starting at or before t.
  auto by_start = [](auto marks) {
    std::stable_sort(marks.begin(), marks.end(),
                     [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
    return marks;
  };
  auto latest = [](const auto& marks, std::int64_t t) -> decltype(&marks.front()) {
    auto it = std::upper_bound(marks.begin(), marks.end(), t,
                               [](std::int64_t v, const auto& m) { return v < m.start_ns; });
    return it == marks.begin() ? nullptr : &*std::prev(it);
  };
  auto op_name = [](v1::Collective::Op op) { return std::string(metadata_mark_op_name(op)); };
  // The first launch of a collective of each iteration, where its marks
  // are looked up (`out` is in launch order).
  std::map<std::int64_t, std::int64_t> first_launch;
  for (const auto& c : out) {
    const bool collective = c.pair->execution != nullptr && !c.pair->execution->what.barrier;
    if (collective && c.iteration >= 0) first_launch.try_emplace(c.iteration, c.launch_ns);
  }
  auto op_of = [](const Out& c) {
    return c.pair->execution != nullptr ? c.pair->execution->what.op : c.pair->call->what.op;
  };
  // Sizes from the marks, per iteration, in launch order: each op with an
  // ssgd/collective_bytes/<op> mark from it, the others from
  // ssgd/collective_bytes.
  if (!o.size_marks.empty()) {
    std::vector<CollectiveSizesMark> plain;
    std::map<v1::Collective::Op, std::vector<CollectiveSizesMark>> per_op;
    for (const auto& m : o.size_marks) (m.op ? per_op[*m.op] : plain).push_back(m);
    plain = by_start(std::move(plain));
    for (auto& [op, marks] : per_op) marks = by_start(std::move(marks));
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
    auto assign = [&](const std::vector<Out*>& list, const std::vector<std::int64_t>& sizes) {
      for (std::size_t k = 0; k < list.size(); ++k) {
        // Recorded shapes come first.
        if (list[k]->pair->execution->range.size_bytes > 0) continue;
        list[k]->size_bytes = sizes[k];
        ++s.sized;
      }
    };
    for (auto& [iteration, list] : by_iteration) {
      const std::int64_t first = first_launch.at(iteration);
      const std::string& label = o.iterations[static_cast<std::size_t>(iteration)].label;
      std::map<v1::Collective::Op, const CollectiveSizesMark*> own;
      for (const auto& [op, marks] : per_op) {
        if (const auto* m = latest(marks, first)) own[op] = m;
      }
      std::map<v1::Collective::Op, std::vector<Out*>> of_op;
      std::vector<Out*> rest;
      for (Out* c : list) {
        const auto op = op_of(*c);
        (own.count(op) > 0 ? of_op[op] : rest).push_back(c);
      }
      for (const auto& [op, mark] : own) {
        const auto& mine = of_op[op];
        const std::string name = op_name(op);
        if (mine.size() != mark->sizes_bytes.size()) {
          s.size_mismatches.push_back(
              fmt::format("{}: {} {} collective(s), its ssgd/collective_bytes/{} mark lists {}",
                          label, mine.size(), name, name, mark->sizes_bytes.size()));
          continue;
        }
        const std::uint64_t before = s.sized;
        assign(mine, mark->sizes_bytes);
        if (s.sized > before) s.sized_per_op[name] += s.sized - before;
      }
      if (rest.empty()) continue;
      const CollectiveSizesMark* mark = latest(plain, first);
      if (mark == nullptr) {
        ++s.iterations_without_size_mark;
        continue;
      }
      if (rest.size() != mark->sizes_bytes.size()) {
        s.size_mismatches.push_back(fmt::format(
            "{}: {} collective(s){}, its ssgd/collective_bytes mark lists {}", label, rest.size(),
            own.empty() ? "" : " of the ops without an ssgd/collective_bytes/<op> mark",
            mark->sizes_bytes.size()));
        continue;
      }
      assign(rest, mark->sizes_bytes);
    }
  }
  // Groups from ssgd/collective_ranks/<op>: a communicator of its own, per
  // op and rank, where the op's group is not the world.
  std::map<v1::Collective::Op, std::vector<CollectiveGroupMark>> group_marks;
  for (const auto& m : o.group_marks) group_marks[m.op].push_back(m);
  for (auto& [op, marks] : group_marks) marks = by_start(std::move(marks));
  struct Group {
    std::uint64_t communicator = 0;
    std::int32_t rank = 0;
    std::int32_t nranks = 0;
  };
  const Group world{kineto_communicator_id("world"), o.rank, o.world_size};
  auto group_of = [&](const Out& c) -> Group {
    const auto marks = group_marks.find(op_of(c));
    if (marks == group_marks.end()) return world;
    const auto* m =
        latest(marks->second, c.iteration >= 0 ? first_launch.at(c.iteration) : c.launch_ns);
    if (m == nullptr || m->ranks == o.world_size) return world;
    const std::string name = op_name(m->op);
    ++s.grouped[fmt::format("{} over {} ranks", name, m->ranks)];
    if (!m->members.empty()) {
      // The members named: the group's own communicator, one for all of
      // them, and this rank's place in it (the importer checked it is there).
      const auto at = std::find(m->members.begin(), m->members.end(), o.rank);
      return {kineto_communicator_id(fmt::format("ranks/{}/{}", name, fmt::join(m->members, ","))),
              static_cast<std::int32_t>(at - m->members.begin()), m->ranks};
    }
    // A count alone: the group taken as consecutive ranks, and a
    // communicator per rank, since which ranks share it is not known.
    return {kineto_communicator_id(fmt::format("ranks/{}/{}/rank{}", name, m->ranks, o.rank)),
            o.rank % m->ranks, m->ranks};
  };
  std::map<std::uint64_t, std::uint64_t> sequence;  // per communicator, the next number
  std::uint64_t correlation = o.first_correlation_id;
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
      const Group g = group_of(c);
      col->set_communicator_id(g.communicator);
      col->set_rank(g.rank);
      col->set_nranks(g.nranks);
      col->set_sequence_number(sequence[g.communicator]++);
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
