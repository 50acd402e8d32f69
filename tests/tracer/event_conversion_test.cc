// Activity records to ssgd.trace.v1 events (tracer/core/event_conversion.h)
// and the timestamp rules (tracer/core/timestamp_check.h).
#include "tracer/core/event_conversion.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/tracer/mock_activity_source.h"
#include "tracer/core/timestamp_check.h"

namespace ssgd::tracer {
namespace {

namespace v1 = trace::v1;

TEST(EventConversionTest, EveryKindBecomesItsOwnPayload) {
  std::set<int> payloads;
  std::string name;
  for (std::uint64_t id = 0; id < kActivityKindCount; ++id) {
    const ActivityRecord r = testing::synthetic_record(id, 1'000'000, name);
    v1::Event e;
    to_event(r, 5, e);
    EXPECT_EQ(e.rank(), 5);
    EXPECT_NE(e.payload_case(), v1::Event::PAYLOAD_NOT_SET) << activity_kind_name(r.kind());
    payloads.insert(e.payload_case());
    EXPECT_EQ(testing::synthetic_id(e), id) << activity_kind_name(r.kind());
  }
  EXPECT_EQ(payloads.size(), kActivityKindCount);
}

TEST(EventConversionTest, ALinkNamesThisRanksHostAtBothEnds) {
  LinkActivity l;
  l.kind = LinkKind::kNvSwitch;
  l.src_device = 2;
  l.dst_device = -1;
  l.bandwidth_bytes_per_s = 450'000'000'000;
  v1::Event e;
  to_event(ActivityRecord{l, {}}, 6, e);
  ASSERT_TRUE(e.has_link());
  EXPECT_EQ(e.rank(), 6);
  EXPECT_EQ(e.link().src_host(), 0);
  EXPECT_EQ(e.link().dst_host(), 0);
  EXPECT_EQ(e.link().src_device(), 2);
  EXPECT_EQ(e.link().dst_device(), -1);
  EXPECT_EQ(e.link().kind(), v1::Link::NVSWITCH);
  EXPECT_EQ(e.link().bandwidth_bytes_per_s(), 450e9);
  EXPECT_EQ(check_timestamps(ActivityRecord{l, {}}, SessionWindow{1, 2}), TimestampVerdict::kNoTime);
}

TEST(EventConversionTest, FieldsLandWhereTheProtoSays) {
  std::string name;
  v1::Event e;
  to_event(testing::synthetic_record(0, 1'000'000, name), 0, e);
  EXPECT_EQ(e.kernel().name(), "void sgemm_kernel<float, 128>(int) #0");
  EXPECT_EQ(e.kernel().device(), 1);
  EXPECT_EQ(e.kernel().stream(), 7u);
  EXPECT_EQ(e.kernel().start_ns(), 1'000'000);
  EXPECT_EQ(e.kernel().end_ns(), 1'000'500);
  EXPECT_EQ(e.kernel().block_x(), 256);

  to_event(testing::synthetic_record(1 + kActivityKindCount, 0, name), 0, e);
  ASSERT_TRUE(e.has_memcpy());
  EXPECT_EQ(e.memcpy().kind(), v1::Memcpy::HTOD);
  EXPECT_EQ(e.memcpy().src_device(), -1);
  to_event(testing::synthetic_record(1, 0, name), 0, e);
  EXPECT_EQ(e.memcpy().kind(), v1::Memcpy::PTOP);
  EXPECT_EQ(e.memcpy().src_device(), 0);
  EXPECT_EQ(e.memcpy().dst_device(), 1);

  to_event(testing::synthetic_record(8, 0, name), 2, e);
  ASSERT_TRUE(e.has_collective());
  const auto& c = e.collective();
  EXPECT_EQ(c.op(), v1::Collective::ALL_REDUCE);
  EXPECT_EQ(c.communicator_id(), 0xC0FFEEu);
  EXPECT_EQ(c.rank(), 1);
  EXPECT_EQ(c.nranks(), 4);
  EXPECT_EQ(c.count(), 1024);
  EXPECT_EQ(c.datatype(), "float32");
  EXPECT_EQ(c.sequence_number(), 8u);
  EXPECT_EQ(c.algorithm(), "Ring");
  EXPECT_EQ(c.protocol(), "LL128");
  EXPECT_EQ(c.channels(), 2);

  to_event(testing::synthetic_record(7, 0, name), 0, e);
  ASSERT_TRUE(e.has_device());
  EXPECT_EQ(e.device().name(), "Tesla V100-SXM2-16GB");
  EXPECT_EQ(e.device().uuid(), "GPU-5e2f0001-0203-0405-0607-08090a0b0c0d");
  EXPECT_EQ(e.device().pci_bus_id(), "0000:3b:00.0");

  to_event(testing::synthetic_record(9, 0, name), 0, e);
  EXPECT_EQ(e.marker().name(), "forward/conv1");
  EXPECT_EQ(e.marker().domain(), "ssgd");
}

TEST(EventConversionTest, CollectiveOpsRoundTripThroughTheTraceVocabulary) {
  for (const CollectiveOp op :
       {CollectiveOp::kUnknown, CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter,
        CollectiveOp::kAllGather, CollectiveOp::kBroadcast, CollectiveOp::kReduce,
        CollectiveOp::kAllToAll, CollectiveOp::kSend, CollectiveOp::kRecv}) {
    CollectiveActivity a;
    a.op = op;
    v1::Event e;
    to_event(ActivityRecord{a, {}}, 0, e);
    EXPECT_EQ(collective_op_from_proto(e.collective().op()), op);
  }
}

TEST(EventConversionTest, UnknownUuidAndPciAddressAreEmpty) {
  EXPECT_EQ(format_gpu_uuid({}), "");
  EXPECT_EQ(format_pci_bus_id(-1, 0x3b, 0), "");
}

TEST(EventConversionTest, ShortTextCutsLongNames) {
  CollectiveActivity c;
  c.datatype = "a_datatype_name_longer_than_twenty_four_bytes";
  EXPECT_EQ(c.datatype.view(), "a_datatype_name_longer_");
}

TEST(TimestampCheckTest, VerdictsForEachRule) {
  const SessionWindow window{1000, 1'000'000};
  auto kernel = [](std::int64_t start, std::int64_t end) {
    KernelActivity k;
    k.start_ns = start;
    k.end_ns = end;
    return ActivityRecord{k, {}};
  };
  EXPECT_EQ(check_timestamps(kernel(2000, 3000), window), TimestampVerdict::kValid);
  EXPECT_EQ(check_timestamps(kernel(2000, 2000), window), TimestampVerdict::kValid);
  EXPECT_EQ(check_timestamps(kernel(0, 3000), window), TimestampVerdict::kZero);
  EXPECT_EQ(check_timestamps(kernel(2000, 0), window), TimestampVerdict::kZero);
  EXPECT_EQ(check_timestamps(kernel(3000, 2000), window), TimestampVerdict::kEndBeforeStart);
  EXPECT_EQ(check_timestamps(kernel(999, 3000), window), TimestampVerdict::kOutsideWindow);
  EXPECT_EQ(check_timestamps(kernel(2000, 1'000'001), window), TimestampVerdict::kOutsideWindow);
  EXPECT_EQ(check_timestamps(ActivityRecord{ExternalCorrelationActivity{}, {}}, window),
            TimestampVerdict::kNoTime);
  EXPECT_EQ(check_timestamps(ActivityRecord{DeviceActivity{}, {}}, window),
            TimestampVerdict::kNoTime);
  CudaEventActivity ev;
  ev.timestamp_ns = 0;
  EXPECT_EQ(check_timestamps(ActivityRecord{ev, {}}, window), TimestampVerdict::kZero);
}

}  // namespace
}  // namespace ssgd::tracer
