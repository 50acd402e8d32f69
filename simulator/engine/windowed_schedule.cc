#include "simulator/engine/windowed_schedule.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <deque>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "simulator/engine/deadlock_error.h"
#include "simulator/engine/scheduler_core.h"

namespace ssgd::sim {
namespace {

using dag::TaskId;

// Edges from one iteration's tasks, by source in the order they were added.
struct Successors {
  std::vector<std::uint32_t> offsets;  // per source task, T + 1
  std::vector<TaskId> targets;
};

// A stable counting sort, by source, of the edges from tasks [first, first +
// tasks), into `s` (whose memory is reused).
void by_source(const std::vector<std::pair<TaskId, TaskId>>& edges, TaskId first,
                      std::size_t tasks, Successors& s, std::vector<std::uint32_t>& fill) {
  const auto from = [first, tasks](TaskId t) { return t >= first && t - first < tasks; };
  s.offsets.assign(tasks + 1, 0);
  for (const auto& e : edges) {
    if (from(e.first)) ++s.offsets[e.first - first + 1];
  }
  for (std::size_t v = 0; v < tasks; ++v) s.offsets[v + 1] += s.offsets[v];
  s.targets.resize(s.offsets[tasks]);
  fill.assign(s.offsets.begin(), s.offsets.end() - 1);
  for (const auto& e : edges) {
    if (from(e.first)) s.targets[fill[e.first - first]++] = e.second;
  }
}

// Edges from an iteration's tasks that a later iteration added, by source
// (local) in the order they were added: few (a rank's step boundary), so
// searched, and only for tasks that reach forward.
using ForwardEdges = std::vector<std::pair<std::uint32_t, TaskId>>;

struct Segment {
  TaskId first = 0;
  std::vector<dag::Task> tasks;
  std::vector<std::uint32_t> waiting;
  Successors own;                 // its own iteration's edges
  // Then each later iteration's (the first `lists` of them; the rest is
  // memory kept for reuse).
  std::vector<ForwardEdges> forward;
  std::size_t lists = 0;
  std::size_t remaining = 0;  // tasks not yet ended
};

class WindowedStore {
 public:
  using Ref = std::uint32_t;
  static constexpr Ref kNone = std::numeric_limits<Ref>::max();

  WindowedStore(const IterationSource& source, TaskObserver& observer)
      : source_(source),
        observer_(observer),
        T_(source.tasks_per_iteration),
        // floor(t / T) for 32-bit t as ((t x M) >> 64), M = floor((2^64 - 1) / T) + 1
        // (Lemire, Kaser and Kurz, "Faster remainder by direct computation", 2019).
        inverse_T_(T_ == 0 ? 0 : ~std::uint64_t{0} / T_ + 1) {
    if (source.iterations < 1 || source.reach < 1 || !source.build) {
      throw std::logic_error("run_windowed: a source needs iterations, a reach and a builder");
    }
    if (static_cast<double>(T_) * static_cast<double>(source.iterations) >=
        static_cast<double>(dag::kNoTask)) {
      throw std::logic_error("run_windowed: too many tasks for 32-bit task ids");
    }
  }

  [[nodiscard]] std::size_t task_count() const {
    return T_ * static_cast<std::size_t>(source_.iterations);
  }
  [[nodiscard]] const dag::Task& task(TaskId t) const {
    const Segment& s = segment(t);
    return s.tasks[t - s.first];
  }
  [[nodiscard]] const dag::Resource& resource(dag::ResourceId r) const {
    return source_.resources[r];
  }
  [[nodiscard]] std::size_t resource_count() const { return source_.resources.size(); }

  template <class F>
  void for_each_initial(F f) {
    if (T_ == 0) return;
    // The iterations that may hold tasks without predecessors.
    build_through(std::min(source_.iterations, source_.reach) - 1);
    for (TaskId t = 0; t < static_cast<std::size_t>(built_) * T_; ++t) {
      if (waiting(t) == 0) f(t);
    }
    primed_ = true;
  }

  std::uint32_t& waiting(TaskId t) {
    Segment& s = segment(t);
    return s.waiting[t - s.first];
  }
  void started(TaskId t, Time now, Ref by) {
    hold(by);
    const Segment& s = segment(t);
    observer_.started(t, s.tasks[t - s.first], now);
  }
  Ref ended(TaskId t, Time now, Ref by) {
    Segment& s = segment(t);
    const auto local = t - s.first;
    const dag::Task& task = s.tasks[local];
    // The path to it: its releaser's, and itself.
    Path path = by == kNone ? Path{} : nodes_[by];
    path.refs = 1;
    path.time_by_kind[static_cast<int>(task.kind)] += task.duration;
    ++path.tasks;
    const Ref node = allocate(path);
    drop(by);
    // The critical path ends at the task that ends last (the first by id).
    if (best_ == kNone || now > best_end_ || (now == best_end_ && t < best_task_)) {
      hold(node);
      drop(best_);
      best_ = node;
      best_end_ = now;
      best_task_ = t;
    }
    observer_.ended(t, task, now);
    // Its successors in later iterations exist before it tells them.
    if (reaches_forward(task)) {
      const auto i = static_cast<std::int64_t>(iteration_of(t));
      build_through(std::min(source_.iterations - 1, i + source_.reach));
    }
    return node;
  }
  template <class F>
  void for_each_successor(TaskId t, F f) {
    const Segment& s = segment(t);
    const auto local = t - s.first;
    for (auto k = s.own.offsets[local]; k < s.own.offsets[local + 1]; ++k) f(s.own.targets[k]);
    if (s.lists == 0 || !reaches_forward(s.tasks[local])) return;
    for (std::size_t l = 0; l < s.lists; ++l) {
      const ForwardEdges& list = s.forward[l];
      auto it = std::lower_bound(list.begin(), list.end(), std::pair<std::uint32_t, TaskId>{local, 0});
      for (; it != list.end() && it->first == local; ++it) f(it->second);
    }
  }
  void done_with(TaskId t) {
    --segment(t).remaining;
    // An iteration whose tasks have all ended is released: nothing can
    // still wait for them (later iterations were built before they ended).
    // Its memory is kept for the next iteration: iterations are alike, and
    // memory given back and asked for again costs page faults.
    while (!segments_.empty() && segments_.front()->remaining == 0) {
      spare_.push_back(std::move(segments_.front()));
      segments_.pop_front();
      ++front_;
    }
  }
  void hold(Ref r) {
    if (r != kNone) ++nodes_[r].refs;
  }
  void drop(Ref r) {
    if (r != kNone && --nodes_[r].refs == 0) free_.push_back(r);
  }

  [[noreturn]] void report_deadlock(std::size_t done, Time now) const {
    std::ostringstream msg;
    msg << "deadlock at t=" << now.ns() << " ns: " << (task_count() - done) << " of "
        << task_count() << " tasks can never start. First of them:";
    int shown = 0;
    for (const auto& s : segments_) {
      for (std::size_t k = 0; k < s->tasks.size() && shown < 5; ++k) {
        if (s->waiting[k] == 0) continue;
        msg << "\n  " << dag::describe_task(s->tasks[k], source_.layer_names) << " waits for "
            << s->waiting[k] << " task(s)";
        ++shown;
      }
    }
    throw DeadlockError(msg.str());
  }

  WindowedSchedule take(std::uint64_t events, std::vector<std::vector<TaskId>> batches) {
    WindowedSchedule out;
    out.events = events;
    out.batches = std::move(batches);
    out.tasks = task_count();
    out.edges = edges_;
    out.peak_iterations_held = peak_;
    out.build_seconds = build_seconds_;
    out.makespan = best_ == kNone ? Time::zero() : best_end_;
    dag::CriticalPath& path = out.critical_path;
    if (best_ != kNone) {
      path.time_by_kind = nodes_[best_].time_by_kind;
      path.task_count = nodes_[best_].tasks;
    }
    path.length = out.makespan - Time::zero();
    Duration busy;
    for (auto d : path.time_by_kind) busy += d;
    path.gaps = path.length - busy;
    drop(best_);
    best_ = kNone;
    return out;
  }

 private:
  // The path that ends with an ended task: its time by task kind and its
  // length in tasks, held by what may still extend it (a running task it
  // released, a ready entry, a prioritized resource it freed, the latest
  // end). The critical path, once the run ends, is the latest end's.
  struct Path {
    std::array<Duration, dag::kTaskKindCount> time_by_kind{};
    std::uint32_t tasks = 0;
    std::uint32_t refs = 0;
  };

  Ref allocate(const Path& node) {
    if (!free_.empty()) {
      const Ref r = free_.back();
      free_.pop_back();
      nodes_[r] = node;
      return r;
    }
    if (nodes_.size() >= kNone) throw std::length_error("run_windowed: too many paths held");
    nodes_.push_back(node);
    return static_cast<Ref>(nodes_.size() - 1);
  }

  [[nodiscard]] std::uint64_t iteration_of(TaskId t) const {
    __extension__ using U128 = unsigned __int128;
    if (T_ == 1) return t;  // M would be 2^64
    return static_cast<std::uint64_t>((static_cast<U128>(inverse_T_) * t) >> 64);
  }
  [[nodiscard]] Segment& segment(TaskId t) const {
    const auto i = static_cast<std::int64_t>(iteration_of(t));
    return *segments_[static_cast<std::size_t>(i - front_)];
  }

  [[nodiscard]] bool reaches_forward(const dag::Task& task) const {
    return !source_.reaches_forward || source_.reaches_forward(task);
  }

  // The edges of the batch that leave `from`'s tasks, as its next list.
  void add_forward(Segment& from) {
    if (from.lists == from.forward.size()) from.forward.emplace_back();
    ForwardEdges& list = from.forward[from.lists];
    list.clear();
    const TaskId end = from.first + static_cast<TaskId>(T_);
    for (const auto& e : batch_.edges) {
      if (e.first < from.first || e.first >= end) continue;
      if (!reaches_forward(from.tasks[e.first - from.first])) {
        throw std::logic_error("run_windowed: an edge leaves iteration " +
                               std::to_string(iteration_of(e.first)) +
                               " from a task the source says does not reach forward");
      }
      list.emplace_back(e.first - from.first, e.second);
    }
    if (list.empty()) return;
    std::stable_sort(list.begin(), list.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    ++from.lists;
  }

  void build_through(std::int64_t iteration) {
    while (built_ <= iteration) build_next();
  }

  void build_next() {
    const auto t0 = std::chrono::steady_clock::now();
    const auto i = built_;
    std::unique_ptr<Segment> seg;
    if (spare_.empty()) {
      seg = std::make_unique<Segment>();
    } else {
      seg = std::move(spare_.back());
      spare_.pop_back();
    }
    // Built into the segment's own memory.
    seg->first = static_cast<TaskId>(static_cast<std::size_t>(i) * T_);
    batch_.first = seg->first;
    std::swap(batch_.tasks, seg->tasks);
    batch_.tasks.clear();
    batch_.edges.clear();
    batch_.tasks.reserve(T_);
    source_.build(batch_);
    std::swap(batch_.tasks, seg->tasks);
    if (seg->tasks.size() != T_) {
      throw std::logic_error("run_windowed: iteration " + std::to_string(i) + " has " +
                             std::to_string(seg->tasks.size()) + " tasks, not " +
                             std::to_string(T_));
    }
    seg->lists = 0;
    seg->waiting.assign(T_, 0);
    seg->remaining = T_;
    const TaskId end = seg->first + static_cast<TaskId>(T_);
    for (const auto& e : batch_.edges) {
      if (e.second < seg->first || e.second >= end || e.first >= end) {
        throw std::logic_error("run_windowed: an edge of iteration " + std::to_string(i) +
                               " does not end in it");
      }
      ++seg->waiting[e.second - seg->first];
      const auto from = static_cast<std::int64_t>(e.first / T_);
      if (i - from > source_.reach || from < front_) {
        throw std::logic_error("run_windowed: an edge reaches from iteration " +
                               std::to_string(from) + " to " + std::to_string(i) +
                               ", beyond the source's reach");
      }
    }
    edges_ += batch_.edges.size();
    // Its own edges, and for each earlier iteration the edges from it.
    by_source(batch_.edges, seg->first, T_, seg->own, fill_);
    for (std::int64_t d = 1; d <= source_.reach && i - d >= front_; ++d) {
      add_forward(*segments_[static_cast<std::size_t>(i - d - front_)]);
    }
    if (primed_) {
      // A task without predecessors would have been ready at time zero.
      for (std::size_t k = 0; k < T_; ++k) {
        if (seg->waiting[k] == 0) {
          throw std::logic_error("run_windowed: iteration " + std::to_string(i) +
                                 " holds a task without predecessors, built too late");
        }
      }
    }
    segments_.push_back(std::move(seg));
    ++built_;
    peak_ = std::max<std::int64_t>(peak_, static_cast<std::int64_t>(segments_.size()));
    build_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  const IterationSource& source_;
  TaskObserver& observer_;
  const std::size_t T_;
  const std::uint64_t inverse_T_;
  std::deque<std::unique_ptr<Segment>> segments_;
  std::vector<std::unique_ptr<Segment>> spare_;  // released, for reuse
  std::int64_t front_ = 0;  // the iteration of segments_.front()
  std::int64_t built_ = 0;  // iterations built
  bool primed_ = false;
  dag::TaskBatch batch_;
  std::vector<std::uint32_t> fill_;
  std::vector<Path> nodes_;  // reused through free_
  std::vector<Ref> free_;
  Ref best_ = kNone;
  Time best_end_;
  TaskId best_task_ = 0;
  std::size_t edges_ = 0;
  std::int64_t peak_ = 0;
  double build_seconds_ = 0;
};

}  // namespace

WindowedSchedule run_windowed(Engine& engine, const IterationSource& source,
                              const ScheduleOptions& options, TaskObserver& observer) {
  WindowedStore store(source, observer);
  detail::Scheduler<WindowedStore> scheduler(engine, store, options);
  scheduler.prime();
  engine.run();
  auto batches = scheduler.finish();
  return store.take(engine.events_processed(), std::move(batches));
}

}  // namespace ssgd::sim
