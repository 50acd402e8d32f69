// The CUPTI record decoder (tracer/cupti/cupti_record_decoder.h) on real
// CUPTI structs built in memory with known field values: every kind the
// tracer enables, marker pairing, context-to-device mapping, topology
// records, and a kind the decoder does not read (skipped and counted).
#include "tracer/cupti/cupti_record_decoder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace ssgd::tracer {
namespace {

const char* fake_api_name(ApiKind api, std::uint32_t cbid) {
  if (api == ApiKind::kRuntime && cbid == 211) return "cudaLaunchKernel_v7000";
  if (api == ApiKind::kDriver && cbid == 307) return "cuLaunchKernel";
  return nullptr;
}

template <typename T>
T zeroed() {
  T t;
  std::memset(&t, 0, sizeof t);
  return t;
}

class DecoderTest : public ::testing::Test {
 protected:
  template <typename T>
  DecodeStatus decode(const T& record) {
    return decoder_.decode(reinterpret_cast<const CUpti_Activity&>(record), out_);
  }
  template <typename A>
  const A& payload() {
    EXPECT_TRUE(std::holds_alternative<A>(out_.record.payload));
    return std::get<A>(out_.record.payload);
  }
  CuptiRecordDecoder decoder_{fake_api_name};
  DecodeOutput out_;
};

TEST_F(DecoderTest, ConcurrentKernel) {
  auto r = zeroed<CUpti_ActivityKernel10>();
  r.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  r.start = 1'000'100;
  r.end = 1'000'900;
  r.deviceId = 3;
  r.streamId = 14;
  r.gridX = 128; r.gridY = 2; r.gridZ = 1;
  r.blockX = 256; r.blockY = 1; r.blockZ = 4;
  r.correlationId = 77;
  r.name = "_Z6matmulPKfS0_Pfi";
  ASSERT_EQ(decode(r), DecodeStatus::kRecord);
  const auto& k = payload<KernelActivity>();
  EXPECT_EQ(k.device, 3);
  EXPECT_EQ(k.stream, 14u);
  EXPECT_EQ(k.start_ns, 1'000'100);
  EXPECT_EQ(k.end_ns, 1'000'900);
  EXPECT_EQ(k.correlation_id, 77u);
  EXPECT_EQ(k.grid, (std::array<std::int32_t, 3>{128, 2, 1}));
  EXPECT_EQ(k.block, (std::array<std::int32_t, 3>{256, 1, 4}));
  EXPECT_EQ(out_.record.name, "matmul(float const*, float const*, float*, int)");
}

TEST_F(DecoderTest, KernelNameThatIsNotMangledIsKept) {
  auto r = zeroed<CUpti_ActivityKernel10>();
  r.kind = CUPTI_ACTIVITY_KIND_KERNEL;
  r.start = 5;
  r.end = 6;
  r.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
  ASSERT_EQ(decode(r), DecodeStatus::kRecord);
  EXPECT_EQ(out_.record.name, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
}

TEST_F(DecoderTest, MemcpyHostToDevice) {
  auto r = zeroed<CUpti_ActivityMemcpy6>();
  r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  r.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  r.bytes = 1 << 20;
  r.start = 2'000;
  r.end = 9'000;
  r.deviceId = 1;
  r.streamId = 7;
  r.correlationId = 12;
  ASSERT_EQ(decode(r), DecodeStatus::kRecord);
  const auto& m = payload<MemcpyActivity>();
  EXPECT_EQ(m.kind, CopyKind::kHostToDevice);
  EXPECT_EQ(m.size_bytes, 1 << 20);
  EXPECT_EQ(m.device, 1);
  EXPECT_EQ(m.src_device, -1);
  EXPECT_EQ(m.dst_device, 1);
  EXPECT_EQ(m.stream, 7u);
  EXPECT_EQ(m.start_ns, 2'000);
  EXPECT_EQ(m.end_ns, 9'000);
  EXPECT_EQ(m.correlation_id, 12u);
}

TEST_F(DecoderTest, MemcpyKindsMapToTheTraceKinds) {
  const std::pair<std::uint8_t, CopyKind> cases[] = {
      {CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CopyKind::kDeviceToHost},
      {CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CopyKind::kDeviceToDevice},
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, CopyKind::kHostToHost},
      {CUPTI_ACTIVITY_MEMCPY_KIND_ATOH, CopyKind::kDeviceToHost},
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOA, CopyKind::kHostToDevice},
      {CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, CopyKind::kPeerToPeer},
      {CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, CopyKind::kUnknown}};
  for (const auto& [cupti, expected] : cases) {
    auto r = zeroed<CUpti_ActivityMemcpy6>();
    r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    r.copyKind = cupti;
    r.deviceId = 2;
    ASSERT_EQ(decode(r), DecodeStatus::kRecord);
    EXPECT_EQ(payload<MemcpyActivity>().kind, expected) << int{cupti};
  }
  auto r = zeroed<CUpti_ActivityMemcpy6>();
  r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  r.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  r.deviceId = 2;
  decode(r);
  EXPECT_EQ(payload<MemcpyActivity>().src_device, 2);
  EXPECT_EQ(payload<MemcpyActivity>().dst_device, -1);
}

TEST_F(DecoderTest, PeerToPeerMemcpy) {
  auto r = zeroed<CUpti_ActivityMemcpyPtoP4>();
  r.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  r.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  r.bytes = 4096;
  r.start = 10;
  r.end = 20;
  r.deviceId = 0;
  r.streamId = 3;
  r.srcDeviceId = 0;
  r.dstDeviceId = 5;
  r.correlationId = 99;
  ASSERT_EQ(decode(r), DecodeStatus::kRecord);
  const auto& m = payload<MemcpyActivity>();
  EXPECT_EQ(m.kind, CopyKind::kPeerToPeer);
  EXPECT_EQ(m.size_bytes, 4096);
  EXPECT_EQ(m.src_device, 0);
  EXPECT_EQ(m.dst_device, 5);
  EXPECT_EQ(m.device, 0);
  EXPECT_EQ(m.stream, 3u);
  EXPECT_EQ(m.start_ns, 10);
  EXPECT_EQ(m.end_ns, 20);
  EXPECT_EQ(m.correlation_id, 99u);
}

TEST_F(DecoderTest, Memset) {
  auto r = zeroed<CUpti_ActivityMemset4>();
  r.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  r.value = 0xab;
  r.bytes = 512;
  r.start = 30;
  r.end = 45;
  r.deviceId = 6;
  r.streamId = 8;
  r.correlationId = 5;
  ASSERT_EQ(decode(r), DecodeStatus::kRecord);
  const auto& m = payload<MemsetActivity>();
  EXPECT_EQ(m.device, 6);
  EXPECT_EQ(m.stream, 8u);
  EXPECT_EQ(m.start_ns, 30);
  EXPECT_EQ(m.end_ns, 45);
  EXPECT_EQ(m.size_bytes, 512);
  EXPECT_EQ(m.value, 0xabu);
  EXPECT_EQ(m.correlation_id, 5u);
}

TEST_F(DecoderTest, RuntimeAndDriverCallsGetTheirNames) {
  auto r = zeroed<CUpti_ActivityAPI>();
  r.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  r.cbid = 211;
  r.start = 100;
  r.end = 150;
  r.processId = 4242;
  r.threadId = 31337;
  r.correlationId = 77;
  ASSERT_EQ(decode(r), DecodeStatus::kRecord);
  const auto& a = payload<ApiCallActivity>();
  EXPECT_EQ(a.api, ApiKind::kRuntime);
  EXPECT_EQ(a.thread_id, 31337u);
  EXPECT_EQ(a.start_ns, 100);
  EXPECT_EQ(a.end_ns, 150);
  EXPECT_EQ(a.correlation_id, 77u);
  EXPECT_EQ(out_.record.name, "cudaLaunchKernel_v7000");

  r.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  r.cbid = 307;
  ASSERT_EQ(decode(r), DecodeStatus::kRecord);
  EXPECT_EQ(payload<ApiCallActivity>().api, ApiKind::kDriver);
  EXPECT_EQ(out_.record.name, "cuLaunchKernel");

  r.cbid = 9999;  // no name known: the record stays, with an empty name
  ASSERT_EQ(decode(r), DecodeStatus::kRecord);
  EXPECT_EQ(out_.record.name, "");
}

TEST_F(DecoderTest, SynchronizationTakesItsDeviceFromTheContextRecord) {
  auto c = zeroed<CUpti_ActivityContext3>();
  c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  c.contextId = 41;
  c.deviceId = 2;
  EXPECT_EQ(decode(c), DecodeStatus::kHeld);

  auto r = zeroed<CUpti_ActivitySynchronization2>();
  r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  r.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
  r.start = 500;
  r.end = 700;
  r.correlationId = 61;
  r.contextId = 41;
  r.streamId = 9;
  r.cudaEventId = 4;
  ASSERT_EQ(decode(r), DecodeStatus::kRecord);
  const auto& s = payload<SynchronizationActivity>();
  EXPECT_EQ(s.kind, SyncKind::kStreamWaitEvent);
  EXPECT_EQ(s.device, 2);
  EXPECT_EQ(s.stream, 9u);
  EXPECT_EQ(s.start_ns, 500);
  EXPECT_EQ(s.end_ns, 700);
  EXPECT_EQ(s.correlation_id, 61u);
  EXPECT_EQ(s.cuda_event_id, 4u);

  r.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  r.contextId = 1000;  // never described: device unknown
  r.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  r.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  ASSERT_EQ(decode(r), DecodeStatus::kRecord);
  const auto& s2 = payload<SynchronizationActivity>();
  EXPECT_EQ(s2.kind, SyncKind::kContextSynchronize);
  EXPECT_EQ(s2.device, -1);
  EXPECT_EQ(s2.stream, 0u);
  EXPECT_EQ(s2.cuda_event_id, 0u);
}

TEST_F(DecoderTest, CudaEvent) {
  auto r = zeroed<CUpti_ActivityCudaEvent2>();
  r.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
  r.correlationId = 15;
  r.contextId = 1;
  r.streamId = 22;
  r.eventId = 6;
  r.deviceId = 3;
  r.deviceTimestamp = 123'456;
  ASSERT_EQ(decode(r), DecodeStatus::kRecord);
  const auto& e = payload<CudaEventActivity>();
  EXPECT_EQ(e.event_id, 6u);
  EXPECT_EQ(e.device, 3);
  EXPECT_EQ(e.stream, 22u);
  EXPECT_EQ(e.timestamp_ns, 123'456);
  EXPECT_EQ(e.correlation_id, 15u);
}

TEST_F(DecoderTest, ExternalCorrelation) {
  auto r = zeroed<CUpti_ActivityExternalCorrelation>();
  r.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  r.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;
  r.externalId = 0x1234'5678'9abcULL;
  r.correlationId = 88;
  ASSERT_EQ(decode(r), DecodeStatus::kRecord);
  const auto& x = payload<ExternalCorrelationActivity>();
  EXPECT_EQ(x.kind, ExternalKind::kCustom1);
  EXPECT_EQ(x.external_id, 0x1234'5678'9abcULL);
  EXPECT_EQ(x.correlation_id, 88u);
}

TEST_F(DecoderTest, Device) {
  auto r = zeroed<CUpti_ActivityDevice5>();
  r.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  r.id = 1;
  r.globalMemorySize = 80ULL << 30;
  r.numMultiprocessors = 132;
  r.computeCapabilityMajor = 9;
  r.computeCapabilityMinor = 0;
  for (int i = 0; i < 16; ++i) r.uuid.bytes[i] = static_cast<char>(i + 1);
  r.name = "NVIDIA H100 80GB HBM3";
  ASSERT_EQ(decode(r), DecodeStatus::kRecord);
  const auto& d = payload<DeviceActivity>();
  EXPECT_EQ(d.device, 1);
  EXPECT_EQ(d.memory_bytes, 80LL << 30);
  EXPECT_EQ(d.sm_count, 132);
  EXPECT_EQ(d.compute_capability_major, 9);
  EXPECT_EQ(d.compute_capability_minor, 0);
  EXPECT_EQ(d.pci_domain, -1);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(d.uuid[i], i + 1);
  EXPECT_EQ(out_.record.name, "NVIDIA H100 80GB HBM3");
}

TEST_F(DecoderTest, NvLinkAndPcieBecomeTopologyLinks) {
  auto n = zeroed<CUpti_ActivityNvLink4>();
  n.kind = CUPTI_ACTIVITY_KIND_NVLINK;
  n.nvlinkVersion = 4;
  n.typeDev0 = CUPTI_DEV_TYPE_GPU;
  n.typeDev1 = CUPTI_DEV_TYPE_GPU;
  n.idDev0.uuidDev.bytes[0] = 7;
  n.idDev1.uuidDev.bytes[15] = 9;
  n.physicalNvLinkCount = 18;
  n.bandwidth = 25'000'000;  // kbytes/s
  n.nvswitchConnected = 1;
  ASSERT_EQ(decode(n), DecodeStatus::kLink);
  EXPECT_EQ(out_.link.kind, TopologyLink::Kind::kNvLink);
  EXPECT_EQ(out_.link.uuid0[0], 7);
  EXPECT_EQ(out_.link.uuid1[15], 9);
  EXPECT_EQ(out_.link.nvlink_version, 4u);
  EXPECT_EQ(out_.link.physical_links, 18u);
  EXPECT_EQ(out_.link.bandwidth_bytes_per_s, 25'000'000'000ULL);
  EXPECT_TRUE(out_.link.nvswitch);

  auto p = zeroed<CUpti_ActivityPcie>();
  p.kind = CUPTI_ACTIVITY_KIND_PCIE;
  p.type = CUPTI_PCIE_DEVICE_TYPE_GPU;
  p.id.devId = 3;
  p.domain = 1;
  p.pcieGeneration = 5;
  p.linkWidth = 16;
  p.upstreamBus = 0x3b;
  ASSERT_EQ(decode(p), DecodeStatus::kLink);
  EXPECT_EQ(out_.link.kind, TopologyLink::Kind::kPcieGpu);
  EXPECT_EQ(out_.link.id, 3u);
  EXPECT_EQ(out_.link.pci_domain, 1u);
  EXPECT_EQ(out_.link.pcie_generation, 5u);
  EXPECT_EQ(out_.link.link_width, 16u);
  EXPECT_EQ(out_.link.upstream_bus, 0x3bu);
  EXPECT_EQ(decoder_.counters().links, 2u);
}

// Directed links the decoder has ready, in order.
std::vector<LinkActivity> take_links(CuptiRecordDecoder& d) {
  std::vector<LinkActivity> links;
  ActivityRecord r;
  while (d.take_link(r)) links.push_back(std::get<LinkActivity>(r.payload));
  return links;
}

CUpti_ActivityDevice5 device_with_uuid(std::uint32_t ordinal, std::uint8_t tag) {
  auto d = zeroed<CUpti_ActivityDevice5>();
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = ordinal;
  d.uuid.bytes[0] = static_cast<char>(tag);
  return d;
}

CUpti_ActivityNvLink4 nvlink(std::uint8_t tag0, std::uint8_t tag1) {
  auto n = zeroed<CUpti_ActivityNvLink4>();
  n.kind = CUPTI_ACTIVITY_KIND_NVLINK;
  n.typeDev0 = CUPTI_DEV_TYPE_GPU;
  n.typeDev1 = CUPTI_DEV_TYPE_GPU;
  n.idDev0.uuidDev.bytes[0] = static_cast<char>(tag0);
  n.idDev1.uuidDev.bytes[0] = static_cast<char>(tag1);
  n.bandwidth = 50'000'000;  // kbytes/s
  return n;
}

TEST_F(DecoderTest, NvLinkEndsAreMappedToOrdinalsThroughTheDeviceRecords) {
  ASSERT_EQ(decode(device_with_uuid(0, 0xa0)), DecodeStatus::kRecord);
  ASSERT_EQ(decode(device_with_uuid(1, 0xb1)), DecodeStatus::kRecord);
  EXPECT_TRUE(take_links(decoder_).empty());
  ASSERT_EQ(decode(nvlink(0xb1, 0xa0)), DecodeStatus::kLink);
  const auto links = take_links(decoder_);
  ASSERT_EQ(links.size(), 2u);  // one per direction
  EXPECT_EQ(links[0].kind, LinkKind::kNvLink);
  EXPECT_EQ(links[0].src_device, 1);
  EXPECT_EQ(links[0].dst_device, 0);
  EXPECT_EQ(links[0].bandwidth_bytes_per_s, 50'000'000'000);
  EXPECT_EQ(links[1].src_device, 0);
  EXPECT_EQ(links[1].dst_device, 1);
}

TEST_F(DecoderTest, AnNvLinkWaitsForTheDeviceRecordsOfItsGpus) {
  auto n = nvlink(0xa0, 0xb1);
  n.nvswitchConnected = 1;
  ASSERT_EQ(decode(n), DecodeStatus::kLink);
  EXPECT_TRUE(take_links(decoder_).empty());
  EXPECT_EQ(decoder_.pending_links(), 1u);
  ASSERT_EQ(decode(device_with_uuid(4, 0xa0)), DecodeStatus::kRecord);
  EXPECT_TRUE(take_links(decoder_).empty());  // one end still unknown
  ASSERT_EQ(decode(device_with_uuid(5, 0xb1)), DecodeStatus::kRecord);
  const auto links = take_links(decoder_);
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[0].kind, LinkKind::kNvSwitch);
  EXPECT_EQ(links[0].src_device, 4);
  EXPECT_EQ(links[0].dst_device, 5);
  EXPECT_EQ(decoder_.pending_links(), 0u);
}

TEST_F(DecoderTest, AnNvLinkToAGpuThisProcessCannotSeeStaysUnwritten) {
  ASSERT_EQ(decode(device_with_uuid(0, 0xa0)), DecodeStatus::kRecord);
  ASSERT_EQ(decode(nvlink(0xa0, 0xee)), DecodeStatus::kLink);  // 0xee: hidden GPU
  EXPECT_TRUE(take_links(decoder_).empty());
  EXPECT_EQ(decoder_.pending_links(), 1u);
  for (std::size_t i = 0; i < CuptiRecordDecoder::kMaxPendingLinks; ++i) decode(nvlink(0xa0, 0xee));
  EXPECT_EQ(decoder_.pending_links(), CuptiRecordDecoder::kMaxPendingLinks);
  EXPECT_EQ(decoder_.counters().unmapped_links, 1u);
}

TEST_F(DecoderTest, AnNvLinkToACpuEndsAtTheHost) {
  ASSERT_EQ(decode(device_with_uuid(2, 0xa0)), DecodeStatus::kRecord);
  auto n = nvlink(0xa0, 0);
  n.typeDev1 = CUPTI_DEV_TYPE_NPU;
  n.idDev1.npu.index = 0;
  ASSERT_EQ(decode(n), DecodeStatus::kLink);
  const auto links = take_links(decoder_);
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[0].src_device, 2);
  EXPECT_EQ(links[0].dst_device, -1);
}

TEST_F(DecoderTest, APcieGpuRecordLinksItsOrdinalToTheHostAndBridgesAreSkipped) {
  auto p = zeroed<CUpti_ActivityPcie>();
  p.kind = CUPTI_ACTIVITY_KIND_PCIE;
  p.type = CUPTI_PCIE_DEVICE_TYPE_GPU;
  p.id.devId = 3;
  p.pcieGeneration = 4;
  p.linkWidth = 16;
  ASSERT_EQ(decode(p), DecodeStatus::kLink);
  const auto links = take_links(decoder_);
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[0].kind, LinkKind::kPcie);
  EXPECT_EQ(links[0].src_device, 3);
  EXPECT_EQ(links[0].dst_device, -1);
  EXPECT_EQ(links[1].src_device, -1);
  EXPECT_EQ(links[1].dst_device, 3);
  // 16 lanes x 16 GT/s x 128/130 / 8 bits.
  EXPECT_EQ(links[0].bandwidth_bytes_per_s, 31'507'692'307);

  auto b = zeroed<CUpti_ActivityPcie>();
  b.kind = CUPTI_ACTIVITY_KIND_PCIE;
  b.type = CUPTI_PCIE_DEVICE_TYPE_BRIDGE;
  b.id.bridgeId = 9;
  ASSERT_EQ(decode(b), DecodeStatus::kLink);
  EXPECT_TRUE(take_links(decoder_).empty());
  EXPECT_EQ(decoder_.counters().pcie_bridges, 1u);
}

TEST(PcieBandwidthTest, LanesTimesRateTimesEncodingOverEightBits) {
  EXPECT_EQ(pcie_bandwidth_bytes_per_s(1, 1), 250'000'000);
  EXPECT_EQ(pcie_bandwidth_bytes_per_s(2, 8), 4'000'000'000);
  EXPECT_EQ(pcie_bandwidth_bytes_per_s(3, 16), 15'753'846'153);
  EXPECT_EQ(pcie_bandwidth_bytes_per_s(5, 16), 63'015'384'615);
  EXPECT_EQ(pcie_bandwidth_bytes_per_s(6, 16), 121'000'000'000);
  EXPECT_EQ(pcie_bandwidth_bytes_per_s(0, 16), 0);
  EXPECT_EQ(pcie_bandwidth_bytes_per_s(7, 16), 0);
  EXPECT_EQ(pcie_bandwidth_bytes_per_s(4, 0), 0);
}

CUpti_ActivityMarker2 marker(std::uint32_t id, CUpti_ActivityFlag flags, std::uint64_t t,
                             const char* name, const char* domain) {
  auto m = zeroed<CUpti_ActivityMarker2>();
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = flags;
  m.timestamp = t;
  m.id = id;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.threadId = 555;
  m.name = name;
  m.domain = domain;
  return m;
}

TEST_F(DecoderTest, MarkerStartAndEndBecomeOneRange) {
  std::string name = "iteration/12";
  auto start = marker(3, CUPTI_ACTIVITY_FLAG_MARKER_START, 1'000, name.c_str(), "ssgd");
  EXPECT_EQ(decode(start), DecodeStatus::kHeld);
  name = "overwritten";  // the decoder copied the name at the start
  auto other = marker(4, CUPTI_ACTIVITY_FLAG_MARKER_START, 1'100, "forward/conv1", nullptr);
  EXPECT_EQ(decode(other), DecodeStatus::kHeld);
  auto end = marker(3, CUPTI_ACTIVITY_FLAG_MARKER_END, 9'000, nullptr, nullptr);
  ASSERT_EQ(decode(end), DecodeStatus::kRecord);
  const auto& m = payload<MarkerActivity>();
  EXPECT_EQ(m.start_ns, 1'000);
  EXPECT_EQ(m.end_ns, 9'000);
  EXPECT_EQ(m.thread_id, 555u);
  EXPECT_EQ(m.domain.view(), "ssgd");
  EXPECT_EQ(out_.record.name, "iteration/12");

  auto orphan = marker(77, CUPTI_ACTIVITY_FLAG_MARKER_END, 9'500, nullptr, nullptr);
  EXPECT_EQ(decode(orphan), DecodeStatus::kUnmatched);
  EXPECT_EQ(decoder_.counters().unmatched_markers, 1u);

  auto instant = marker(8, CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 4'000, "checkpoint", "");
  ASSERT_EQ(decode(instant), DecodeStatus::kRecord);
  EXPECT_EQ(payload<MarkerActivity>().start_ns, 4'000);
  EXPECT_EQ(payload<MarkerActivity>().end_ns, 4'000);
  EXPECT_EQ(out_.record.name, "checkpoint");
}

TEST_F(DecoderTest, UnknownKindIsSkippedAndCounted) {
  // A record of a kind the decoder does not read (CUPTI_ACTIVITY_KIND_OVERHEAD),
  // and a kind number no CUPTI defines yet.
  auto r = zeroed<CUpti_ActivityOverhead3>();
  r.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  EXPECT_EQ(decode(r), DecodeStatus::kUnknownKind);
  auto future = zeroed<CUpti_ActivityAPI>();
  future.kind = static_cast<CUpti_ActivityKind>(4000);
  EXPECT_EQ(decode(future), DecodeStatus::kUnknownKind);
  EXPECT_EQ(decoder_.counters().unknown_kinds, 2u);
  EXPECT_EQ(decoder_.counters().last_unknown_kind, 4000u);
  EXPECT_EQ(decoder_.counters().decoded, 0u);
}

TEST_F(DecoderTest, CountsDecodedRecords) {
  auto r = zeroed<CUpti_ActivityMemset4>();
  r.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  for (int i = 0; i < 3; ++i) decode(r);
  EXPECT_EQ(decoder_.counters().decoded, 3u);
}

}  // namespace
}  // namespace ssgd::tracer
