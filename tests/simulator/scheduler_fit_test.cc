// The scheduler costs of simulator/calibration/scheduler_fit.h: synthetic
// traces whose samples are known to the nanosecond (bursts, what breaks one,
// nested calls, the stream's previous collective, unlinked records, the
// errors), and a real capture (two ranks of PyTorch DDP over gloo, every
// 256 KiB partition its own all-reduce, tools/testbed/train.py
// --partition-kb 256) imported as `ssgd import pytorch` does.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error.h"
#include "simulator/calibration/scheduler_fit.h"
#include "tests/support/synthetic_trace.h"
#include "tests/support/test_files.h"
#include "traces/import/pytorch/pytorch_import.h"
#include "traces/trace_writer.h"

namespace ssgd::sim {
namespace {

namespace v1 = trace::v1;
using ::testing::HasSubstr;

v1::Event launch(std::int32_t rank, std::uint64_t thread, std::int64_t start, std::int64_t end,
                 std::uint64_t correlation, v1::ApiCall::Api api = v1::ApiCall::FRAMEWORK) {
  v1::Event e;
  e.set_rank(rank);
  v1::ApiCall* a = e.mutable_api_call();
  a->set_api(api);
  a->set_name(api == v1::ApiCall::FRAMEWORK ? "c10d::allreduce_" : "cudaLaunchKernel");
  a->set_thread_id(thread);
  a->set_start_ns(start);
  a->set_end_ns(end);
  a->set_correlation_id(correlation);
  return e;
}

v1::Event collective(std::int32_t rank, std::uint32_t stream, std::int64_t start, std::int64_t end,
                     std::uint64_t correlation, std::uint64_t sequence) {
  v1::Event e;
  e.set_rank(rank);
  v1::Collective* c = e.mutable_collective();
  c->set_op(v1::Collective::ALL_REDUCE);
  c->set_communicator_id(7);
  c->set_nranks(2);
  c->set_rank(rank);
  c->set_sequence_number(sequence);
  c->set_size_bytes(262144);
  c->set_device(-1);
  c->set_stream(stream);
  c->set_start_ns(start);
  c->set_end_ns(end);
  c->set_correlation_id(correlation);
  return e;
}

// A CPU operator of a thread (device -1, its stream the thread).
v1::Event cpu_op(std::int32_t rank, std::uint32_t thread, std::int64_t start, std::int64_t end) {
  v1::Event e;
  e.set_rank(rank);
  v1::Kernel* k = e.mutable_kernel();
  k->set_name("aten::mm");
  k->set_device(-1);
  k->set_stream(thread);
  k->set_start_ns(start);
  k->set_end_ns(end);
  return e;
}

class SchedulerFitTest : public ssgd::testing::TempDirTest {
 protected:
  std::filesystem::path trace(const std::vector<v1::Event>& events) {
    return ssgd::testing::write_synthetic_trace(dir_ / "run.ssgdt", events, "scheduler_fit_test",
                                                4);
  }
};

TEST_F(SchedulerFitTest, BurstsGiveTheSpacingAndStreamsTheDelay) {
  const auto fit = fit_scheduler_costs(trace({
      // A burst of three launches on thread 1: spacings 5 and 6 ns.
      launch(0, 1, 100, 101, 1),
      launch(0, 1, 105, 106, 2),
      launch(0, 1, 111, 112, 3),
      // The thread computes (it starts between launches 3 and 4): a break.
      cpu_op(0, 1, 150, 190),
      // A burst of two: spacing 4 ns.
      launch(0, 1, 200, 201, 4),
      launch(0, 1, 204, 205, 5),
      // The collectives, on one worker stream. 1 starts 2 ns after its launch
      // ends; 2 waits for 1 (ends 300) and starts 5 ns later; 3 starts the
      // moment 2 ends (its launch ended long before): 0; 4 and 5 run
      // on a second stream: 4 starts 7 ns after its launch, 5 waits for 4
      // (ends 260) and starts 3 ns later.
      collective(0, 2, 103, 300, 1, 0),
      collective(0, 2, 305, 400, 2, 1),
      collective(0, 2, 400, 410, 3, 2),
      collective(0, 3, 208, 260, 4, 3),
      collective(0, 3, 263, 280, 5, 4),
  }));
  EXPECT_EQ(fit.collectives, 5);
  EXPECT_EQ(fit.partitions, 5);
  EXPECT_EQ(fit.ranks, 1);
  EXPECT_EQ(fit.bursts, 2);
  ASSERT_TRUE(fit.partition_overhead.has_value());
  EXPECT_EQ(fit.partition_overhead->samples, 3);  // 4, 5, 6
  EXPECT_EQ(fit.partition_overhead->median, Duration(5));
  EXPECT_EQ(fit.partition_overhead->p10, Duration(4));
  EXPECT_EQ(fit.partition_overhead->p90, Duration(6));
  EXPECT_EQ(fit.schedule_overhead.samples, 5);  // 0, 2, 3, 5, 7
  EXPECT_EQ(fit.schedule_overhead.median, Duration(3));
  EXPECT_EQ(fit.schedule_overhead.p10, Duration(0));
  EXPECT_EQ(fit.schedule_overhead.p90, Duration(7));
}

TEST_F(SchedulerFitTest, NestedCallsKeepABurstAndOtherCallsBreakIt) {
  const auto fit = fit_scheduler_costs(trace({
      // Runtime launches of NCCL kernels, each with its driver call nested.
      launch(0, 9, 1000, 1010, 11, v1::ApiCall::RUNTIME),
      launch(0, 9, 1002, 1008, 11, v1::ApiCall::DRIVER),
      launch(0, 9, 1020, 1030, 12, v1::ApiCall::RUNTIME),
      launch(0, 9, 1022, 1028, 12, v1::ApiCall::DRIVER),
      // A compute kernel's launch between partitions 12 and 13: a break.
      launch(0, 9, 1040, 1045, 99, v1::ApiCall::RUNTIME),
      launch(0, 9, 1050, 1060, 13, v1::ApiCall::RUNTIME),
      // Another thread's work does not break thread 9's bursts.
      launch(0, 9, 1075, 1080, 14, v1::ApiCall::RUNTIME),
      cpu_op(0, 4, 1062, 1070),
      collective(0, 30, 1015, 1100, 11, 0),
      collective(0, 30, 1100, 1200, 12, 1),
      collective(0, 30, 1200, 1300, 13, 2),
      collective(0, 30, 1300, 1400, 14, 3),
  }));
  EXPECT_EQ(fit.partitions, 4);
  EXPECT_EQ(fit.bursts, 2);
  ASSERT_TRUE(fit.partition_overhead.has_value());
  EXPECT_EQ(fit.partition_overhead->samples, 2);  // 11 -> 12: 20 ns; 13 -> 14: 25 ns
  EXPECT_EQ(fit.partition_overhead->median, Duration(20));
  EXPECT_EQ(fit.partition_overhead->p90, Duration(25));
}

TEST_F(SchedulerFitTest, OnlyLinkedCollectivesArePartitions) {
  const auto fit = fit_scheduler_costs(trace({
      launch(0, 1, 100, 110, 1),
      launch(1, 1, 100, 110, 2),  // rank 1's call: not rank 0's collective 2
      collective(0, 2, 120, 200, 1, 0),
      collective(0, 2, 200, 300, 2, 1),  // no call of rank 0 with id 2
      collective(0, 2, 300, 400, 0, 2),  // no correlation id at all
  }));
  EXPECT_EQ(fit.collectives, 3);
  EXPECT_EQ(fit.partitions, 1);
  EXPECT_EQ(fit.schedule_overhead.median, Duration(10));
  // One launch per burst: the host cost is not measured.
  EXPECT_FALSE(fit.partition_overhead.has_value());
  EXPECT_EQ(fit.bursts, 0);
}

TEST_F(SchedulerFitTest, NoLinkedCollectiveIsAnError) {
  const auto p =
      trace({launch(0, 1, 100, 110, 1), collective(0, 2, 120, 200, 5, 0), cpu_op(0, 1, 0, 50)});
  try {
    fit_scheduler_costs(p);
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, HasSubstr("run.ssgdt"));
    EXPECT_THAT(what, HasSubstr("collective.correlation_id"));
    EXPECT_THAT(what, HasSubstr("none of its 1 collective(s) is linked"));
  }
  // A trace with no collective at all says so too.
  const auto empty = trace({cpu_op(0, 1, 0, 50)});
  EXPECT_THROW(fit_scheduler_costs(empty), InputError);
}

TEST_F(SchedulerFitTest, ATraceCutShortNeedsAllowTruncated) {
  std::vector<v1::Event> events;
  for (int i = 0; i < 40; ++i) {
    events.push_back(launch(0, 1, 1000 * i, 1000 * i + 2, static_cast<std::uint64_t>(i + 1)));
    events.push_back(collective(0, 2, 1000 * i + 5, 1000 * i + 50,
                                static_cast<std::uint64_t>(i + 1), static_cast<std::uint64_t>(i)));
  }
  const auto p = trace(events);
  const auto whole = std::filesystem::file_size(p);
  std::filesystem::resize_file(p, whole / 2);
  EXPECT_THROW(fit_scheduler_costs(p), InputError);
  const auto fit = fit_scheduler_costs(p, /*allow_truncated=*/true);
  EXPECT_GT(fit.partitions, 0);
  EXPECT_LT(fit.partitions, 40);
}

// The real capture: rank 0 of an MLP (8 x Linear(1024, 1024)) trained by two
// ranks over gloo on one 2-core machine, DDP buckets of 25 MiB cut into
// 256 KiB partitions, 5 profiled iterations (130 partitions each). The
// c10d calls come 5-6 us apart in a burst; gloo starts a queued partition a
// few microseconds after its worker frees.
TEST_F(SchedulerFitTest, RealCaptureOfPartitionsOverGloo) {
  const auto data = std::filesystem::path(SSGD_SOURCE_DIR) / "tests/data/pytorch";
  const auto imported = dir_ / "partitioned.ssgdt";
  trace::import_pytorch(data / "partitioned_mlp_256k_rank0.json.gz", imported);
  const auto fit = fit_scheduler_costs(imported);
  EXPECT_EQ(fit.collectives, 650);
  EXPECT_EQ(fit.partitions, 650);
  EXPECT_EQ(fit.ranks, 1);
  EXPECT_EQ(fit.bursts, 10);  // two buckets an iteration
  ASSERT_TRUE(fit.partition_overhead.has_value());
  EXPECT_EQ(fit.partition_overhead->samples, 640);
  EXPECT_EQ(fit.partition_overhead->median, Duration(6'000));
  EXPECT_EQ(fit.schedule_overhead.samples, 650);
  EXPECT_EQ(fit.schedule_overhead.median, Duration(6'000));
}

}  // namespace
}  // namespace ssgd::sim
