// The engine's pending-event set (simulator/engine/event_queue.h), a radix
// heap, against a reference ordered by (time, insertion sequence): random
// pushes and pops as the engine makes them (never below the last time
// popped), ties, times far apart, negative times, a queue emptied and
// refilled, and pushes below the last time popped (the slow path).
#include "simulator/engine/event_queue.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <utility>

namespace ssgd::sim {
namespace {

// The reference: (time, sequence) -> slot.
class Reference {
 public:
  void push(std::int64_t t, std::uint32_t slot) { entries_.insert({{t, seq_++}, slot}); }
  std::pair<std::int64_t, std::uint32_t> pop() {
    const auto it = entries_.begin();
    const auto out = std::make_pair(it->first.first, it->second);
    entries_.erase(it);
    return out;
  }
  [[nodiscard]] std::size_t size() const { return entries_.size(); }

 private:
  std::set<std::pair<std::pair<std::int64_t, std::uint64_t>, std::uint32_t>> entries_;
  std::uint64_t seq_ = 0;
};

void expect_same_pop(EventQueue& q, Reference& ref) {
  ASSERT_FALSE(q.empty());
  const QueuedEvent e = q.pop();
  const auto [t, slot] = ref.pop();
  ASSERT_EQ(e.time_ns, t);
  ASSERT_EQ(e.slot, slot);
  ASSERT_EQ(e.generation, slot ^ 0x5a5au);
  ASSERT_EQ(q.size(), ref.size());
}

TEST(EventQueue, TiesComeOutInInsertionOrder) {
  EventQueue q;
  Reference ref;
  std::uint32_t slot = 0;
  for (const std::int64_t t : {5, 3, 5, 3, 9, 5, 3}) {
    q.push({t, slot, slot ^ 0x5a5au});
    ref.push(t, slot++);
  }
  while (ref.size() > 0) expect_same_pop(q, ref);
  EXPECT_TRUE(q.empty());
}

// The engine's pattern: pop one, push a few at or after its time. Delays
// from 0 (a tie with the current time) to 2^40 ns, so entries spread over
// many buckets, with many equal times.
TEST(EventQueue, MatchesTheReferenceOnRandomHoldPatterns) {
  for (const std::uint64_t seed : {1u, 2u, 3u, 4u}) {
    std::mt19937_64 rng(seed);
    EventQueue q;
    Reference ref;
    std::uint32_t slot = 0;
    std::int64_t now = seed == 4 ? -1'000'000 : 0;  // negative times too
    for (int i = 0; i < 64; ++i) {
      const std::int64_t t = now + static_cast<std::int64_t>(rng() % 1000);
      q.push({t, slot, slot ^ 0x5a5au});
      ref.push(t, slot++);
    }
    for (int step = 0; step < 20000; ++step) {
      if (ref.size() > 0) {
        const auto [t, s] = std::pair{q.pop(), 0};
        const auto [rt, rslot] = ref.pop();
        ASSERT_EQ(t.time_ns, rt) << "seed " << seed << " step " << step;
        ASSERT_EQ(t.slot, rslot) << "seed " << seed << " step " << step;
        now = rt;
      }
      const int pushes = static_cast<int>(rng() % 3);  // 0, 1 or 2: the queue breathes
      for (int k = 0; k < pushes; ++k) {
        const int shift = static_cast<int>(rng() % 41);
        const std::int64_t delay =
            rng() % 4 == 0 ? 0 : static_cast<std::int64_t>(rng() % (std::uint64_t{1} << shift));
        q.push({now + delay, slot, slot ^ 0x5a5au});
        ref.push(now + delay, slot++);
      }
      ASSERT_EQ(q.size(), ref.size());
    }
    while (ref.size() > 0) expect_same_pop(q, ref);
    EXPECT_TRUE(q.empty());
  }
}

TEST(EventQueue, ExtremeTimesKeepTheirOrder) {
  EventQueue q;
  Reference ref;
  const std::int64_t lo = std::numeric_limits<std::int64_t>::min();
  const std::int64_t hi = std::numeric_limits<std::int64_t>::max();
  std::uint32_t slot = 0;
  for (const std::int64_t t : {hi, lo, std::int64_t{0}, hi, std::int64_t{-1}, lo, std::int64_t{1}}) {
    q.push({t, slot, slot ^ 0x5a5au});
    ref.push(t, slot++);
  }
  while (ref.size() > 0) expect_same_pop(q, ref);
}

// An emptied queue takes a time below the last one popped on its fast path;
// a queue with entries pending takes it on the slow path; both keep the
// order exact.
TEST(EventQueue, PushesBelowTheLastTimePoppedStayExact) {
  EventQueue q;
  Reference ref;
  std::uint32_t slot = 0;
  auto push = [&](std::int64_t t) {
    q.push({t, slot, slot ^ 0x5a5au});
    ref.push(t, slot++);
  };
  push(100);
  expect_same_pop(q, ref);
  push(50);  // empty queue, below 100
  push(50);
  push(70);
  push(1000);
  expect_same_pop(q, ref);  // 50
  push(10);                 // below 50 with three pending: the slow path
  push(50);
  push(1000);
  while (ref.size() > 0) expect_same_pop(q, ref);
  EXPECT_TRUE(q.empty());
}

}  // namespace
}  // namespace ssgd::sim
