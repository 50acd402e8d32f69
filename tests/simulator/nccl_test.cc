// NCCL's communicator model (simulator/nccl): its tables and list syntax,
// the channels it builds on each preset, its tuning model, the traffic of
// its algorithms, and the answers to the what-ifs users ask first, each
// against first principles (bytes over the links that carry them).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "simulator/input/scenario_inputs.h"
#include "simulator/nccl/nccl_communicator.h"
#include "simulator/network/comm_model.h"
#include "simulator/platform/link_preset.h"
#include "simulator/platform/platform_preset.h"
#include "simulator/scenario/scenario.h"
#include "simulator/scenario/scenario_network.h"

namespace ssgd::sim::nccl {
namespace {

using ::testing::HasSubstr;

constexpr double kGiB = 1024.0 * 1024 * 1024;

// A communicator over `nodes` whole nodes of `preset` (changed by `edit`).
struct Job {
  std::unique_ptr<Platform> platform;
  std::unique_ptr<Communicator> comm;
  std::int64_t ranks = 0;
};

Job job(const std::string& preset, std::int64_t nodes, Settings settings = {},
        const std::function<void(PlatformSpec&)>& edit = {}) {
  PlatformSpec spec = find_platform_preset(preset)->make();
  if (edit) edit(spec);
  Job j;
  j.platform = std::make_unique<Platform>(spec, nodes);
  std::vector<VertexId> ranks;
  for (std::int64_t n = 0; n < nodes; ++n) {
    for (std::int64_t g = 0; g < spec.node.gpus; ++g) ranks.push_back(j.platform->gpu(n, g));
  }
  j.ranks = static_cast<std::int64_t>(ranks.size());
  j.comm = std::make_unique<Communicator>(*j.platform, ranks, spec.node.gpus, settings);
  return j;
}

// nccl-tests' bus bandwidth of an all-reduce of `bytes`, GB/s.
double busbw(const Job& j, double bytes, Func f = Func::kAllReduce) {
  const Choice c = j.comm->choose(f, bytes);
  const auto p = static_cast<double>(j.ranks);
  const double factor = f == Func::kAllReduce ? 2 * (p - 1) / p : (p - 1) / p;
  return bytes / (static_cast<double>(c.time.ns()) * 1e-9) * factor / 1e9;
}

TEST(NcclTables, NamesAsNcclWritesThem) {
  for (int a = 0; a < kAlgoCount; ++a) EXPECT_EQ(parse_algo(to_string(static_cast<Algo>(a))), static_cast<Algo>(a));
  for (int p = 0; p < kProtoCount; ++p) EXPECT_EQ(parse_proto(to_string(static_cast<Proto>(p))), static_cast<Proto>(p));
  for (int f = 0; f < kFuncCount; ++f) EXPECT_EQ(parse_func(to_string(static_cast<Func>(f))), static_cast<Func>(f));
  EXPECT_EQ(parse_algo("nvlstree"), Algo::kNvlsTree);  // any case
  EXPECT_EQ(parse_algo("ring "), std::nullopt);
  EXPECT_EQ(log2i(1), 0);
  EXPECT_EQ(log2i(1023), 9);
  EXPECT_EQ(log2i(0), -1);
  EXPECT_DOUBLE_EQ(tree_correction(Proto::kSimple, 16 << 20), 0.7);  // log2(16 MiB / 64) = 18
  EXPECT_DOUBLE_EQ(tree_correction(Proto::kSimple, std::int64_t{1} << 40), 1.0);
}

TEST(NcclTables, ListsParseAsNcclAlgoAndNcclProtoDo) {
  // The examples of tuning.cc's parseList.
  Enabled e;
  restrict_algorithms(e, "ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:ring");
  const auto on = [&e](Func f, Algo a) { return e.algo[static_cast<int>(f)][static_cast<int>(a)]; };
  EXPECT_TRUE(on(Func::kAllGather, Algo::kRing));
  EXPECT_FALSE(on(Func::kAllGather, Algo::kTree));
  EXPECT_TRUE(on(Func::kAllReduce, Algo::kTree));
  EXPECT_FALSE(on(Func::kAllReduce, Algo::kRing));
  EXPECT_TRUE(on(Func::kBroadcast, Algo::kRing));
  EXPECT_FALSE(on(Func::kBroadcast, Algo::kCollNetDirect));
  Enabled p;
  restrict_protocols(p, "^LL128;allreduce:LL128");
  EXPECT_TRUE(p.proto[static_cast<int>(Func::kAllGather)][static_cast<int>(Proto::kSimple)]);
  EXPECT_FALSE(p.proto[static_cast<int>(Func::kAllGather)][static_cast<int>(Proto::kLL128)]);
  EXPECT_TRUE(p.proto[static_cast<int>(Func::kAllReduce)][static_cast<int>(Proto::kLL128)]);
  EXPECT_FALSE(p.proto[static_cast<int>(Func::kAllReduce)][static_cast<int>(Proto::kLL)]);
  const auto error = [](std::string_view list, bool algorithms) {
    Enabled x;
    try {
      algorithms ? restrict_algorithms(x, list) : restrict_protocols(x, list);
    } catch (const std::invalid_argument& failure) {
      return std::string(failure.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(error("ring,rings", true), "unknown algorithm 'rings' in 'ring,rings'");
  EXPECT_THAT(error("allgahter:ring", true), HasSubstr("unknown function 'allgahter'"));
  EXPECT_THAT(error("ring;tree", true), HasSubstr("needs a function prefix"));
  EXPECT_EQ(error("LL64", false), "unknown protocol 'LL64' in 'LL64'");
}

// The channels NCCL builds, as its logs print them ("16 coll channels, 16
// nvls channels" between H100 nodes; NVIDIA/nccl issue 1041: execution
// channels are twice the search channels).
TEST(NcclSystem, ChannelsOnThePresets) {
  struct Case {
    std::string preset;
    std::int64_t nodes;
    int nics;  // 0: the preset's
    int search, coll, nvls;
    double speed;
  };
  const std::vector<Case> cases = {
      {"hgx_h100", 2, 0, 8, 16, 16, 48},  // a channel per NDR NIC at 48 GB/s
      {"hgx_h100", 1, 0, 12, 24, 16, 30},  // NVLink: 6 x 60 GB/s, duplicated
      {"dgx_a100", 2, 0, 8, 16, 0, 24},   // a channel per HDR NIC at 24 GB/s
      {"dgx_a100", 2, 4, 4, 8, 0, 24},    // four NICs: four channels
      {"dgx_a100", 1, 0, 12, 24, 0, 20},
      {"hgx_h100", 2, 1, 2, 4, 0, 24},    // one NIC: one channel at 48, duplicated; no NVLS heads
      {"dgx_b200", 1, 0, 16, 32, 24, 45},  // NVLS_NCHANNELS_SM100_NVL
      {"dgx_b200", 2, 0, 8, 16, 32, 48},   // ncclNvlsTreeSm100Tuning: 2 nodes of 50 GB/s NICs
      {"dgx_b200", 4, 0, 8, 16, 24, 48},   // and more, the NICs on the GPUs' switches
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.preset + " " + std::to_string(c.nodes) + " nodes, nics " + std::to_string(c.nics));
    const Job j = job(c.preset, c.nodes, {}, [&](PlatformSpec& s) {
      if (c.nics > 0) s.node.nics = c.nics;
    });
    EXPECT_EQ(j.comm->graphs().ring.channels, c.search);
    EXPECT_EQ(j.comm->graphs().coll_channels, c.coll);
    EXPECT_EQ(j.comm->graphs().nvls_channels, c.nvls);
    EXPECT_DOUBLE_EQ(j.comm->graphs().ring.bw_inter, c.speed);
  }
  // NCCL_MIN/MAX_NCHANNELS.
  Settings s;
  s.channels = 24;
  EXPECT_EQ(job("hgx_h100", 2, s).comm->graphs().coll_channels, 24);
}

// nvls.cc's NVLS tuning and enqueue.cc's NVLS chunks.
TEST(NcclTables, NvlsChunksAsNcclSetsThem) {
  const NvlsTuning h1 = nvls_tuning(GpuArch::kHopper, 1, 8, 0, true);
  EXPECT_EQ(h1.channels, 16);
  EXPECT_EQ(h1.chunk, 128 * 1024);
  EXPECT_EQ(h1.tree_max_chunk, 128 * 1024);
  EXPECT_EQ(nvls_tuning(GpuArch::kHopper, 4, 8, 50, true).tree_max_chunk, 64 * 1024);
  const NvlsTuning b2 = nvls_tuning(GpuArch::kBlackwell, 2, 8, 50, true);
  EXPECT_EQ(b2.channels, 32);
  EXPECT_EQ(b2.tree_max_chunk, 64 * 1024);
  EXPECT_EQ(nvls_tuning(GpuArch::kBlackwell, 2, 8, 50, false).tree_max_chunk, 128 * 1024);
  const NvlsTuning b4 = nvls_tuning(GpuArch::kBlackwell, 4, 8, 100, true);
  EXPECT_EQ(b4.channels, 24);
  EXPECT_EQ(b4.chunk, 256 * 1024);
  // NVLS: 128 KiB, halved below 64 rounds of 128 concurrent 128 KiB chunks
  // (1 GiB), 32 KiB below 8 rounds of 64 KiB, 16 KiB below 2 of 32 KiB.
  EXPECT_EQ(nvls_call_chunk(Algo::kNvls, h1, 1, kGiB, 128, 0), 128 * 1024);
  EXPECT_EQ(nvls_call_chunk(Algo::kNvls, h1, 1, kGiB - 1, 128, 0), 64 * 1024);
  EXPECT_EQ(nvls_call_chunk(Algo::kNvls, h1, 1, 64 << 20, 128, 0), 64 * 1024);
  EXPECT_EQ(nvls_call_chunk(Algo::kNvls, h1, 1, (64 << 20) - 1, 128, 0), 32 * 1024);
  EXPECT_EQ(nvls_call_chunk(Algo::kNvls, h1, 1, 1 << 20, 128, 0), 16 * 1024);
  // NVLS trees: 64 KiB below 4 rounds, 32 KiB below one.
  EXPECT_EQ(nvls_call_chunk(Algo::kNvlsTree, h1, 2, 64 << 20, 128, 0), 128 * 1024);
  EXPECT_EQ(nvls_call_chunk(Algo::kNvlsTree, h1, 2, 32 << 20, 128, 0), 64 * 1024);
  EXPECT_EQ(nvls_call_chunk(Algo::kNvlsTree, h1, 2, 4 << 20, 128, 0), 32 * 1024);
}

// NVLS pays its pipeline's fill: two rounds of 128 channel-head chunks
// beyond the data's own time on one H100 node, the whole call three times
// over when it is smaller than a round; rings pay none.
TEST(NcclTuner, NvlsPaysItsPipelinesFill) {
  const Job j = job("hgx_h100", 1);
  const Choice big = j.comm->choose(Func::kAllReduce, 8 * kGiB);
  ASSERT_EQ(big.algo, Algo::kNvls);
  const double data_ns = static_cast<double>((big.time - big.latency - big.fill).ns());
  // 8 GiB: 128 KiB chunks, a round of 16 MiB.
  EXPECT_NEAR(static_cast<double>(big.fill.ns()), 2 * data_ns * (16.0 * (1 << 20)) / (8 * kGiB), 2);
  const Choice small = j.comm->choose(Func::kAllReduce, 2 << 20);
  ASSERT_EQ(small.algo, Algo::kNvls);
  // 2 MiB: 16 KiB chunks, a round of 2 MiB, all of the call.
  EXPECT_NEAR(static_cast<double>(small.fill.ns()),
              2 * static_cast<double>((small.time - small.latency - small.fill).ns()), 2);
  Settings ring;
  ring.algorithms = "Ring";
  EXPECT_EQ(job("hgx_h100", 1, ring).comm->choose(Func::kAllReduce, 2 << 20).fill, Duration::zero());
}

// Between nodes each ring channel keeps to one rail: its crossing leaves and
// enters every node by the same NIC index, and the channels spread evenly
// over the NICs.
TEST(NcclTraffic, RingChannelsStayOnTheirRailsAndShareTheNics) {
  for (const std::string preset : {"hgx_h100", "dgx_a100"}) {
    SCOPED_TRACE(preset);
    const Job j = job(preset, 4);
    const Platform& p = *j.platform;
    const int nc = j.comm->graphs().coll_channels;
    const Traffic t = j.comm->traffic(Func::kAllReduce, Algo::kRing, nc);
    std::map<std::pair<std::int64_t, std::int32_t>, double> out_of_nic;  // (node, nic) -> bytes
    double crossing = 0;
    for (const RoutedTransfer& x : t.transfers) {
      if (p.node_of(x.src) == p.node_of(x.dst)) continue;
      ASSERT_GE(x.via.src_nic, 0);
      // Same rail on both ends but where an odd count of nodes wraps.
      if (!(p.node_of(x.src) == 3 && p.node_of(x.dst) == 0)) {
        EXPECT_EQ(x.via.src_nic, x.via.dst_nic);
      }
      out_of_nic[{p.node_of(x.src), x.via.src_nic}] += x.bytes;
      crossing += x.bytes;
    }
    // Each channel crosses each node boundary once with 2(P-1)/P of its
    // share: 4 boundaries x 2(P-1)/P of the buffer in all.
    const double pd = static_cast<double>(j.ranks);
    EXPECT_NEAR(crossing, 4 * 2 * (pd - 1) / pd, 1e-9);
    ASSERT_EQ(out_of_nic.size(), 4u * 8u);  // every NIC of every node
    for (const auto& [nic, bytes] : out_of_nic) EXPECT_NEAR(bytes, 2 * (pd - 1) / pd / 8, 1e-9);
  }
}

TEST(NcclTraffic, NvlsSendsEachGpusDataToTheSwitchOnce) {
  const Job j = job("hgx_h100", 1);
  const Traffic t = j.comm->traffic(Func::kAllReduce, Algo::kNvls, 16);
  ASSERT_EQ(t.transfers.size(), 16u);  // each GPU to the switch and back
  for (const RoutedTransfer& x : t.transfers) {
    EXPECT_TRUE(x.nvls);
    EXPECT_DOUBLE_EQ(x.bytes, 1 + 1.0 / 8);
  }
  const Traffic ag = j.comm->traffic(Func::kAllGather, Algo::kNvls, 16);
  double up = 0, down = 0;
  for (const RoutedTransfer& x : ag.transfers) {
    (j.platform->local_gpu(x.src) >= 0 ? up : down) += x.bytes;
  }
  EXPECT_DOUBLE_EQ(up, 1.0);    // each GPU its eighth
  EXPECT_DOUBLE_EQ(down, 8.0);  // each GPU the whole output
}

TEST(NcclTuner, LatenciesAsNcclWorksThemOut) {
  const Job j = job("hgx_h100", 2);
  const Tuner& t = j.comm->tuner();
  // Ring, Simple, all-reduce, 16 ranks on 2 nodes (tuning.cc): base 8.4 +
  // (30 - 2) x max(NVLink 3.4, 3 x net overhead 1.0) + 2 x NET 14.0.
  EXPECT_NEAR(t.latency_us(Func::kAllReduce, Algo::kRing, Proto::kSimple), 8.4 + 28 * 3.4 + 2 * 14, 1e-9);
  // ... 1.4 times past 64 B a rank and channel (the "plateau").
  EXPECT_NEAR(t.call_latency_us(Func::kAllReduce, Algo::kRing, Proto::kSimple, 1e9),
              1.4 * (8.4 + 28 * 3.4 + 2 * 14), 1e-9);
  // Tree, LL: 6.8 + 2 x (7 x 0.6 + log2(2) x 5.0).
  EXPECT_NEAR(t.latency_us(Func::kAllReduce, Algo::kTree, Proto::kLL), 6.8 + 2 * (7 * 0.6 + 5.0), 1e-9);
  // NVLSTree: 0 + NVLink 25 + 2 x log2(2) x NET 20.9.
  EXPECT_NEAR(t.latency_us(Func::kAllReduce, Algo::kNvlsTree, Proto::kSimple), 25 + 2 * 20.9, 1e-9);
  // NVLS and NVLSTree run Simple only; NVLS between nodes needs CollNet; PAT
  // needs one GPU a node; trees run all-reduce only.
  EXPECT_FALSE(t.available(Func::kAllReduce, Algo::kNvls, Proto::kSimple));
  EXPECT_FALSE(t.available(Func::kAllReduce, Algo::kNvlsTree, Proto::kLL));
  EXPECT_FALSE(t.available(Func::kAllGather, Algo::kPat, Proto::kSimple));
  EXPECT_FALSE(t.available(Func::kAllGather, Algo::kTree, Proto::kSimple));
  EXPECT_TRUE(t.available(Func::kAllReduce, Algo::kNvlsTree, Proto::kSimple));
  // Fewer channels for small calls: Simple's threshold is 64 B a thread of
  // 512, so 16 channels from 512 KiB.
  EXPECT_EQ(t.channels(Func::kAllReduce, Algo::kRing, Proto::kSimple, 512 << 10), 16);
  EXPECT_EQ(t.channels(Func::kAllReduce, Algo::kRing, Proto::kSimple, 64 << 10), 2);
  EXPECT_EQ(t.channels(Func::kAllReduce, Algo::kRing, Proto::kSimple, 8), 1);
}

TEST(NcclTuner, Ll128NeedsNvlinkInsideTheNode) {
  // PCIe between the GPUs: NCCL leaves LL128 off (typeIntra above NVB).
  const Job pcie = job("v100_pcie_4x_ib100", 2);
  EXPECT_FALSE(pcie.comm->tuner().available(Func::kAllReduce, Algo::kRing, Proto::kLL128));
  EXPECT_TRUE(pcie.comm->tuner().available(Func::kAllReduce, Algo::kRing, Proto::kLL));
  const Job nvlink = job("dgx_a100", 2);
  EXPECT_TRUE(nvlink.comm->tuner().available(Func::kAllReduce, Algo::kRing, Proto::kLL128));
}

// The what-ifs users ask first, against first principles: a ring's bus
// bandwidth is what its busiest link carries, busbw = the link's rate x the
// number of such links a node spreads it over.
TEST(NcclWhatIf, EightNicsOrOne) {
  const double nic = find_link_preset("ib_ndr400")->bandwidth_bytes_per_s / 1e9;  // 47.5
  Settings ring;
  ring.algorithms = "Ring";
  const Job eight = job("hgx_h100", 4, ring);
  const Job one = job("hgx_h100", 4, ring, [](PlatformSpec& s) { s.node.nics = 1; });
  // 8 GiB, where latency is nothing: each node's crossing traffic over its
  // NICs; with 8 NICs the ring reaches their sum, with 1 the one NIC's rate.
  EXPECT_NEAR(busbw(eight, 8 * kGiB), 8 * nic, 0.03 * 8 * nic);
  EXPECT_NEAR(busbw(one, 8 * kGiB), nic, 0.03 * nic);
}

TEST(NcclWhatIf, FewerNicsThanGpus) {
  const double hdr = find_link_preset("ib_hdr200")->bandwidth_bytes_per_s / 1e9;  // 23.75
  Settings ring;
  ring.algorithms = "Ring";
  const Job four = job("dgx_a100", 4, ring, [](PlatformSpec& s) { s.node.nics = 4; });
  EXPECT_NEAR(busbw(four, 8 * kGiB), 4 * hdr, 0.03 * 4 * hdr);  // published: 85-97 GB/s
}

TEST(NcclWhatIf, OneNodeOrFour) {
  Settings ring;
  ring.algorithms = "Ring";
  // One node: NVLink, 18 x 25 GB/s x 0.8 a GPU; four: the eight NICs.
  EXPECT_NEAR(busbw(job("hgx_h100", 1, ring), 8 * kGiB), 360, 0.02 * 360);
  EXPECT_NEAR(busbw(job("hgx_h100", 4, ring), 8 * kGiB), 380, 0.03 * 380);
}

TEST(NcclWhatIf, AnotherGpuGeneration) {
  Settings ring;
  ring.algorithms = "Ring";
  // One node's ring is its NVLink: A100 12 links, H100 18, B200 18 of NVLink
  // 5 (twice the rate), each at 0.8 of the line.
  EXPECT_NEAR(busbw(job("dgx_a100", 1, ring), 8 * kGiB), 240, 0.02 * 240);
  EXPECT_NEAR(busbw(job("hgx_h100", 1, ring), 8 * kGiB), 360, 0.02 * 360);
  EXPECT_NEAR(busbw(job("dgx_b200", 1, ring), 8 * kGiB), 720, 0.02 * 720);
}

TEST(NcclWhatIf, HalfTheBytesHalfTheTime) {
  // fp32 against bf16 gradients: the same collective on half the bytes (one
  // algorithm: NCCL's choice changes between NVLSTree and Ring near here).
  Settings ring;
  ring.algorithms = "Ring";
  const Job j = job("hgx_h100", 4, ring);
  const Choice fp32 = j.comm->choose(Func::kAllReduce, 4 * kGiB);
  const Choice bf16 = j.comm->choose(Func::kAllReduce, 2 * kGiB);
  EXPECT_EQ(fp32.latency, bf16.latency);
  EXPECT_NEAR(static_cast<double>((fp32.time - fp32.latency).ns()) /
                  static_cast<double>((bf16.time - bf16.latency).ns()),
              2.0, 1e-6);
}

// Published nccl-tests figures these presets must reproduce at large sizes
// (docs/validation.md, section 11 has the whole curves).
TEST(NcclWhatIf, PublishedPeaks) {
  // One HGX H100, NVLS (NCCL's default): about 480 GB/s (NVIDIA/nccl-tests
  // issue 212); 478.87 at 8 GiB (Azure ND H100 v5).
  EXPECT_NEAR(busbw(job("hgx_h100", 1), 8 * kGiB), 478.87, 0.03 * 478.87);
  // Two HGX H100, NVLSTree: 468.46 at 8 GiB (nccl-tests issue 309).
  EXPECT_NEAR(busbw(job("hgx_h100", 2), 8 * kGiB), 468.46, 0.03 * 468.46);
  // Two DGX A100-class nodes, 8 HDR: 188.18 at 4 GiB (Azure NDmv4,
  // microsoft/mscclpp docs/performance-ndmv4.md).
  EXPECT_NEAR(busbw(job("dgx_a100", 2), 4 * kGiB), 188.18, 0.03 * 188.18);
  // One DGX B200, NVLS: 844.35 at 32 GiB (togethercomputer/together-nccl-tests,
  // baselines/flapping-airplanes, 2026-05-12 report); ring on 2 to 64
  // nodes about 389.
  EXPECT_NEAR(busbw(job("dgx_b200", 1), 8 * kGiB), 844.35, 0.03 * 844.35);
  Settings ring;
  ring.algorithms = "Ring";
  EXPECT_NEAR(busbw(job("dgx_b200", 4, ring), 8 * kGiB), 389.3, 0.05 * 389.3);
  // DGX-1 nodes, 4 EDR NICs each: "DGX-1 can get 48 GB/s because we have 4
  // IB adapters" (NCCL's developers, NVIDIA/nccl-tests issue 29). Its
  // channels enter and leave a node by one NIC over an NVLink path through
  // the hybrid cube mesh, never through the CPUs.
  // One DGX-1: "three interwoven rings of single NVLink connections" (DGX-1
  // V100 system architecture white paper), each run both ways: 6 x 20 GB/s.
  EXPECT_NEAR(busbw(job("dgx1", 1, ring), 8 * kGiB), 120, 0.02 * 120);
  const Job dgx1 = job("dgx1", 4, ring);
  EXPECT_NEAR(busbw(dgx1, 8 * kGiB), 47.5, 0.03 * 47.5);
  std::vector<double> bytes(dgx1.platform->links().size(), 0.0);
  dgx1.comm->add_link_bytes(Func::kAllReduce, dgx1.comm->choose(Func::kAllReduce, kGiB), kGiB, bytes);
  for (LinkId l = 0; l < bytes.size(); ++l) {
    if (dgx1.platform->links()[l].kind == LinkKind::kSocket) {
      EXPECT_EQ(bytes[l], 0) << dgx1.platform->link_name(l);
    }
  }
  EXPECT_EQ(job("hgx_h100", 2).comm->choose(Func::kAllReduce, 8 * kGiB).algo, Algo::kNvlsTree);
  EXPECT_EQ(job("hgx_h100", 1).comm->choose(Func::kAllReduce, 8 * kGiB).algo, Algo::kNvls);
}

TEST(NcclWhatIf, NoAlgorithmLeftIsAnError) {
  Settings s;
  s.algorithms = "NVLS";  // not between nodes without CollNet
  const Job j = job("hgx_h100", 2, s);
  try {
    (void)j.comm->choose(Func::kAllReduce, 1e6);
    ADD_FAILURE() << "chose";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("no algorithm and protocol left for AllReduce"));
  }
}

// The scenario's keys reach the communicator, and wrong ones are located.
TEST(NcclScenario, KeysReachTheCommunicator) {
  const Scenario s = load_scenario(
      std::nullopt, {"platform.preset=hgx_h100", "cluster.nodes=2", "network.nccl_algo=ring",
                     "network.nccl_proto=Simple", "network.channels=8"});
  const CommModel comm = scenario_comm_model(s);
  ASSERT_NE(comm.communicator(), nullptr);
  EXPECT_EQ(comm.communicator()->graphs().coll_channels, 8);
  const Choice& c = comm.nccl_choice(CollectiveOp::kAllReduce, 1e6);
  EXPECT_EQ(c.algo, Algo::kRing);
  EXPECT_EQ(c.proto, Proto::kSimple);
  EXPECT_THAT(comm.describe(), HasSubstr("NCCL auto (8 channels, 16 NVLS, NCCL_ALGO ring)"));
  try {
    (void)load_scenario(std::nullopt, {"network.nccl_algo=ring,trees"});
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("field 'network.nccl_algo': unknown algorithm 'trees'"));
  }
  // NCCL's keys with the textbook algorithms, and the reverse, are refused.
  const auto refused = [](const std::vector<std::string>& sets) {
    try {
      (void)with_located_errors(load_scenario(std::nullopt, sets), [&] {
        return scenario_comm_model(load_scenario(std::nullopt, sets));
      });
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(refused({"network.library=generic", "network.channels=4"}),
              HasSubstr("network.channels sets NCCL's communicator"));
  EXPECT_THAT(refused({"network.library=nccl", "network.algorithm=hierarchical"}),
              HasSubstr("hierarchical is not an algorithm NCCL has"));
  EXPECT_THAT(refused({"network.library=generic", "network.algorithm=nvls"}),
              HasSubstr("nvls is NCCL's algorithm"));
  // A textbook algorithm named alone runs the textbook library.
  EXPECT_EQ(scenario_library(load_scenario(std::nullopt, {"network.algorithm=torus2d"}),
                             CollectiveAlgorithm::kTorus2d),
            CollectiveLibrary::kGeneric);
}

}  // namespace
}  // namespace ssgd::sim::nccl
