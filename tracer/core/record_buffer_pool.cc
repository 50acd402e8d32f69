#include "tracer/core/record_buffer_pool.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace ssgd::tracer {

RecordBuffer::RecordBuffer(std::size_t records, std::size_t name_bytes)
    : records_(std::make_unique<ActivityRecord[]>(records)),
      capacity_(records),
      names_(std::make_unique<char[]>(name_bytes)),
      name_capacity_(name_bytes) {}

bool RecordBuffer::try_append(const ActivityRecord& record, std::size_t max_name_bytes,
                              bool& name_truncated) noexcept {
  if (size_ == capacity_) return false;
  const std::size_t name_size = std::min({record.name.size(), max_name_bytes, name_capacity_});
  if (name_size > name_capacity_ - name_used_) return false;
  name_truncated = name_size < record.name.size();
  char* name = names_.get() + name_used_;
  if (name_size > 0) std::memcpy(name, record.name.data(), name_size);
  name_used_ += name_size;
  ActivityRecord& stored = records_[size_++];
  stored.payload = record.payload;
  stored.name = std::string_view(name, name_size);
  return true;
}

void RecordBuffer::clear() noexcept {
  size_ = 0;
  name_used_ = 0;
}

RecordProducer::~RecordProducer() { release(); }

RecordProducer::RecordProducer(RecordProducer&& other) noexcept
    : pool_(other.pool_), slot_(other.slot_) {
  other.pool_ = nullptr;
  other.slot_ = -1;
}

RecordProducer& RecordProducer::operator=(RecordProducer&& other) noexcept {
  if (this != &other) {
    release();
    pool_ = other.pool_;
    slot_ = other.slot_;
    other.pool_ = nullptr;
    other.slot_ = -1;
  }
  return *this;
}

AppendStatus RecordProducer::append(const ActivityRecord& record) noexcept {
  if (pool_ == nullptr) return AppendStatus::kDropped;
  if (slot_ < 0) {
    pool_->dropped_without_slot_.fetch_add(1, std::memory_order_relaxed);
    return AppendStatus::kDropped;
  }
  return pool_->append(pool_->slots_[static_cast<std::size_t>(slot_)], record);
}

void RecordProducer::hand_over() noexcept {
  if (has_slot()) pool_->hand_over(pool_->slots_[static_cast<std::size_t>(slot_)]);
}

void RecordProducer::release() noexcept {
  if (has_slot()) {
    RecordBufferPool::Slot& slot = pool_->slots_[static_cast<std::size_t>(slot_)];
    pool_->hand_over(slot);
    slot.claimed.store(false, std::memory_order_release);
  }
  pool_ = nullptr;
  slot_ = -1;
}

RecordBufferPool::RecordBufferPool(const RecordBufferOptions& options)
    : options_(options), free_(options.buffer_count), completed_(options.buffer_count) {
  if (options.buffer_count == 0 || options.records_per_buffer == 0 ||
      options.name_bytes_per_buffer == 0 || options.max_producers == 0 ||
      options.buffer_count >= kNoBuffer) {
    throw std::invalid_argument(
        "RecordBufferPool: buffer_count, records_per_buffer, name_bytes_per_buffer and "
        "max_producers must be at least 1");
  }
  buffers_.reserve(options.buffer_count);
  for (std::size_t i = 0; i < options.buffer_count; ++i) {
    buffers_.emplace_back(options.records_per_buffer, options.name_bytes_per_buffer);
    free_.try_push(static_cast<std::uint32_t>(i));
  }
  slots_ = std::make_unique<Slot[]>(options.max_producers);
}

RecordBufferPool::~RecordBufferPool() = default;

RecordProducer RecordBufferPool::producer() noexcept {
  for (std::size_t i = 0; i < options_.max_producers; ++i) {
    bool expected = false;
    if (!slots_[i].claimed.load(std::memory_order_relaxed) &&
        slots_[i].claimed.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
      return RecordProducer(this, static_cast<std::int32_t>(i));
    }
  }
  return RecordProducer(this, -1);
}

AppendStatus RecordBufferPool::append(Slot& slot, const ActivityRecord& record) noexcept {
  std::uint32_t b = slot.current.exchange(kNoBuffer, std::memory_order_acquire);
  bool truncated = false;
  bool stored = false;
  if (b != kNoBuffer) {
    stored = buffers_[b].try_append(record, options_.max_name_bytes, truncated);
    if (!stored) {
      completed_.try_push(b);  // sized for every buffer: cannot fail
      b = kNoBuffer;
    }
  }
  if (!stored && free_.try_pop(b)) {
    // An empty buffer takes any record: names are cut to fit its arena.
    stored = buffers_[b].try_append(record, options_.max_name_bytes, truncated);
  }
  if (b != kNoBuffer) slot.current.store(b, std::memory_order_release);
  if (!stored) {
    slot.dropped.fetch_add(1, std::memory_order_relaxed);
    // A plain load first: no read-modify-write on a line every producer shares.
    if (!starved_.load(std::memory_order_relaxed)) starved_.store(true, std::memory_order_relaxed);
    return AppendStatus::kDropped;
  }
  slot.appended.fetch_add(1, std::memory_order_relaxed);
  if (truncated) slot.truncated_names.fetch_add(1, std::memory_order_relaxed);
  return AppendStatus::kStored;
}

void RecordBufferPool::hand_over(Slot& slot) noexcept {
  const std::uint32_t b = slot.current.exchange(kNoBuffer, std::memory_order_acquire);
  if (b == kNoBuffer) return;
  if (buffers_[b].size() > 0) {
    completed_.try_push(b);
  } else {
    free_.try_push(b);
  }
}

void RecordBufferPool::collect_partial() noexcept {
  for (std::size_t i = 0; i < options_.max_producers; ++i) {
    if (slots_[i].current.load(std::memory_order_relaxed) != kNoBuffer) hand_over(slots_[i]);
  }
}

bool RecordBufferPool::take_starved() noexcept {
  return starved_.load(std::memory_order_relaxed) &&
         starved_.exchange(false, std::memory_order_relaxed);
}

bool RecordBufferPool::pop_completed(std::uint32_t& index) noexcept {
  return completed_.try_pop(index);
}

void RecordBufferPool::recycle(std::uint32_t index) noexcept {
  buffers_[index].clear();
  free_.try_push(index);
}

PoolCounters RecordBufferPool::counters() const noexcept {
  PoolCounters c;
  for (std::size_t i = 0; i < options_.max_producers; ++i) {
    c.appended += slots_[i].appended.load(std::memory_order_relaxed);
    c.dropped += slots_[i].dropped.load(std::memory_order_relaxed);
    c.truncated_names += slots_[i].truncated_names.load(std::memory_order_relaxed);
  }
  c.dropped += dropped_without_slot_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace ssgd::tracer
