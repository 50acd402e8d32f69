#pragma once
// Fixed-capacity record buffers, handed to producer threads without ever
// blocking them, and the queue of full buffers that the trace sink's writer
// thread drains.
//
// All memory is allocated when the pool is made: `buffer_count` buffers of
// `records_per_buffer` records and `name_bytes_per_buffer` bytes of names.
// Each producer (one per thread: a CUPTI buffer-completion thread, an NCCL
// plugin callback thread) owns one buffer at a time through a slot:
//
//   append: take the slot's buffer (atomic exchange with "none"); if it is
//           full, push it to the completed queue and pop a free one; if
//           there is no free buffer, drop the record, count it and flag the
//           pool as starved (take_starved); put the buffer back into the
//           slot.
//   writer: pops completed buffers, reads them, clears them and pushes them
//           to the free queue; to flush, it also takes each slot's partly
//           filled buffer with the same exchange, so it never reads a buffer
//           a producer is writing.
//
// Both queues are lock-free (buffer_queue.h) and sized for every buffer, so
// no operation on the producer side waits for anything. Per-slot counters
// keep producers off each other's cache lines.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "tracer/core/activity_record.h"
#include "tracer/core/buffer_queue.h"

namespace ssgd::tracer {

struct RecordBufferOptions {
  std::size_t buffer_count = 32;
  std::size_t records_per_buffer = 2048;
  std::size_t name_bytes_per_buffer = 128 * 1024;
  // Names longer than this are cut to it (and counted in truncated_names).
  std::size_t max_name_bytes = 4096;
  // Producer slots: threads that append at the same time.
  std::size_t max_producers = 256;
};

// One buffer: records, and an arena holding their names; a record's name
// views its copy in the arena, valid until clear().
class RecordBuffer {
 public:
  RecordBuffer(std::size_t records, std::size_t name_bytes);

  // Copies `record` and its name (cut to `max_name_bytes`); false, with
  // nothing stored, when the records or the name arena are full.
  bool try_append(const ActivityRecord& record, std::size_t max_name_bytes,
                  bool& name_truncated) noexcept;
  void clear() noexcept;

  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] const ActivityRecord& operator[](std::size_t i) const { return records_[i]; }

 private:
  std::unique_ptr<ActivityRecord[]> records_;
  std::size_t capacity_;
  std::size_t size_ = 0;
  std::unique_ptr<char[]> names_;
  std::size_t name_capacity_;
  std::size_t name_used_ = 0;
};

// What the pool's producers did, summed over all slots.
struct PoolCounters {
  std::uint64_t appended = 0;
  std::uint64_t dropped = 0;          // no free buffer, or no producer slot
  std::uint64_t truncated_names = 0;  // stored with the name cut short
};

enum class AppendStatus : std::uint8_t { kStored, kDropped };

class RecordBufferPool;

// A producer's handle: one per thread, not shared between threads. Gives
// its slot back (handing over its partly filled buffer) when destroyed.
class RecordProducer {
 public:
  RecordProducer() = default;
  ~RecordProducer();
  RecordProducer(RecordProducer&& other) noexcept;
  RecordProducer& operator=(RecordProducer&& other) noexcept;
  RecordProducer(const RecordProducer&) = delete;
  RecordProducer& operator=(const RecordProducer&) = delete;

  // Stores one record, or drops and counts it. Never blocks, never throws.
  AppendStatus append(const ActivityRecord& record) noexcept;
  // Hands the partly filled buffer to the writer now.
  void hand_over() noexcept;
  // False for a producer that got no slot (every record it appends is dropped).
  [[nodiscard]] bool has_slot() const { return pool_ != nullptr && slot_ >= 0; }

 private:
  friend class RecordBufferPool;
  RecordProducer(RecordBufferPool* pool, std::int32_t slot) : pool_(pool), slot_(slot) {}
  void release() noexcept;

  RecordBufferPool* pool_ = nullptr;
  std::int32_t slot_ = -1;
};

class RecordBufferPool {
 public:
  // Allocates every buffer. Throws std::invalid_argument for a zero count or
  // capacity, std::bad_alloc when the memory is not there.
  explicit RecordBufferPool(const RecordBufferOptions& options);
  ~RecordBufferPool();
  RecordBufferPool(const RecordBufferPool&) = delete;
  RecordBufferPool& operator=(const RecordBufferPool&) = delete;

  // A producer with a slot of its own; when every slot is taken, a producer
  // without one (its records are dropped and counted). Never blocks.
  RecordProducer producer() noexcept;

  // Writer side (one thread at a time). A completed buffer, in the order
  // producers completed them; false when none is waiting.
  bool pop_completed(std::uint32_t& index) noexcept;
  [[nodiscard]] const RecordBuffer& buffer(std::uint32_t index) const { return buffers_[index]; }
  // Clears a popped buffer and makes it free again.
  void recycle(std::uint32_t index) noexcept;
  // Moves every slot's partly filled buffer to the completed queue.
  void collect_partial() noexcept;
  // True (once) when a producer found no free buffer since the last call:
  // the writer should then take the partly filled buffers, which idle
  // producers would otherwise hold until the next flush (with more
  // appending threads than buffers, every buffer can be held nearly empty).
  bool take_starved() noexcept;

  [[nodiscard]] PoolCounters counters() const noexcept;
  [[nodiscard]] const RecordBufferOptions& options() const { return options_; }

 private:
  friend class RecordProducer;
  static constexpr std::uint32_t kNoBuffer = UINT32_MAX;

  struct alignas(64) Slot {
    std::atomic<bool> claimed{false};
    std::atomic<std::uint32_t> current{kNoBuffer};
    std::atomic<std::uint64_t> appended{0};
    std::atomic<std::uint64_t> dropped{0};
    std::atomic<std::uint64_t> truncated_names{0};
  };

  AppendStatus append(Slot& slot, const ActivityRecord& record) noexcept;
  void hand_over(Slot& slot) noexcept;

  RecordBufferOptions options_;
  std::vector<RecordBuffer> buffers_;  // never resized after construction
  std::unique_ptr<Slot[]> slots_;
  BufferQueue free_;
  BufferQueue completed_;
  std::atomic<std::uint64_t> dropped_without_slot_{0};
  std::atomic<bool> starved_{false};  // a producer found no free buffer
};

}  // namespace ssgd::tracer
