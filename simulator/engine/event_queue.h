#pragma once
// The pending-event set of the discrete-event engine: a radix heap (Ahuja,
// Mehlhorn, Orlin and Tarjan, 1990) of 16-byte entries, popped in order of
// time and, among equal times, in insertion order, so a run is the same every
// time. Payloads live elsewhere (the engine's slot pool).
//
// Why a radix heap: simulated time never goes back (the engine refuses events
// in the past), so every key pushed is at least the last key popped. Bucket b
// >= 1 holds the keys whose highest bit that differs from that last key is
// bit b - 1; bucket 0 holds the keys equal to it. A pop takes the front of
// bucket 0; when it is empty, the lowest non-empty bucket is scanned for its
// minimum, which becomes the last key, and its entries move down to lower
// buckets. Each entry moves at most 64 times, in practice a handful, and every
// move is a sequential append, so a large queue costs little more than a small
// one (a binary heap's sift jumps through memory that no longer fits in the
// cache).
//
// Why ties come out in insertion order without a sequence number: entries of
// equal time always share a bucket, a push appends, and a bucket's entries move
// in order into buckets that are all empty at that moment. So within a bucket,
// entries of equal time stay in the order they were pushed.
//
// A push below the last key popped (possible only once the engine's clock and
// this queue's disagree, which the engine does not do) takes a slow path that
// rebuilds the buckets, so the order stays exact whatever the caller does.

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <vector>

namespace ssgd::sim {

struct QueuedEvent {
  std::int64_t time_ns;
  std::uint32_t slot;        // index into the engine's payload pool
  std::uint32_t generation;  // the slot's generation when scheduled (lazy cancellation)
};

class EventQueue {
 public:
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::size_t size() const { return size_; }

  void push(const QueuedEvent& e) {
    const std::uint64_t key = key_of(e.time_ns);
    if (key <= last_) [[unlikely]] {
      // The key becomes (or is) last_, so the entry joins equal_.
      if (key < last_ && size_ > 0) {
        rebuild_below(key);  // last_ = key; equal_ empty
      } else {
        if (head_ == equal_.size()) {  // all popped: start over, so the vector does not grow
          equal_.clear();
          head_ = 0;
        }
        last_ = key;
      }
      equal_.push_back(e);
      ++size_;
      return;
    }
    add(bucket_of(key), e, key);
    ++size_;
  }

  // Precondition: !empty().
  QueuedEvent pop() {
    if (head_ == equal_.size()) refill();
    --size_;
    return equal_[head_++];
  }

 private:
  // Bucket b >= 1 holds the keys whose highest bit differing from last_ is
  // bit b - 1; the keys equal to last_ are in equal_.
  static constexpr unsigned kBuckets = 65;

  struct Bucket {
    std::vector<QueuedEvent> entries;
    std::uint64_t least = ~std::uint64_t{0};  // the least key in entries (kept on push)
  };

  // Time as an unsigned key of the same order (negative times included).
  static std::uint64_t key_of(std::int64_t time_ns) {
    return static_cast<std::uint64_t>(time_ns) ^ (std::uint64_t{1} << 63);
  }
  // For a key above last_: 1 to 64.
  unsigned bucket_of(std::uint64_t key) const {
    return static_cast<unsigned>(std::bit_width(key ^ last_));
  }

  void add(unsigned b, const QueuedEvent& e, std::uint64_t key) {
    Bucket& bucket = buckets_[b];
    bucket.entries.push_back(e);
    bucket.least = std::min(bucket.least, key);
    nonempty_ |= std::uint64_t{1} << (b - 1);
  }

  // equal_ is spent: the least key of the lowest non-empty bucket becomes
  // last_, and that bucket's entries move, in order, to equal_ or to lower
  // buckets. One pass, since each bucket keeps its least key.
  void refill() {
    equal_.clear();
    head_ = 0;
    const unsigned k = static_cast<unsigned>(std::countr_zero(nonempty_)) + 1;
    Bucket& from = buckets_[k];
    const std::uint64_t last = from.least;
    last_ = last;
    // Locals, not members, in the loop: a push_back may allocate, after
    // which the compiler would reload every member it cannot prove unchanged.
    std::uint64_t nonempty = nonempty_ & ~(std::uint64_t{1} << (k - 1));
    const QueuedEvent* const end = from.entries.data() + from.entries.size();
    for (const QueuedEvent* e = from.entries.data(); e != end; ++e) {
      const std::uint64_t key = key_of(e->time_ns);
      if (key == last) {
        equal_.push_back(*e);
        continue;
      }
      const auto b = static_cast<unsigned>(std::bit_width(key ^ last));
      Bucket& to = buckets_[b];
      to.entries.push_back(*e);
      to.least = std::min(to.least, key);
      nonempty |= std::uint64_t{1} << (b - 1);
    }
    nonempty_ = nonempty;
    from.entries.clear();
    from.least = ~std::uint64_t{0};
  }

  // The slow path for a key below last_ while entries are pending: every
  // pending entry is sorted by time (stably: equal times share a bucket, in
  // insertion order) and added again relative to the new, lower last_.
  void rebuild_below(std::uint64_t key) {
    std::vector<QueuedEvent> pending(equal_.begin() + static_cast<std::ptrdiff_t>(head_), equal_.end());
    for (Bucket& bucket : buckets_) {
      pending.insert(pending.end(), bucket.entries.begin(), bucket.entries.end());
      bucket.entries.clear();
      bucket.least = ~std::uint64_t{0};
    }
    std::stable_sort(pending.begin(), pending.end(),
                     [](const QueuedEvent& a, const QueuedEvent& b) { return a.time_ns < b.time_ns; });
    equal_.clear();
    head_ = 0;
    nonempty_ = 0;
    last_ = key;
    for (const QueuedEvent& e : pending) add(bucket_of(key_of(e.time_ns)), e, key_of(e.time_ns));
  }

  std::vector<QueuedEvent> equal_;  // entries whose key is last_, in insertion order
  std::size_t head_ = 0;            // the next entry of equal_ to pop
  std::array<Bucket, kBuckets> buckets_;  // [0] unused
  std::uint64_t last_ = key_of(0);  // the last key popped, or the first pushed into an empty queue
  std::uint64_t nonempty_ = 0;      // bit b - 1 set when bucket b holds entries
  std::size_t size_ = 0;
};

}  // namespace ssgd::sim
