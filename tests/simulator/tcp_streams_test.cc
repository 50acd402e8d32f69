// TCP streams between nodes (StreamCap, platform.nic.tcp_streams and
// tcp_stream_rate): the rate one transfer reaches by its size, the closed
// forms and the flow model under it, and where it does not apply.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error.h"
#include "simulator/collective/collective.h"
#include "simulator/input/scenario_inputs.h"
#include "simulator/network/comm_model.h"
#include "simulator/scenario/scenario.h"
#include "simulator/scenario/scenario_network.h"

namespace ssgd::sim {
namespace {

constexpr double kStream = 1.25e9;  // 10 Gb/s

TEST(StreamCap, SmallTransfersUseFewerStreams) {
  const StreamCap off;
  EXPECT_EQ(off.rate(1e9), std::numeric_limits<double>::infinity());
  const StreamCap two{2, kStream};
  EXPECT_DOUBLE_EQ(two.rate(1e6), 2 * kStream);
  EXPECT_DOUBLE_EQ(two.rate(65536), kStream);  // one 64 KiB chunk: one stream
  EXPECT_DOUBLE_EQ(two.rate(65537), 2 * kStream);
  EXPECT_DOUBLE_EQ(two.rate(0), kStream);
  EXPECT_DOUBLE_EQ(two.rate(1e6, 3), 6 * kStream);  // three transfers at once
}

TEST(StreamCap, BoundsTheRingsInterNodeStepsInTheClosedForm) {
  const CollectiveShape ring{.ranks = 8};
  const LevelCost nic{Duration(10'000), 11.25e9};  // 100 Gb/s at 0.9
  const CollectiveCosts free(nic, nic);
  const CollectiveCosts tcp(nic, nic, StreamCap{2, kStream});
  const double m = 256e6;
  // 2(P-1) steps of M/P, each at 2 streams' rate instead of the NIC's.
  EXPECT_EQ(closed_form_time(CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, ring, m, tcp),
            duration_from_seconds(14 * (10e-6 + m / 8 / (2 * kStream))));
  EXPECT_EQ(closed_form_time(CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, ring, m, free),
            duration_from_seconds(14 * (10e-6 + m / 8 / 11.25e9)));
  // A step of at most 64 KiB goes over one stream.
  const double small = 8 * 65536.0;
  EXPECT_EQ(
      closed_form_time(CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, ring, small, tcp),
      duration_from_seconds(14 * (10e-6 + small / 8 / kStream)));
  const CollectiveCosts bad(nic, nic, StreamCap{0, kStream});
  EXPECT_THROW(closed_form_time(CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, ring, m, bad),
               std::invalid_argument);
}

Scenario tcp_cluster(CollectiveAlgorithm algorithm, const std::string& model,
                     const std::string& nic = "100gbe") {
  Scenario s = load_scenario(
      std::nullopt, {"cluster.nodes=4", "network.inter_node=" + nic,
                     "platform.nic.tcp_stream_rate=1.25GB/s", "platform.nic.tcp_streams=2"});
  s.algorithm = algorithm;
  s.network_model = model;
  s.cpu_servers = 4;
  return s;
}

// One GPU per node: the flow model's per-flow bound and the closed form's
// per-step bound are the same model.
TEST(TcpStreams, FlowModelAgreesWithTheClosedForm) {
  for (const auto algorithm : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kBytePS}) {
    const CommModel a = scenario_comm_model(tcp_cluster(algorithm, "analytical"));
    const CommModel f = scenario_comm_model(tcp_cluster(algorithm, "flow"));
    for (const double bytes : {64e3, 1e6, 64e6}) {
      const double at = static_cast<double>(a.isolated_time(CollectiveOp::kAllReduce, bytes).ns());
      const double ft = static_cast<double>(f.isolated_time(CollectiveOp::kAllReduce, bytes).ns());
      EXPECT_NEAR(ft, at, 0.02 * at + 10) << to_string(algorithm) << " " << bytes;
    }
  }
}

// Two streams hold a textbook ring (one connection a hop) to 2.5 GB/s on
// 100 GbE, and NCCL's ring, whose two channels each have a connection of
// their own, to 5 GB/s; BytePS's connection per server (four CPU servers
// here, two streams each) reaches 10 GB/s.
TEST(TcpStreams, FewConnectionsSlowTheRingAndManyDoNot) {
  const auto time = [](CollectiveAlgorithm algorithm, bool streams,
                       CollectiveLibrary library = CollectiveLibrary::kGeneric) {
    Scenario s = tcp_cluster(algorithm, "analytical");
    s.library = library;
    if (!streams) s.platform.tcp_streams.reset(), s.platform.tcp_stream_rate.reset();
    return static_cast<double>(
        scenario_comm_model(s).isolated_time(CollectiveOp::kAllReduce, 256e6).ns());
  };
  EXPECT_NEAR(time(CollectiveAlgorithm::kRing, true) / time(CollectiveAlgorithm::kRing, false),
              11.25 / 2.5, 0.05);
  EXPECT_NEAR(time(CollectiveAlgorithm::kRing, true, CollectiveLibrary::kNccl) /
                  time(CollectiveAlgorithm::kRing, false, CollectiveLibrary::kNccl),
              11.25 / 5.0, 0.05);
  EXPECT_NEAR(time(CollectiveAlgorithm::kBytePS, true) / time(CollectiveAlgorithm::kBytePS, false),
              11.25 / 10, 0.01);
}

TEST(TcpStreams, RdmaAndInfinibandAreNotBound) {
  Scenario rdma = tcp_cluster(CollectiveAlgorithm::kRing, "analytical");
  rdma.platform.transport = Transport::kRdma;
  Scenario ib = tcp_cluster(CollectiveAlgorithm::kRing, "analytical", "ib_edr100");
  for (const Scenario& s : {rdma, ib}) {
    EXPECT_FALSE(scenario_comm_model(s).platform().inter_node_streams().on());
  }
  Scenario ipoib = ib;
  ipoib.platform.transport = Transport::kTcp;
  EXPECT_TRUE(scenario_comm_model(ipoib).platform().inter_node_streams().on());
}

TEST(TcpStreams, StreamsWithoutARateAreRefused) {
  try {
    (void)scenario_comm_model(load_scenario(std::nullopt, {"platform.nic.tcp_streams=4"}));
    ADD_FAILURE() << "accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("needs platform.nic.tcp_stream_rate"));
  }
  EXPECT_THROW(load_scenario(std::nullopt, {"platform.nic.tcp_streams=65"}), InputError);
  EXPECT_THROW(load_scenario(std::nullopt, {"platform.nic.tcp_stream_rate=0"}), InputError);
}

// platform.nic.tcp_preset: a library's streams and rate by name, with
// tcp_streams and tcp_stream_rate winning over it.
TEST(TcpStreams, PresetsGiveTheirStreamsAndRate) {
  const auto streams_of = [](std::vector<std::string> sets) {
    sets.push_back("cluster.nodes=4");
    sets.push_back("network.inter_node=100gbe");
    return scenario_comm_model(load_scenario(std::nullopt, sets)).platform().inter_node_streams();
  };
  const StreamCap nccl = streams_of({"platform.nic.tcp_preset=nccl_socket"});
  EXPECT_EQ(nccl.streams, 1);  // a channel's connection: one socket
  EXPECT_DOUBLE_EQ(nccl.stream_rate_bytes_per_s, 1.25e9);
  const StreamCap byteps = streams_of({"platform.nic.tcp_preset=byteps"});
  EXPECT_EQ(byteps.streams, 1);
  EXPECT_DOUBLE_EQ(byteps.stream_rate_bytes_per_s, 1.25e9);
  const StreamCap more = streams_of({"platform.nic.tcp_preset=nccl_socket", "platform.nic.tcp_streams=8"});
  EXPECT_EQ(more.streams, 8);
  EXPECT_DOUBLE_EQ(more.stream_rate_bytes_per_s, 1.25e9);
  const StreamCap slower =
      streams_of({"platform.nic.tcp_preset=nccl_socket", "platform.nic.tcp_stream_rate=0.5GB/s"});
  EXPECT_EQ(slower.streams, 1);
  EXPECT_DOUBLE_EQ(slower.stream_rate_bytes_per_s, 0.5e9);
  EXPECT_FALSE(streams_of({"platform.nic.tcp_preset=none"}).on());
  // The same times as the two keys written out.
  const auto time = [](std::vector<std::string> sets) {
    sets.push_back("cluster.nodes=4");
    sets.push_back("network.inter_node=100gbe");
    return scenario_comm_model(load_scenario(std::nullopt, sets))
        .isolated_time(CollectiveOp::kAllReduce, 64e6);
  };
  EXPECT_EQ(time({"platform.nic.tcp_preset=nccl_socket"}),
            time({"platform.nic.tcp_stream_rate=1.25GB/s", "platform.nic.tcp_streams=1"}));
  try {
    load_scenario(std::nullopt, {"platform.nic.tcp_preset=gloo"});
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("platform.nic.tcp_preset"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("unknown TCP stream preset 'gloo'"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("nccl_socket, byteps"));
  }
}

}  // namespace
}  // namespace ssgd::sim
