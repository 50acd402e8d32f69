#pragma once
// The pending-event set of the discrete-event engine: a 4-ary min-heap of
// small entries ordered by (time, insertion sequence). The sequence number
// makes ties resolve in insertion order, so a run is the same every time.
// Entries are 24 bytes; payloads live elsewhere (the engine's slot pool).

#include <cstdint>
#include <vector>

#include "common/time.h"

namespace ssgd::sim {

struct QueuedEvent {
  std::int64_t time_ns;
  std::uint64_t sequence;
  std::uint32_t slot;        // index into the engine's payload pool
  std::uint32_t generation;  // the slot's generation when scheduled (lazy cancellation)
};

class EventQueue {
 public:
  [[nodiscard]] bool empty() const { return heap_.empty(); }
  [[nodiscard]] std::size_t size() const { return heap_.size(); }
  void reserve(std::size_t n) { heap_.reserve(n); }

  void push(const QueuedEvent& e) {
    heap_.push_back(e);
    sift_up(heap_.size() - 1);
  }

  [[nodiscard]] const QueuedEvent& top() const { return heap_.front(); }

  QueuedEvent pop() {
    const QueuedEvent top = heap_.front();
    const QueuedEvent last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(last);
    return top;
  }

 private:
  static constexpr std::size_t kArity = 4;

  static bool before(const QueuedEvent& a, const QueuedEvent& b) {
    return a.time_ns != b.time_ns ? a.time_ns < b.time_ns : a.sequence < b.sequence;
  }

  void sift_up(std::size_t i) {
    const QueuedEvent e = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }

  // Places `e` (the former last entry) starting from the root.
  void sift_down(const QueuedEvent& e) {
    const std::size_t n = heap_.size();
    std::size_t i = 0;
    while (true) {
      const std::size_t first = i * kArity + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t end = first + kArity < n ? first + kArity : n;
      for (std::size_t c = first + 1; c < end; ++c) {
        if (before(heap_[c], heap_[best])) best = c;
      }
      if (!before(heap_[best], e)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = e;
  }

  std::vector<QueuedEvent> heap_;
};

}  // namespace ssgd::sim
