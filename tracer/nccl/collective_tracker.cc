#include "tracer/nccl/collective_tracker.h"

#include <bit>
#include <utility>

#include "tracer/core/event_conversion.h"
#include "tracer/core/host_clock.h"
#include "tracer/core/process_session.h"
#include "tracer/nccl/nccl_profiler_abi.h"
#include "traces/collective_names.h"
#include "traces/datatype_names.h"

namespace ssgd::tracer {

namespace abi = nccl_abi;

namespace {

// What a slot holds. kFree is 0 so that a zeroed slot is free.
enum SlotKind : std::uint8_t {
  kFree = 0,
  kGroupApi,      // v5: carries the group's external id
  kTaskApi,       // v5: CollApi or P2pApi, carries its group's external id
  kKernelLaunch,  // v5: the id pushed around one kernel launch
  kTask,          // Coll or P2p: the collective being recorded
  kChannel        // KernelCh or ProxyOp: one channel of a task
};

// A task's `progress` word: bit 31 says the task's own stopEvent came; the
// low bits count its children that started and have not stopped.
constexpr std::uint32_t kOwnStopped = 1u << 31;
constexpr std::uint32_t kOpenMask = kOwnStopped - 1;

constexpr std::size_t kChannelWords = 4;  // channel ids are one byte

// The most bytes a trace's size may hold (kMaxSizeBytes, traces/event_rules.h).
constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 50;

// NCCL counts an all-gather by its send buffer and a reduce-scatter by its
// receive buffer, one rank's share (sendcount, recvcount); a trace counts
// both by their whole buffer (trace_events.proto, nccl-tests' convention).
// Elements and bytes of the whole buffer; both 0, unknown, where the bytes
// would pass the trace's bound (a record the writer would refuse, and drop).
std::pair<std::int64_t, std::int64_t> whole_buffer(CollectiveOp op, std::size_t count, int nranks,
                                                   std::uint64_t element_bytes) noexcept {
  std::uint64_t n = count;
  if ((op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter) && nranks > 1) {
    const auto r = static_cast<std::uint64_t>(nranks);
    if (n > kMaxBytes / r) return {0, 0};
    n *= r;
  }
  if (n > kMaxBytes || (element_bytes > 0 && n > kMaxBytes / element_bytes)) return {0, 0};
  return {static_cast<std::int64_t>(n), static_cast<std::int64_t>(n * element_bytes)};
}

}  // namespace

struct CollectiveTracker::Communicator {
  std::atomic<bool> used{false};
  std::uint64_t comm_id = 0;
  std::int32_t nranks = 0;
  std::int32_t rank = 0;
  bool channel_events = false;  // kernel-channel events were asked for
};

struct CollectiveTracker::Slot {
  std::atomic<std::uint8_t> kind{kFree};
  // The kind it was last allocated as, kept after release: NCCL names
  // stopped API events as parents, and FIFO reuse keeps them readable.
  std::atomic<std::uint8_t> last_kind{kFree};
  std::atomic<std::uint32_t> generation{0};
  std::uint32_t index = 0;
  Communicator* comm = nullptr;
  std::atomic<std::uint64_t> external_id{0};
  bool pushed = false;  // kKernelLaunch: an id is on CUPTI's stack
  bool ended = false;   // kChannel: recordEventState(KernelChStop) came
  // kChannel: the task it belongs to, as it was when the channel started.
  Slot* parent = nullptr;
  std::uint32_t parent_generation = 0;
  // kTask
  CollectiveActivity activity;
  std::uint8_t expected_channels = 0;
  std::atomic<std::uint32_t> progress{0};
  std::atomic<std::int64_t> end_ns{0};
  std::array<std::atomic<std::uint64_t>, kChannelWords> channels{};
  std::atomic<bool> finished{false};
};

CollectiveTracker::CollectiveTracker(PluginHooks hooks, std::size_t slot_count)
    : hooks_(hooks),
      slot_count_(slot_count == 0 ? 1 : slot_count),
      slots_(std::make_unique<Slot[]>(slot_count_)),
      free_(slot_count_),
      communicators_(std::make_unique<Communicator[]>(kMaxCommunicators)) {
  for (std::size_t i = 0; i < slot_count_; ++i) {
    slots_[i].index = static_cast<std::uint32_t>(i);
    free_.try_push(static_cast<std::uint32_t>(i));
  }
}

CollectiveTracker::~CollectiveTracker() = default;

std::int64_t CollectiveTracker::now() const noexcept {
  return hooks_.now_ns != nullptr ? hooks_.now_ns()
                                  : read_clock_ns(trace::v1::ClockDomain::MONOTONIC_RAW);
}

CollectiveTracker::Slot* CollectiveTracker::any_slot_of(void* handle) const noexcept {
  // Compared as integers: a pointer NCCL hands back may be anything.
  const auto p = reinterpret_cast<std::uintptr_t>(handle);
  const auto base = reinterpret_cast<std::uintptr_t>(slots_.get());
  if (p < base || p >= base + slot_count_ * sizeof(Slot)) return nullptr;
  if ((p - base) % sizeof(Slot) != 0) return nullptr;
  return &slots_[(p - base) / sizeof(Slot)];
}

CollectiveTracker::Slot* CollectiveTracker::slot_of(void* handle) const noexcept {
  Slot* slot = any_slot_of(handle);
  if (slot == nullptr || slot->kind.load(std::memory_order_acquire) == kFree) return nullptr;
  return slot;
}

std::uint64_t CollectiveTracker::external_id_of(void* parent, std::uint8_t kind) const noexcept {
  const Slot* slot = any_slot_of(parent);
  if (slot == nullptr || slot->last_kind.load(std::memory_order_acquire) != kind) return 0;
  return slot->external_id.load(std::memory_order_acquire);
}

CollectiveTracker::Communicator* CollectiveTracker::communicator_of(void* context) const noexcept {
  const auto p = reinterpret_cast<std::uintptr_t>(context);
  const auto base = reinterpret_cast<std::uintptr_t>(communicators_.get());
  if (p < base || p >= base + kMaxCommunicators * sizeof(Communicator)) return nullptr;
  if ((p - base) % sizeof(Communicator) != 0) return nullptr;
  Communicator& c = communicators_[(p - base) / sizeof(Communicator)];
  return c.used.load(std::memory_order_acquire) ? &c : nullptr;
}

void* CollectiveTracker::open_communicator(std::uint64_t comm_id, int nranks, int rank,
                                           std::uint64_t activation_mask) noexcept {
  for (std::size_t i = 0; i < kMaxCommunicators; ++i) {
    Communicator& c = communicators_[i];
    bool expected = false;
    if (!c.used.load(std::memory_order_relaxed) &&
        c.used.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
      c.comm_id = comm_id;
      c.nranks = nranks;
      c.rank = rank;
      c.channel_events = (activation_mask & abi::kProfileKernelCh) != 0;
      return &c;
    }
  }
  communicators_dropped_.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

void CollectiveTracker::close_communicator(void* context) noexcept {
  Communicator* c = communicator_of(context);
  if (c == nullptr) return;
  flush(c);
  c->used.store(false, std::memory_order_release);
}

CollectiveTracker::Slot* CollectiveTracker::allocate(std::uint8_t kind, Communicator* comm) noexcept {
  std::uint32_t index = 0;
  if (!free_.try_pop(index)) {
    events_dropped_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  Slot& s = slots_[index];
  s.generation.fetch_add(1, std::memory_order_relaxed);
  s.comm = comm;
  s.external_id.store(0, std::memory_order_relaxed);
  s.last_kind.store(kind, std::memory_order_relaxed);
  s.pushed = false;
  s.ended = false;
  s.parent = nullptr;
  s.parent_generation = 0;
  s.activity = CollectiveActivity{};
  s.expected_channels = 0;
  s.progress.store(0, std::memory_order_relaxed);
  s.end_ns.store(0, std::memory_order_relaxed);
  for (auto& w : s.channels) w.store(0, std::memory_order_relaxed);
  s.finished.store(false, std::memory_order_relaxed);
  s.kind.store(kind, std::memory_order_release);
  return &s;
}

void CollectiveTracker::release(Slot& slot) noexcept {
  slot.kind.store(kFree, std::memory_order_release);
  free_.try_push(slot.index);  // never fails: the queue holds every slot
}

void* CollectiveTracker::start(void* context, const NcclEventStart& event) noexcept {
  Communicator* comm = communicator_of(context);
  if (comm == nullptr) {
    ignored_events_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  switch (event.type) {
    case abi::kProfileGroupApi:
      return start_api(*comm, event, kGroupApi);
    case abi::kProfileCollApi:
    case abi::kProfileP2pApi:
      return start_api(*comm, event, kTaskApi);
    case abi::kProfileKernelLaunch:
      return start_kernel_launch(*comm, event);
    case abi::kProfileColl:
    case abi::kProfileP2p:
      return start_task(*comm, event, kTask);
    case abi::kProfileKernelCh:
    case abi::kProfileProxyOp:
      return start_channel(*comm, event);
    case abi::kProfileGroup:
    case abi::kProfileProxyStep:
    case abi::kProfileProxyCtrl:
    case abi::kProfileNetPlugin:
      return nullptr;  // not followed; NCCL accepts a null handle
    default:
      ignored_events_.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
  }
}

void* CollectiveTracker::start_api(Communicator& comm, const NcclEventStart& event,
                                   std::uint8_t kind) noexcept {
  Slot* s = allocate(kind, &comm);
  if (s == nullptr) return nullptr;
  // One id per group: every kernel the group launches pushes it, and every
  // collective of the group carries it.
  s->external_id.store(kind == kGroupApi
                           ? next_external_id_.fetch_add(1, std::memory_order_relaxed)
                           : external_id_of(event.parent, kGroupApi),
                       std::memory_order_release);
  return s;
}

void* CollectiveTracker::start_kernel_launch(Communicator& comm,
                                             const NcclEventStart& event) noexcept {
  Slot* s = allocate(kKernelLaunch, &comm);
  if (s == nullptr) return nullptr;
  const std::uint64_t id = external_id_of(event.parent, kGroupApi);
  s->external_id.store(id, std::memory_order_relaxed);
  if (id != 0 && hooks_.correlation.usable() &&
      hooks_.correlation.push(kNcclExternalCorrelationKind, id) == 0) {
    s->pushed = true;
    ids_pushed_.fetch_add(1, std::memory_order_relaxed);
  }
  return s;
}

void* CollectiveTracker::start_task(Communicator& comm, const NcclEventStart& event,
                                    std::uint8_t kind) noexcept {
  Slot* s = allocate(kind, &comm);
  if (s == nullptr) {
    collectives_dropped_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  CollectiveActivity& a = s->activity;
  a.op = collective_op_from_proto(
      trace::collective_op_from_nccl(event.func != nullptr ? event.func : ""));
  a.communicator_id = comm.comm_id;
  a.rank = event.rank;
  a.nranks = comm.nranks;
  a.datatype = trace::datatype_from_nccl(event.datatype != nullptr ? event.datatype : "");
  const auto [count, bytes] =
      whole_buffer(a.op, event.count, comm.nranks,
                   static_cast<std::uint64_t>(trace::datatype_size_bytes(a.datatype.view())));
  a.count = count;
  a.size_bytes = bytes;
  a.sequence_number = event.seq_number;
  if (event.algo != nullptr) a.algorithm = event.algo;
  if (event.proto != nullptr) a.protocol = event.proto;
  a.channels = event.n_channels;
  a.peer = event.root_or_peer;
  a.start_ns = now();
  a.correlation_id = external_id_of(event.parent, kTaskApi);
  s->expected_channels = comm.channel_events ? event.n_channels : 0;
  return s;
}

void* CollectiveTracker::start_channel(Communicator& comm, const NcclEventStart& event) noexcept {
  Slot* task = slot_of(event.parent);
  if (task == nullptr || task->kind.load(std::memory_order_acquire) != kTask) {
    orphan_children_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  const std::uint32_t generation = task->generation.load(std::memory_order_acquire);
  task->progress.fetch_add(1, std::memory_order_acq_rel);
  // The task may have finished (and its slot been taken again) between the
  // look-up and the count: then this channel is not its own.
  if (task->finished.load(std::memory_order_acquire) ||
      task->generation.load(std::memory_order_acquire) != generation) {
    task->progress.fetch_sub(1, std::memory_order_acq_rel);
    orphan_children_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  task->channels[event.channel_id / 64].fetch_or(std::uint64_t{1} << (event.channel_id % 64),
                                                 std::memory_order_acq_rel);
  Slot* child = allocate(kChannel, &comm);
  if (child == nullptr) {
    task->progress.fetch_sub(1, std::memory_order_acq_rel);
    try_finish(*task);
    return nullptr;
  }
  child->parent = task;
  child->parent_generation = generation;
  return child;
}

void CollectiveTracker::kernel_channel_stopped(void* handle) noexcept {
  Slot* s = slot_of(handle);
  if (s == nullptr || s->kind.load(std::memory_order_acquire) != kChannel) {
    ignored_events_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  s->ended = true;
  Slot* task = s->parent;
  if (task->generation.load(std::memory_order_acquire) != s->parent_generation) return;
  raise_end(*task, now());
}

void CollectiveTracker::stop(void* handle) noexcept {
  Slot* s = slot_of(handle);
  if (s == nullptr) {
    ignored_events_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  switch (s->kind.load(std::memory_order_acquire)) {
    case kKernelLaunch:
      if (s->pushed) {
        std::uint64_t last = 0;
        hooks_.correlation.pop(kNcclExternalCorrelationKind, &last);
      }
      release(*s);
      return;
    case kGroupApi:
    case kTaskApi:
      release(*s);
      return;
    case kChannel:
      stop_channel(*s);
      return;
    case kTask: {
      raise_end(*s, now());
      if ((s->progress.fetch_or(kOwnStopped, std::memory_order_acq_rel) & kOwnStopped) != 0) {
        ignored_events_.fetch_add(1, std::memory_order_relaxed);  // a second stop
        return;
      }
      try_finish(*s);
      return;
    }
    default:
      ignored_events_.fetch_add(1, std::memory_order_relaxed);
  }
}

void CollectiveTracker::stop_channel(Slot& child) noexcept {
  Slot* task = child.parent;
  const std::uint32_t generation = child.parent_generation;
  const bool ended = child.ended;
  release(child);
  if (task->generation.load(std::memory_order_acquire) != generation ||
      task->kind.load(std::memory_order_acquire) != kTask) {
    orphan_children_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // A channel that stopped without recordEventState(KernelChStop) marks
  // the task's end when it stops.
  if (!ended) raise_end(*task, now());
  task->progress.fetch_sub(1, std::memory_order_acq_rel);
  try_finish(*task);
}

void CollectiveTracker::raise_end(Slot& task, std::int64_t t) noexcept {
  std::int64_t seen = task.end_ns.load(std::memory_order_relaxed);
  while (seen < t && !task.end_ns.compare_exchange_weak(seen, t, std::memory_order_relaxed)) {
  }
}

void CollectiveTracker::try_finish(Slot& task) noexcept {
  const std::uint32_t progress = task.progress.load(std::memory_order_acquire);
  if ((progress & kOwnStopped) == 0 || (progress & kOpenMask) != 0) return;
  int seen = 0;
  for (const auto& w : task.channels) seen += std::popcount(w.load(std::memory_order_acquire));
  if (seen < task.expected_channels) return;
  finish(task, true);
}

void CollectiveTracker::finish(Slot& task, bool complete) noexcept {
  bool expected = false;
  if (!task.finished.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) return;
  CollectiveActivity a = task.activity;
  int seen = 0;
  for (const auto& w : task.channels) seen += std::popcount(w.load(std::memory_order_acquire));
  if (seen > 0) a.channels = seen;
  a.end_ns = task.end_ns.load(std::memory_order_acquire);
  if (a.end_ns < a.start_ns) a.end_ns = a.start_ns;
  if (!complete) incomplete_flushed_.fetch_add(1, std::memory_order_relaxed);
  ActivityRecord record{a, {}};
  const AppendStatus status = hooks_.append != nullptr ? hooks_.append(record)
                                                       : ProcessSession::get().append(record);
  (status == AppendStatus::kStored ? records_written_ : records_dropped_)
      .fetch_add(1, std::memory_order_relaxed);
  release(task);
}

void CollectiveTracker::flush(const Communicator* only) noexcept {
  for (std::size_t i = 0; i < slot_count_; ++i) {
    Slot& s = slots_[i];
    if (s.kind.load(std::memory_order_acquire) != kTask) continue;
    if (only != nullptr && s.comm != only) continue;
    finish(s, false);
  }
}

void CollectiveTracker::flush_all() noexcept { flush(nullptr); }

TrackerCounters CollectiveTracker::counters() const noexcept {
  TrackerCounters c;
  c.events_dropped = events_dropped_.load(std::memory_order_relaxed);
  c.collectives_dropped = collectives_dropped_.load(std::memory_order_relaxed);
  c.records_dropped = records_dropped_.load(std::memory_order_relaxed);
  c.records_written = records_written_.load(std::memory_order_relaxed);
  c.orphan_children = orphan_children_.load(std::memory_order_relaxed);
  c.ignored_events = ignored_events_.load(std::memory_order_relaxed);
  c.communicators_dropped = communicators_dropped_.load(std::memory_order_relaxed);
  c.incomplete_flushed = incomplete_flushed_.load(std::memory_order_relaxed);
  c.ids_pushed = ids_pushed_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace ssgd::tracer
