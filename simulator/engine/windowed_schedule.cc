#include "simulator/engine/windowed_schedule.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <deque>
#include <future>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include <sys/mman.h>

#include "simulator/engine/deadlock_error.h"
#include "simulator/engine/list_scheduler_core.h"
#include "simulator/engine/scheduler_core.h"

namespace ssgd::sim {
namespace {

using dag::TaskId;

// Edges from one iteration's tasks, by the slot of their source, in the
// order they were added.
struct Successors {
  std::vector<std::uint32_t> offsets;  // per source task, T + 1
  std::vector<TaskId> targets;
};

// floor(x / d) for 32-bit x as ((x * M) >> 64) with M = floor((2^64 - 1) / d)
// + 1 (Lemire, Kaser and Kurz, "Faster remainder by direct computation", 2019).
class Divider {
 public:
  explicit Divider(std::size_t d) : d_(d), m_(d <= 1 ? 0 : ~std::uint64_t{0} / d + 1) {}
  [[nodiscard]] std::uint64_t operator()(std::uint32_t x) const {
    __extension__ using U128 = unsigned __int128;
    if (d_ <= 1) return x;  // M would be 2^64
    return static_cast<std::uint64_t>((static_cast<U128>(m_) * x) >> 64);
  }

 private:
  std::size_t d_;
  std::uint64_t m_;
};

// Reserves room for n elements and, where that takes new memory, asks for
// it to be backed by huge pages (2 MiB): an iteration's arrays are hundreds
// of megabytes at scale, and touching them first a 4 KiB page at a time
// cost about a second an iteration on a virtual machine. Only a hint; a
// kernel without transparent huge pages leaves the memory as it is.
template <class T>
void reserve_huge(std::vector<T>& v, std::size_t n) {
  if (v.capacity() >= n) return;
  v.reserve(n);
#ifdef MADV_HUGEPAGE
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(v.data());
  const std::uintptr_t end = begin + v.capacity() * sizeof(T);
  const std::uintptr_t from = (begin + kHuge - 1) & ~(kHuge - 1);
  const std::uintptr_t to = end & ~(kHuge - 1);
  if (to > from) madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
#endif
}

// Edges from an iteration's tasks that a later iteration added, by source
// (local) in the order they were added: few (a rank's step boundary), so
// searched, and only for tasks that reach forward.
using ForwardEdges = std::vector<std::pair<std::uint32_t, TaskId>>;

// An iteration's tasks, their waiting counts and their own edges are kept
// by slot (WindowedStore::slot), the rest by local id (id - first).
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

  // `list`: for a ListScheduler, which runs a rank's tasks one after
  // another (so they are kept in id order, a rank's together, whatever the
  // layout hint).
  WindowedStore(const IterationSource& source, TaskObserver& observer, bool list = false)
      : source_(source),
        observer_(observer),
        T_(source.tasks_per_iteration),
        per_iteration_(T_),
        P_(source.tasks_per_rank == 0 || list ? 0 : source.ranks),
        R_(list ? 0 : source.tasks_per_rank),
        PR_(P_ * R_),
        per_rank_(R_),
        last_tile_(P_ == 0 ? 0 : static_cast<std::uint32_t>((P_ - 1) / kTile)),
        last_width_(static_cast<std::uint32_t>(P_ - std::size_t{last_tile_} * kTile)) {
    if (source.iterations < 1 || source.reach < 1 || !source.build) {
      throw std::logic_error("run_windowed: a source needs iterations, a reach and a builder");
    }
    if (static_cast<double>(source.ranks) * static_cast<double>(source.tasks_per_rank) >
        static_cast<double>(T_)) {
      throw std::logic_error("run_windowed: the ranks' tasks outnumber an iteration's");
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
    return s.tasks[slot(t - s.first)];
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
    return s.waiting[slot(t - s.first)];
  }
  [[nodiscard]] std::uint64_t iteration_of(TaskId t) const { return per_iteration_(t); }
  void started(TaskId t, Time now, Ref by) {
    hold(by);
    const Segment& s = segment(t);
    observer_.started(t, s.tasks[slot(t - s.first)], now);
  }
  Ref ended(TaskId t, Time now, Ref by) {
    const dag::Task& task = this->task(t);
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
    const auto k0 = slot(local);
    const auto begin = s.own.offsets[k0];
    const auto end = s.own.offsets[k0 + 1];
    // What telling them reads, asked for at once rather than miss by miss.
    for (auto k = begin; k < end; ++k) {
      const auto at = slot(s.own.targets[k] - s.first);
      __builtin_prefetch(&s.waiting[at], 1);
      __builtin_prefetch(&s.tasks[at]);
    }
    for (auto k = begin; k < end; ++k) f(s.own.targets[k]);
    if (s.lists == 0 || !reaches_forward(s.tasks[k0])) return;
    for (std::size_t l = 0; l < s.lists; ++l) {
      const ForwardEdges& list = s.forward[l];
      auto it = std::lower_bound(list.begin(), list.end(), std::pair<std::uint32_t, TaskId>{local, 0});
      for (; it != list.end() && it->first == local; ++it) f(it->second);
    }
  }
  // What the end of `t`, released by `by`, reads first.
  void prefetch_end(TaskId t, Ref by) const {
    const Segment& s = segment(t);
    const auto k = slot(t - s.first);
    __builtin_prefetch(&s.tasks[k]);
    __builtin_prefetch(&s.own.offsets[k]);
    if (by != kNone) __builtin_prefetch(&nodes_[by]);
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
      build_ahead();
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
      for (std::uint32_t k = 0; k < s->tasks.size() && shown < 5; ++k) {
        const auto at = slot(k);
        if (s->waiting[at] == 0) continue;
        msg << "\n  " << dag::describe_task(s->tasks[at], source_.layer_names) << " waits for "
            << s->waiting[at] << " task(s)";
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
    out.build_foreground_seconds = foreground_seconds_;
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

  // Where a task of an iteration (by local id) is kept. With the source's
  // layout hint, the ranks' own tasks are kept in tiles of kTile ranks,
  // each tile position-major (a rank's k-th task beside its tile's other
  // ranks' k-th): the ranks of a tile run their k-th tasks at about the
  // same time, so those lie together; and a tile, built in rank order,
  // is small enough to be rearranged in the cache. The others in order.
  static constexpr std::uint32_t kTile = 128;
  [[nodiscard]] std::uint32_t slot(std::uint32_t local) const {
    if (local >= PR_) return local;
    const auto rank = static_cast<std::uint32_t>(per_rank_(local));
    const std::uint32_t position = local - rank * static_cast<std::uint32_t>(R_);
    const std::uint32_t tile = rank / kTile;
    const std::uint32_t width = tile == last_tile_ ? last_width_ : kTile;
    return tile * kTile * static_cast<std::uint32_t>(R_) + position * width + rank % kTile;
  }
  [[nodiscard]] Segment& segment(TaskId t) const {
    const auto i = static_cast<std::int64_t>(iteration_of(t));
    return *segments_[static_cast<std::size_t>(i - front_)];
  }

  [[nodiscard]] bool reaches_forward(const dag::Task& task) const {
    return !source_.reaches_forward || source_.reaches_forward(task);
  }

  // The ranks' tasks, built in id order, moved to their slots: the
  // permutation followed cycle by cycle, in place.
  void to_slots(std::vector<dag::Task>& tasks) {
    moved_.assign((T_ + 63) / 64, 0);
    const auto moved = [this](std::uint32_t k) { return (moved_[k / 64] >> (k % 64) & 1) != 0; };
    for (std::uint32_t k = 0; k < PR_; ++k) {
      if (moved(k) || slot(k) == k) continue;
      dag::Task carried = tasks[k];
      std::uint32_t at = k;
      do {
        at = slot(at);
        std::swap(carried, tasks[at]);
        moved_[at / 64] |= std::uint64_t{1} << (at % 64);
      } while (at != k);
    }
  }

  // The edges of the batch that leave `from`'s tasks, as its next list.
  void add_forward(Segment& from) {
    if (from.lists == from.forward.size()) from.forward.emplace_back();
    ForwardEdges& list = from.forward[from.lists];
    list.clear();
    const TaskId end = from.first + static_cast<TaskId>(T_);
    for (const auto& e : earlier_) {
      if (e.first < from.first || e.first >= end) continue;
      if (!reaches_forward(from.tasks[slot(e.first - from.first)])) {
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

  // The next iteration: the one the builder thread has built, or built now.
  void build_next() {
    const auto i = built_;
    std::unique_ptr<Segment> seg;
    Built b;
    if (pending_.valid()) {
      const auto t0 = std::chrono::steady_clock::now();
      b = pending_.get();  // rethrows what the build threw
      seg = std::move(building_);
      foreground_seconds_ +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } else {
      seg = take_segment();
      b = build_into(i, *seg);
      foreground_seconds_ += b.seconds;
    }
    build_seconds_ += b.seconds;
    edges_ += b.edges;
    install(i, std::move(seg));
    build_ahead();
  }

  // Builds the next iteration on a thread of its own while the run goes on,
  // into the memory of one released if there is one, while at most `reach`
  // iterations are held: so that no more are held than without it (reach
  // + 1, the one running and those it reaches; with prefetching, up to
  // reach + 2 are held anyway). The builder is called in the same order,
  // one iteration at a time, so it draws the same.
  void build_ahead() {
    if (pending_.valid() || built_ >= source_.iterations ||
        static_cast<std::int64_t>(segments_.size()) > source_.reach) {
      return;
    }
    building_ = take_segment();
    Segment* seg = building_.get();
    const std::int64_t i = built_;
    try {
      pending_ = std::async(std::launch::async, [this, i, seg] { return build_into(i, *seg); });
    } catch (const std::system_error&) {
      spare_.push_back(std::move(building_));  // no thread: built when needed
      return;
    }
    peak_ = std::max<std::int64_t>(peak_, static_cast<std::int64_t>(segments_.size()) + 1);
  }

  // A released iteration's memory, or new.
  std::unique_ptr<Segment> take_segment() {
    if (spare_.empty()) return std::make_unique<Segment>();
    std::unique_ptr<Segment> seg = std::move(spare_.back());
    spare_.pop_back();
    return seg;
  }

  struct Built {
    double seconds = 0;
    std::size_t edges = 0;
  };

  // Builds iteration i into `seg`: its tasks by slot, waiting counts and
  // own edges, and (in earlier_) its edges from earlier iterations. Reads
  // and writes nothing else the run uses, so that it may run on the builder
  // thread.
  Built build_into(std::int64_t i, Segment& seg) {
    const auto t0 = std::chrono::steady_clock::now();
    // Built into the segment's own memory, then moved to the tasks' slots.
    const TaskId first = static_cast<TaskId>(static_cast<std::size_t>(i) * T_);
    seg.first = first;
    batch_.first = first;
    std::swap(batch_.tasks, seg.tasks);
    batch_.tasks.clear();
    batch_.edges.clear();
    reserve_huge(batch_.tasks, T_);
    reserve_huge(batch_.edges, source_.edges_hint);
    source_.build(batch_);
    std::swap(batch_.tasks, seg.tasks);
    if (seg.tasks.size() != T_) {
      throw std::logic_error("run_windowed: iteration " + std::to_string(i) + " has " +
                             std::to_string(seg.tasks.size()) + " tasks, not " +
                             std::to_string(T_));
    }
    if (PR_ != 0) to_slots(seg.tasks);
    seg.lists = 0;
    reserve_huge(seg.waiting, T_);
    seg.waiting.assign(T_, 0);
    seg.remaining = T_;
    // Its own edges by the slot of their source, in the order added (a
    // stable counting sort), and the edges from earlier iterations.
    Successors& own = seg.own;
    reserve_huge(own.offsets, T_ + 1);
    own.offsets.assign(T_ + 1, 0);
    earlier_.clear();
    const TaskId end = first + static_cast<TaskId>(T_);
    for (const auto& e : batch_.edges) {
      if (e.second < first || e.second >= end || e.first >= end) {
        throw std::logic_error("run_windowed: an edge of iteration " + std::to_string(i) +
                               " does not end in it");
      }
      ++seg.waiting[slot(e.second - first)];
      if (e.first >= first) {
        ++own.offsets[slot(e.first - first) + 1];
      } else {
        earlier_.push_back(e);
      }
    }
    for (std::size_t v = 0; v < T_; ++v) own.offsets[v + 1] += own.offsets[v];
    reserve_huge(own.targets, own.offsets[T_]);
    own.targets.resize(own.offsets[T_]);
    fill_.assign(own.offsets.begin(), own.offsets.end() - 1);
    for (const auto& e : batch_.edges) {
      if (e.first >= first) own.targets[fill_[slot(e.first - first)]++] = e.second;
    }
    return {std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
            batch_.edges.size()};
  }

  // Iteration i, built, joins the window: its edges from earlier
  // iterations are checked against the window and filed with their sources.
  void install(std::int64_t i, std::unique_ptr<Segment> seg) {
    for (const auto& e : earlier_) {
      const auto from = static_cast<std::int64_t>(iteration_of(e.first));
      if (i - from > source_.reach || from < front_) {
        throw std::logic_error("run_windowed: an edge reaches from iteration " +
                               std::to_string(from) + " to " + std::to_string(i) +
                               ", beyond the source's reach");
      }
    }
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
  }

  const IterationSource& source_;
  TaskObserver& observer_;
  const std::size_t T_;
  const Divider per_iteration_;  // a task's iteration: its id / T
  const std::size_t P_, R_, PR_;  // the layout hint (0 when none)
  const Divider per_rank_;       // a rank's task's rank: its local id / R
  const std::uint32_t last_tile_, last_width_;  // the last tile, and its ranks
  std::deque<std::unique_ptr<Segment>> segments_;
  std::vector<std::unique_ptr<Segment>> spare_;  // released, for reuse
  std::int64_t front_ = 0;  // the iteration of segments_.front()
  std::int64_t built_ = 0;  // iterations built
  bool primed_ = false;
  dag::TaskBatch batch_;
  std::vector<std::uint32_t> fill_;
  std::vector<std::pair<TaskId, TaskId>> earlier_;  // the batch's edges from earlier iterations
  std::vector<std::uint64_t> moved_;                // to_slots(): the slots filled
  std::vector<Path> nodes_;  // reused through free_
  std::vector<Ref> free_;
  Ref best_ = kNone;
  Time best_end_;
  TaskId best_task_ = 0;
  std::size_t edges_ = 0;
  std::int64_t peak_ = 0;
  double build_seconds_ = 0;   // building iterations, on either thread
  double foreground_seconds_ = 0;  // building, or waiting for the builder thread
  // The iteration the builder thread builds (build_ahead), last: its
  // future is waited for before anything it uses is destroyed.
  std::unique_ptr<Segment> building_;
  std::future<Built> pending_;
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

std::optional<WindowedSchedule> run_windowed_list(Engine& engine, const IterationSource& source,
                                                  const ScheduleOptions& options,
                                                  TaskObserver& observer, std::string* refused) {
  WindowedStore store(source, observer, /*list=*/true);
  detail::ListScheduler<WindowedStore> scheduler(engine, store, options);
  if (!scheduler.run()) {
    if (refused != nullptr) *refused = scheduler.refused();
    return std::nullopt;
  }
  return store.take(scheduler.events(), {});
}

}  // namespace ssgd::sim
