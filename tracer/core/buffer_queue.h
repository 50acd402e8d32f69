#pragma once
// A bounded multi-producer multi-consumer queue of buffer indices that never
// blocks: try_push fails when full, try_pop when empty. It is Dmitry Vyukov's
// bounded MPMC design: each cell carries a sequence number that says whether
// it is ready to be written (seq == position) or read (seq == position + 1),
// and producers and consumers claim positions with one compare-and-swap on
// their own counter. The RecordBufferPool sizes it to hold every buffer, so
// a push of a buffer the pool owns never fails.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace ssgd::tracer {

class BufferQueue {
 public:
  // Holds at least `min_capacity` indices (rounded up to a power of two).
  explicit BufferQueue(std::size_t min_capacity);

  bool try_push(std::uint32_t value) noexcept;
  bool try_pop(std::uint32_t& value) noexcept;

 private:
  struct Cell {
    std::atomic<std::size_t> sequence{0};
    std::uint32_t value = 0;
  };
  std::size_t mask_ = 0;
  std::unique_ptr<Cell[]> cells_;
  alignas(64) std::atomic<std::size_t> tail_{0};  // next position to push
  alignas(64) std::atomic<std::size_t> head_{0};  // next position to pop
};

}  // namespace ssgd::tracer
