// Fixed-capacity buffers and producers (tracer/core/record_buffer_pool.h):
// exact drop counts on overflow, name copies and truncation, slots running
// out, partly filled buffers collected, and no record lost or duplicated by
// concurrent producers.
#include "tracer/core/record_buffer_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>


namespace ssgd::tracer {
namespace {

RecordBufferOptions small(std::size_t buffers, std::size_t records) {
  RecordBufferOptions o;
  o.buffer_count = buffers;
  o.records_per_buffer = records;
  o.name_bytes_per_buffer = 1024;
  o.max_name_bytes = 64;
  o.max_producers = 4;
  return o;
}

ActivityRecord kernel(std::uint64_t id, std::string_view name = {}) {
  KernelActivity k;
  k.correlation_id = id;
  return ActivityRecord{k, name};
}

// Pops every completed buffer; returns the correlation ids in pop order.
std::vector<std::uint64_t> drain(RecordBufferPool& pool) {
  std::vector<std::uint64_t> ids;
  std::uint32_t b = 0;
  while (pool.pop_completed(b)) {
    const RecordBuffer& buffer = pool.buffer(b);
    for (std::size_t i = 0; i < buffer.size(); ++i) {
      ids.push_back(std::get<KernelActivity>(buffer[i].payload).correlation_id);
    }
    pool.recycle(b);
  }
  return ids;
}

TEST(RecordBufferPoolTest, OverflowDropsAndCountsExactly) {
  RecordBufferPool pool(small(2, 4));
  RecordProducer p = pool.producer();
  int stored = 0;
  for (std::uint64_t id = 0; id < 20; ++id) {
    if (p.append(kernel(id)) == AppendStatus::kStored) ++stored;
  }
  EXPECT_EQ(stored, 8);  // two buffers of four
  EXPECT_EQ(pool.counters().appended, 8u);
  EXPECT_EQ(pool.counters().dropped, 12u);
  EXPECT_EQ(drain(pool), (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5, 6, 7}));

  // Once the writer has recycled the buffers, records are stored again.
  EXPECT_EQ(p.append(kernel(100)), AppendStatus::kStored);
  p.hand_over();
  EXPECT_EQ(drain(pool), (std::vector<std::uint64_t>{100}));
  EXPECT_EQ(pool.counters().appended, 9u);
  EXPECT_EQ(pool.counters().dropped, 12u);
}

TEST(RecordBufferPoolTest, NamesAreCopiedAndLongNamesCut) {
  RecordBufferPool pool(small(2, 8));
  RecordProducer p = pool.producer();
  std::string name = "kernel_a";
  ASSERT_EQ(p.append(kernel(1, name)), AppendStatus::kStored);
  name = "overwritten";  // the pool kept its own copy
  const std::string long_name(100, 'x');
  ASSERT_EQ(p.append(kernel(2, long_name)), AppendStatus::kStored);
  p.hand_over();
  std::uint32_t b = 0;
  ASSERT_TRUE(pool.pop_completed(b));
  EXPECT_EQ(pool.buffer(b)[0].name, "kernel_a");
  EXPECT_EQ(pool.buffer(b)[1].name, std::string(64, 'x'));
  EXPECT_EQ(pool.counters().truncated_names, 1u);
}

TEST(RecordBufferPoolTest, AFullNameArenaCompletesTheBuffer) {
  RecordBufferPool pool(small(2, 100));  // 1024 name bytes per buffer
  RecordProducer p = pool.producer();
  const std::string name(60, 'n');
  for (std::uint64_t id = 0; id < 20; ++id) ASSERT_EQ(p.append(kernel(id, name)), AppendStatus::kStored);
  p.hand_over();
  std::uint32_t b = 0;
  ASSERT_TRUE(pool.pop_completed(b));
  EXPECT_EQ(pool.buffer(b).size(), 17u);  // 17 * 60 <= 1024 < 18 * 60
  pool.recycle(b);
  ASSERT_TRUE(pool.pop_completed(b));
  EXPECT_EQ(pool.buffer(b).size(), 3u);
}

TEST(RecordBufferPoolTest, ProducersBeyondTheSlotsDropAndCount) {
  RecordBufferPool pool(small(8, 4));
  std::vector<RecordProducer> producers;
  for (int i = 0; i < 4; ++i) producers.push_back(pool.producer());
  RecordProducer extra = pool.producer();
  EXPECT_FALSE(extra.has_slot());
  EXPECT_EQ(extra.append(kernel(1)), AppendStatus::kDropped);
  EXPECT_EQ(pool.counters().dropped, 1u);
  producers.pop_back();  // gives its slot back
  EXPECT_TRUE(pool.producer().has_slot());
}

TEST(RecordBufferPoolTest, CollectPartialTakesPartlyFilledBuffers) {
  RecordBufferPool pool(small(4, 10));
  RecordProducer a = pool.producer();
  RecordProducer b = pool.producer();
  a.append(kernel(1));
  b.append(kernel(2));
  a.append(kernel(3));
  EXPECT_TRUE(drain(pool).empty());  // nothing completed yet
  pool.collect_partial();
  std::vector<std::uint64_t> ids = drain(pool);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::uint64_t>{1, 2, 3}));
  // The producers go on with fresh buffers.
  a.append(kernel(4));
  a.hand_over();
  EXPECT_EQ(drain(pool), (std::vector<std::uint64_t>{4}));
}

// More producers than buffers: each holds one with a record in it, the
// next finds none. The pool says so once (take_starved), and after the
// writer collects the partly filled buffers the next append is stored.
TEST(RecordBufferPoolTest, AProducerWithoutAFreeBufferFlagsThePoolAsStarved) {
  RecordBufferPool pool(small(2, 10));
  RecordProducer a = pool.producer();
  RecordProducer b = pool.producer();
  RecordProducer c = pool.producer();
  EXPECT_EQ(a.append(kernel(1)), AppendStatus::kStored);
  EXPECT_EQ(b.append(kernel(2)), AppendStatus::kStored);
  EXPECT_FALSE(pool.take_starved());
  EXPECT_EQ(c.append(kernel(3)), AppendStatus::kDropped);
  EXPECT_EQ(c.append(kernel(4)), AppendStatus::kDropped);
  EXPECT_TRUE(pool.take_starved());
  EXPECT_FALSE(pool.take_starved());  // once per starving
  pool.collect_partial();
  std::vector<std::uint64_t> ids = drain(pool);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::uint64_t>{1, 2}));
  EXPECT_EQ(c.append(kernel(5)), AppendStatus::kStored);
  EXPECT_EQ(pool.counters().dropped, 2u);
}

TEST(RecordBufferPoolTest, ConcurrentProducersAndDrainerLoseAndDuplicateNothing) {
  RecordBufferOptions o = small(16, 64);
  o.max_producers = 8;
  RecordBufferPool pool(o);
  constexpr int kThreads = 6;
  constexpr std::uint64_t kPerThread = 20000;
  std::atomic<int> running{kThreads};
  std::vector<std::uint64_t> seen;
  std::thread drainer([&] {
    for (;;) {
      const bool last = running.load() == 0;
      if (last) pool.collect_partial();
      const std::vector<std::uint64_t> ids = drain(pool);
      seen.insert(seen.end(), ids.begin(), ids.end());
      if (last) return;
      if (ids.empty()) pool.collect_partial();  // also steal while producers run
    }
  });
  std::vector<std::thread> producers;
  std::atomic<std::uint64_t> dropped{0};
  for (int t = 0; t < kThreads; ++t) {
    producers.emplace_back([&, t] {
      {
        RecordProducer p = pool.producer();
        for (std::uint64_t i = 0; i < kPerThread; ++i) {
          const std::uint64_t id = static_cast<std::uint64_t>(t) * kPerThread + i;
          // Retry a dropped record so the test can demand every id.
          while (p.append(kernel(id)) == AppendStatus::kDropped) {
            dropped.fetch_add(1);
            std::this_thread::yield();
          }
        }
      }  // the producer hands over its last buffer before the count drops
      running.fetch_sub(1);
    });
  }
  for (auto& p : producers) p.join();
  drainer.join();

  ASSERT_EQ(seen.size(), kThreads * kPerThread);
  std::sort(seen.begin(), seen.end());
  for (std::size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], i) << "lost or duplicated";
  EXPECT_EQ(pool.counters().appended, kThreads * kPerThread);
  EXPECT_EQ(pool.counters().dropped, dropped.load());
}

}  // namespace
}  // namespace ssgd::tracer
