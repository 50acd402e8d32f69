#pragma once
// The version-neutral heart of the NCCL profiler plugin: it turns NCCL's
// profiler events (started, updated and stopped by NCCL's threads, in the
// order tracer/README.md describes) into one CollectiveActivity per
// collective or point-to-point operation, and pushes an external
// correlation id around each NCCL kernel launch so that the collectives can
// be joined to their kernels (tracer/README.md, "How collectives join
// kernels").
//
// Every handle it gives NCCL is a slot of one fixed array allocated by the
// constructor; free slots wait in a FIFO, so a slot released by stopEvent is
// reused only after every other free slot. That matters because NCCL hands
// back parent handles after their own stop: a Coll event names its CollApi
// parent after ncclAllReduce has returned, and a kernel channel names its
// Coll after the Coll stopped. With the pool full an event is dropped (null
// handle, which NCCL accepts) and counted; nothing here allocates after
// construction, takes a lock, throws or blocks.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "tracer/core/activity_record.h"
#include "tracer/core/buffer_queue.h"
#include "tracer/core/record_buffer_pool.h"
#include "tracer/nccl/external_correlation.h"

namespace ssgd::tracer {

// Where the tracker's records and times come from.
struct PluginHooks {
  // Takes each finished collective; null: ProcessSession::get().append.
  AppendStatus (*append)(const ActivityRecord& record) noexcept = nullptr;
  // The event clock, ns; null: CLOCK_MONOTONIC_RAW, the trace sink's default clock.
  std::int64_t (*now_ns)() noexcept = nullptr;
  // Push/pop of external correlation ids; unusable: nothing is pushed.
  ExternalCorrelationApi correlation;
};

// One profiler event as NCCL described it, whatever the interface version.
// Fields a type does not have stay at their defaults.
struct NcclEventStart {
  std::uint64_t type = 0;  // one nccl_abi::EventType
  void* parent = nullptr;  // the descriptor's parentObj
  int rank = 0;
  // Coll, P2p
  std::uint64_t seq_number = 0;
  const char* func = nullptr;
  std::size_t count = 0;
  int root_or_peer = 0;
  const char* datatype = nullptr;
  std::uint8_t n_channels = 0;
  const char* algo = nullptr;
  const char* proto = nullptr;
  // KernelCh, ProxyOp
  std::uint8_t channel_id = 0;
};

// What the tracker lost or set aside, since it was constructed.
struct TrackerCounters {
  std::uint64_t events_dropped = 0;      // no free slot: the event got a null handle
  std::uint64_t collectives_dropped = 0; // of those, Coll and P2p events: collectives lost
  std::uint64_t records_dropped = 0;     // the sink refused a finished collective
  std::uint64_t records_written = 0;     // collectives the sink took
  std::uint64_t orphan_children = 0;     // kernel channel or proxy op whose Coll/P2p was gone
  std::uint64_t ignored_events = 0;      // unknown type, or a handle that is not a live slot
  std::uint64_t communicators_dropped = 0;  // init() with every communicator slot taken
  std::uint64_t incomplete_flushed = 0;  // collectives written by finalize/exit before all channels ended
  std::uint64_t ids_pushed = 0;          // external correlation ids pushed (and popped)
};

class CollectiveTracker {
 public:
  static constexpr std::size_t kDefaultSlots = 4096;
  static constexpr std::size_t kMaxCommunicators = 256;

  explicit CollectiveTracker(PluginHooks hooks, std::size_t slot_count = kDefaultSlots);
  ~CollectiveTracker();
  CollectiveTracker(const CollectiveTracker&) = delete;
  CollectiveTracker& operator=(const CollectiveTracker&) = delete;

  // init(): a context for one communicator, or null (counted) when all
  // kMaxCommunicators are in use. `activation_mask` is what init() handed
  // NCCL: it says whether kernel-channel events will come.
  void* open_communicator(std::uint64_t comm_id, int nranks, int rank,
                          std::uint64_t activation_mask) noexcept;
  // finalize(): writes the communicator's unfinished collectives and frees it.
  void close_communicator(void* context) noexcept;

  // startEvent(): the handle for NCCL, or null for events the tracker does
  // not follow, a null or unknown context, and a full pool.
  void* start(void* context, const NcclEventStart& event) noexcept;
  // recordEventState(ncclProfilerKernelChStop): the kernel channel ended.
  void kernel_channel_stopped(void* handle) noexcept;
  // stopEvent().
  void stop(void* handle) noexcept;

  // Writes every unfinished collective (process exit).
  void flush_all() noexcept;

  [[nodiscard]] TrackerCounters counters() const noexcept;
  [[nodiscard]] std::size_t slot_count() const noexcept { return slot_count_; }

 private:
  struct Communicator;
  struct Slot;

  Slot* any_slot_of(void* handle) const noexcept;  // any slot, live or free
  Slot* slot_of(void* handle) const noexcept;      // a live slot only
  // The external id of the API event `parent` last was, when it was `kind`.
  std::uint64_t external_id_of(void* parent, std::uint8_t kind) const noexcept;
  Communicator* communicator_of(void* context) const noexcept;
  Slot* allocate(std::uint8_t kind, Communicator* comm) noexcept;
  void release(Slot& slot) noexcept;
  void* start_api(Communicator& comm, const NcclEventStart& event, std::uint8_t kind) noexcept;
  void* start_task(Communicator& comm, const NcclEventStart& event, std::uint8_t kind) noexcept;
  void* start_channel(Communicator& comm, const NcclEventStart& event) noexcept;
  void* start_kernel_launch(Communicator& comm, const NcclEventStart& event) noexcept;
  void stop_channel(Slot& child) noexcept;
  static void raise_end(Slot& task, std::int64_t t) noexcept;
  void try_finish(Slot& task) noexcept;
  void finish(Slot& task, bool complete) noexcept;
  void flush(const Communicator* only) noexcept;
  std::int64_t now() const noexcept;

  PluginHooks hooks_;
  std::size_t slot_count_;
  std::unique_ptr<Slot[]> slots_;
  BufferQueue free_;
  std::unique_ptr<Communicator[]> communicators_;
  std::atomic<std::uint64_t> next_external_id_{1};

  std::atomic<std::uint64_t> events_dropped_{0};
  std::atomic<std::uint64_t> collectives_dropped_{0};
  std::atomic<std::uint64_t> records_dropped_{0};
  std::atomic<std::uint64_t> records_written_{0};
  std::atomic<std::uint64_t> orphan_children_{0};
  std::atomic<std::uint64_t> ignored_events_{0};
  std::atomic<std::uint64_t> communicators_dropped_{0};
  std::atomic<std::uint64_t> incomplete_flushed_{0};
  std::atomic<std::uint64_t> ids_pushed_{0};
};

}  // namespace ssgd::tracer
