#include "tracer/core/buffer_queue.h"

#include <bit>

namespace ssgd::tracer {

BufferQueue::BufferQueue(std::size_t min_capacity) {
  const std::size_t capacity = std::bit_ceil(min_capacity < 2 ? std::size_t{2} : min_capacity);
  mask_ = capacity - 1;
  cells_ = std::make_unique<Cell[]>(capacity);
  for (std::size_t i = 0; i < capacity; ++i) cells_[i].sequence.store(i, std::memory_order_relaxed);
}

bool BufferQueue::try_push(std::uint32_t value) noexcept {
  std::size_t pos = tail_.load(std::memory_order_relaxed);
  Cell* cell = nullptr;
  for (;;) {
    cell = &cells_[pos & mask_];
    const std::size_t seq = cell->sequence.load(std::memory_order_acquire);
    const auto diff = static_cast<std::ptrdiff_t>(seq) - static_cast<std::ptrdiff_t>(pos);
    if (diff == 0) {
      if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) break;
    } else if (diff < 0) {
      return false;  // the cell still holds a value from one lap ago: full
    } else {
      pos = tail_.load(std::memory_order_relaxed);
    }
  }
  cell->value = value;
  cell->sequence.store(pos + 1, std::memory_order_release);
  return true;
}

bool BufferQueue::try_pop(std::uint32_t& value) noexcept {
  std::size_t pos = head_.load(std::memory_order_relaxed);
  Cell* cell = nullptr;
  for (;;) {
    cell = &cells_[pos & mask_];
    const std::size_t seq = cell->sequence.load(std::memory_order_acquire);
    const auto diff = static_cast<std::ptrdiff_t>(seq) - static_cast<std::ptrdiff_t>(pos + 1);
    if (diff == 0) {
      if (head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) break;
    } else if (diff < 0) {
      return false;  // nothing written at this position yet: empty
    } else {
      pos = head_.load(std::memory_order_relaxed);
    }
  }
  value = cell->value;
  cell->sequence.store(pos + mask_ + 1, std::memory_order_release);
  return true;
}

}  // namespace ssgd::tracer
