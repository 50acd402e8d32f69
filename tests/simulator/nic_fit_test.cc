// `ssgd calibrate --nic` (simulator/api/nic_fit.h): the NIC's factors fitted
// through the scenario's model. Curves the model itself makes with known
// factors must give those factors back and predict other node counts
// exactly; a curve faster than the line stops at the line and says so; a
// rank count that is not whole nodes is an error naming the measurement.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/error.h"
#include "simulator/api/nic_fit.h"
#include "simulator/input/scenario_inputs.h"
#include "simulator/scenario/scenario_network.h"

namespace ssgd::sim {
namespace {

using ::testing::HasSubstr;

Scenario hgx(std::vector<std::string> sets = {}) {
  sets.insert(sets.begin(), "platform.preset=hgx_h100");
  return load_scenario(std::nullopt, sets);
}

// An all-reduce curve, 1 MiB to 1 GiB, on `nodes` HGX H100 nodes whose NICs
// carry `bandwidth` and take `latency` times the preset's.
std::vector<trace::Measurement> curve(std::int64_t nodes, double bandwidth, double latency) {
  Scenario s = hgx();
  s.nodes = nodes;
  const auto nic = static_cast<std::size_t>(LinkKind::kNic);
  s.perturb.bandwidth_factors[nic] = bandwidth;
  s.perturb.latency_factors[nic] = latency;
  const CommModel comm = scenario_comm_model(s);
  std::vector<trace::Measurement> out;
  for (double bytes = 1 << 20; bytes <= (1 << 30); bytes *= 4) {
    trace::Measurement m;
    m.op = CollectiveOp::kAllReduce;
    m.ranks = nodes * 8;
    m.bytes = bytes;
    m.time = comm.isolated_time(m.op, bytes);
    m.source = "curve" + std::to_string(nodes) + ".txt";
    m.line = 10;
    out.push_back(m);
  }
  return out;
}

TEST(NicFit, GivesTheFactorsBackAndPredictsOtherNodeCounts) {
  const NicFitResult r = fit_nic(hgx(), curve(2, 0.8, 3.0), curve(8, 0.8, 3.0));
  EXPECT_NEAR(r.bandwidth_factor, 0.8, 0.01);
  EXPECT_NEAR(r.latency_factor, 3.0, 0.15);
  EXPECT_NEAR(r.bandwidth, 0.8 * 47.5e9, 0.01 * 47.5e9);
  EXPECT_FALSE(r.bandwidth_at_edge);
  EXPECT_FALSE(r.latency_at_edge);
  ASSERT_EQ(r.curves.size(), 2u);
  EXPECT_TRUE(r.curves[0].fitted);
  EXPECT_EQ(r.curves[0].nodes, 2);
  EXPECT_LT(r.curves[0].max_error, 0.01);
  EXPECT_FALSE(r.curves[1].fitted);
  EXPECT_EQ(r.curves[1].ranks, 64);
  EXPECT_LT(r.curves[1].max_error, 0.02);
  EXPECT_EQ(r.curves[1].points.front().protocol.empty(), false);  // NCCL's choice is shown
}

TEST(NicFit, StopsAtTheLineRateAndSaysSo) {
  // Twice the preset's sustained rate is past the NDR line (50 GB/s).
  const NicFitResult r = fit_nic(hgx(), curve(2, 2.0, 1.0), {});
  EXPECT_NEAR(r.bandwidth_factor, 1 / 0.95, 1e-3);
  EXPECT_NEAR(r.line_factor, 1 / 0.95, 1e-12);
  EXPECT_TRUE(r.bandwidth_at_edge);
}

TEST(NicFit, RanksThatAreNotWholeNodesAreAnError) {
  std::vector<trace::Measurement> m = curve(2, 1, 1);
  m[2].ranks = 12;
  try {
    (void)fit_nic(hgx(), m, {});
    ADD_FAILURE() << "fitted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("curve2.txt:10: field 'nranks': 12 ranks are not whole nodes of the "
                                    "scenario's 8 GPUs"));
  }
}

}  // namespace
}  // namespace ssgd::sim
