// BytePS all-reduce (simulator/collective/collective_byteps.cc): the paper's
// split between CPU and GPU-machine servers, the bytes each server and each
// machine's NIC carries, the closed form against all-reduce's optimum and
// the paper's M/B, and the flow model against the closed form.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <stdexcept>

#include "simulator/collective/collective.h"
#include "simulator/network/comm_model.h"
#include "simulator/platform/link_preset.h"
#include "simulator/scenario/scenario.h"
#include "simulator/scenario/scenario_network.h"

namespace ssgd::sim {
namespace {

constexpr double kM = 100e6;

CollectiveShape byteps_shape(std::int64_t machines, std::int64_t gpus, std::int64_t cpus) {
  return {.ranks = machines * gpus,
          .ranks_per_node = gpus,
          .servers = machines + cpus,
          .servers_colocated = true,
          .cpu_servers = cpus};
}

TEST(BytepsCpuShare, IsThePapersOptimum) {
  EXPECT_DOUBLE_EQ(byteps_cpu_share(8, 0), 0.0);
  EXPECT_DOUBLE_EQ(byteps_cpu_share(1, 4), 0.0);  // one machine sends nothing
  EXPECT_DOUBLE_EQ(byteps_cpu_share(4, 4), 1.0);  // k = n: all on the CPU machines
  EXPECT_DOUBLE_EQ(byteps_cpu_share(4, 9), 1.0);
  EXPECT_DOUBLE_EQ(byteps_cpu_share(8, 4), 2.0 * 4 * 7 / (64 + 32 - 8));
  // At the optimum a GPU machine's NIC and a CPU machine's carry the same.
  for (std::int64_t n = 2; n <= 16; ++n) {
    for (std::int64_t k = 1; k < n; ++k) {
      const double x = byteps_cpu_share(n, k);
      const double nd = static_cast<double>(n);
      EXPECT_NEAR(x + 2 * (1 - x) * (nd - 1) / nd, nd * x / static_cast<double>(k), 1e-12);
    }
  }
  EXPECT_THROW(byteps_cpu_share(0, 1), std::invalid_argument);
  EXPECT_THROW(byteps_cpu_share(2, -1), std::invalid_argument);
}

// Bytes each machine's NIC sends, from the decomposition: every transfer
// between two nodes, counted once per repeat.
std::map<std::int64_t, double> nic_out(const CollectiveShape& s,
                                       const std::vector<CollectiveStep>& steps) {
  std::map<std::int64_t, double> out;
  for (const CollectiveStep& step : steps) {
    for (const Transfer& t : step.transfers) {
      const std::int64_t a = endpoint_node(s, t.src);
      if (a != endpoint_node(s, t.dst)) out[a] += t.bytes * static_cast<double>(step.repeat);
    }
  }
  return out;
}

TEST(Byteps, ServersSumTheirShareAndEveryRankGetsItsSliceBack) {
  for (const auto& [n, g, c] :
       {std::tuple{4, 1, 0}, std::tuple{4, 4, 2}, std::tuple{8, 2, 8}, std::tuple{3, 8, 5}}) {
    const CollectiveShape s = byteps_shape(n, g, c);
    const auto steps = decompose(CollectiveOp::kAllReduce, CollectiveAlgorithm::kBytePS, s, kM);
    const double x = byteps_cpu_share(n, c);
    std::map<std::int32_t, double> into;
    for (const CollectiveStep& step : steps) {
      for (const Transfer& t : step.transfers)
        into[t.dst] += t.bytes * static_cast<double>(step.repeat);
    }
    for (std::int64_t srv = 0; srv < n + c; ++srv) {
      const double want = srv < n ? (1 - x) * kM : static_cast<double>(n) * x * kM / c;
      EXPECT_NEAR(into[static_cast<std::int32_t>(s.ranks + srv)], want, 1e-6 * kM)
          << n << "x" << g << " +" << c << " server " << srv;
    }
    // Each machine's NIC sends what the closed form says: x M + 2(1-x)M(N-1)/N,
    // and each CPU machine's N x M / C.
    const auto out = nic_out(s, steps);
    for (std::int64_t node = 0; node < n + c; ++node) {
      const double nd = static_cast<double>(n);
      const double want = node < n ? x * kM + 2 * (1 - x) * kM * (nd - 1) / nd
                                   : nd * x * kM / static_cast<double>(c);
      EXPECT_NEAR(out.count(node) ? out.at(node) : 0.0, want, 1e-6 * kM) << "node " << node;
    }
  }
}

TEST(Byteps, ClosedFormMeetsAllReducesOptimumWithoutCpuMachinesAndHalvesItWithAsMany) {
  const CollectiveCosts costs{{Duration(2'000), 100e9}, {Duration(10'000), 10e9}};
  const auto t = [&](const CollectiveShape& s) {
    return closed_form_time(CollectiveOp::kAllReduce, CollectiveAlgorithm::kBytePS, s, kM, costs);
  };
  // k = 0: 2 alpha + 2(N-1)/N M beta, the same bytes as a ring on one GPU a machine.
  EXPECT_EQ(t(byteps_shape(8, 1, 0)),
            Duration(20'000) + duration_from_seconds(2.0 * 7 / 8 * kM / 10e9));
  // k = n: 2 alpha + M beta.
  EXPECT_EQ(t(byteps_shape(8, 1, 8)), Duration(20'000) + duration_from_seconds(kM / 10e9));
  // With 8 GPUs a machine, reduce-scatter and all-gather inside it come first and last.
  const Duration intra = duration_from_seconds(2 * 7 * (2e-6 + kM / 8 / 100e9));
  EXPECT_EQ(t(byteps_shape(8, 8, 8)).ns(),
            (intra + Duration(20'000) + duration_from_seconds(kM / 10e9)).ns());
  // One machine: an intra-node ring all-reduce, whatever the CPU machines.
  EXPECT_EQ(t(byteps_shape(1, 8, 4)),
            closed_form_time(CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing,
                             {.ranks = 8, .ranks_per_node = 8}, kM, costs));
}

TEST(Byteps, ShapesThatAreNotBytepsAreRefused) {
  CollectiveShape s = byteps_shape(4, 2, 2);
  s.servers = 3;
  EXPECT_THROW(decompose(CollectiveOp::kAllReduce, CollectiveAlgorithm::kBytePS, s, kM),
               std::invalid_argument);
  EXPECT_THROW(
      decompose(CollectiveOp::kBroadcast, CollectiveAlgorithm::kBytePS, byteps_shape(4, 2, 2), kM),
      std::invalid_argument);
  // The flat parameter server places all its servers alike.
  EXPECT_THROW(decompose(CollectiveOp::kAllReduce, CollectiveAlgorithm::kParameterServer,
                         byteps_shape(4, 2, 2), kM),
               std::invalid_argument);
}

TEST(Byteps, EndpointsAreGpuMachinesThenCpuMachines) {
  const CollectiveShape s = byteps_shape(4, 2, 3);
  EXPECT_EQ(endpoint_node(s, 8), 0);   // server on GPU machine 0
  EXPECT_EQ(endpoint_node(s, 11), 3);  // on GPU machine 3
  EXPECT_EQ(endpoint_node(s, 12), 4);  // first CPU machine
  EXPECT_EQ(endpoint_node(s, 14), 6);
}

// On one GPU per machine over 100 Gb/s, nothing but the NICs contends: the
// flow model, with the platform's real links, lands on the closed form.
TEST(Byteps, FlowModelAgreesWithTheClosedForm) {
  for (const std::int64_t cpus : {0, 2, 4}) {
    Scenario s;
    s.nodes = 4;
    s.gpus_per_node = 1;
    s.inter_node.preset = "ib_edr100";
    s.algorithm = CollectiveAlgorithm::kBytePS;
    s.cpu_servers = cpus;
    const CommModel analytical = scenario_comm_model(s);
    s.network_model = "flow";
    const CommModel flow = scenario_comm_model(s);
    EXPECT_THAT(flow.describe(), ::testing::HasSubstr("a server on each GPU machine"));
    const double a =
        static_cast<double>(analytical.isolated_time(CollectiveOp::kAllReduce, kM).ns());
    const double f = static_cast<double>(flow.isolated_time(CollectiveOp::kAllReduce, kM).ns());
    EXPECT_NEAR(f, a, 0.02 * a) << cpus << " CPU machines";
  }
}

}  // namespace
}  // namespace ssgd::sim
