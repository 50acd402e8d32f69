#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "simulator/collective/ring_allreduce.h"
#include "simulator/network/link_preset.h"
#include "simulator/network/network_model.h"

namespace ssgd::sim {
namespace {

TEST(LinkPresets, AllNamedUniqueDocumentedAndPositive) {
  std::set<std::string_view> names;
  for (const auto& p : link_presets()) {
    EXPECT_TRUE(names.insert(p.name).second) << p.name;
    EXPECT_GT(p.bandwidth_bytes_per_s, 0) << p.name;
    EXPECT_GE(p.latency, Duration::zero()) << p.name;
    EXPECT_FALSE(p.source.empty()) << p.name;
    EXPECT_EQ(find_link_preset(p.name), &p);
  }
  for (const char* required : {"pcie3_x16", "pcie4_x16", "pcie5_x16", "nvlink2", "10gbe", "25gbe",
                               "100gbe", "ib_fdr56", "ib_edr100", "ib_hdr200", "ib_ndr400"}) {
    EXPECT_NE(find_link_preset(required), nullptr) << required;
  }
  EXPECT_EQ(find_link_preset("token-ring"), nullptr);
}

TEST(RingAllreduce, ClosedFormAndSteps) {
  const LinkParams link{"test", Duration(1000), 1e9};  // 1 us, 1 GB/s
  for (std::int64_t p = 2; p <= 64; ++p) {
    const auto steps = ring_allreduce_steps(p, 1'000'000);
    EXPECT_EQ(steps.steps, 2 * (p - 1));
    EXPECT_DOUBLE_EQ(steps.bytes_per_step_per_link, 1e6 / static_cast<double>(p));
    // 2(P-1) alpha + 2(P-1)/P M beta
    const auto pd = static_cast<double>(p);
    const double expected_s = 2.0 * (pd - 1) * 1e-6 + 2.0 * (pd - 1) / pd * 1e6 / 1e9;
    EXPECT_EQ(ring_allreduce_time(p, 1'000'000, link), duration_from_seconds(expected_s)) << p;
  }
  EXPECT_EQ(ring_allreduce_time(1, 1'000'000, link), Duration::zero());
  EXPECT_EQ(ring_allreduce_time(8, 0, link), Duration::zero());
  EXPECT_THROW(ring_allreduce_steps(0, 1), std::invalid_argument);
}

TEST(NetworkModel, SlowestLinkOnTheRingSetsThePace) {
  Scenario s;
  s.intra_node.preset = "nvlink2";
  s.inter_node.preset = "10gbe";
  s.nodes = 4;
  s.gpus_per_node = 8;
  const NetworkModel both(s);
  EXPECT_EQ(both.ring_link().bandwidth_bytes_per_s, find_link_preset("10gbe")->bandwidth_bytes_per_s);
  EXPECT_EQ(both.ring_link().latency, find_link_preset("10gbe")->latency);

  s.nodes = 1;  // the ring stays inside one node
  const NetworkModel inside(s);
  EXPECT_EQ(inside.ring_link().bandwidth_bytes_per_s, find_link_preset("nvlink2")->bandwidth_bytes_per_s);

  s.nodes = 4;
  s.gpus_per_node = 1;  // one GPU per node: only the network
  const NetworkModel outside(s);
  EXPECT_EQ(outside.ring_link().name, "10gbe");
}

TEST(NetworkModel, OverridesAndErrors) {
  LinkChoice c{"10gbe", 2.5e9, Duration(3000)};
  const auto p = resolve_link(c);
  EXPECT_EQ(p.bandwidth_bytes_per_s, 2.5e9);
  EXPECT_EQ(p.latency, Duration(3000));
  EXPECT_THAT(p.name, ::testing::HasSubstr("overridden"));
  EXPECT_THROW(resolve_link({"nope", {}, {}}), std::invalid_argument);
  EXPECT_THROW(resolve_link({"10gbe", 0.0, {}}), std::invalid_argument);
  EXPECT_THROW(resolve_link({"10gbe", -1.0, {}}), std::invalid_argument);
}

}  // namespace
}  // namespace ssgd::sim
