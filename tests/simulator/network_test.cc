// Link presets, the platform graph and its routes, and the flow-level
// network: max-min sharing, incremental recomputation, and agreement with the
// analytical closed forms where nothing contends.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/error.h"
#include "simulator/engine/engine.h"
#include "simulator/input/scenario_inputs.h"
#include "simulator/network/collective_plan.h"
#include "simulator/network/collective_runner.h"
#include "simulator/network/comm_model.h"
#include "simulator/network/flow_network.h"
#include "simulator/platform/link_preset.h"
#include "simulator/platform/platform.h"
#include "simulator/platform/platform_preset.h"
#include "simulator/scenario/scenario.h"
#include "simulator/scenario/scenario_network.h"
#include "simulator/scenario/scenario_platform.h"

namespace ssgd::sim {
namespace {

using ::testing::HasSubstr;

TEST(LinkPresets, AllNamedUniqueDocumentedAndPositive) {
  std::set<std::string_view> names;
  for (const auto& p : link_presets()) {
    EXPECT_TRUE(names.insert(p.name).second) << p.name;
    EXPECT_GT(p.bandwidth_bytes_per_s, 0) << p.name;
    EXPECT_GE(p.latency, Duration::zero()) << p.name;
    EXPECT_FALSE(p.source.empty()) << p.name;
    EXPECT_EQ(find_link_preset(p.name), &p);
  }
  EXPECT_EQ(find_link_preset("token-ring"), nullptr);
}

TEST(LinkPresets, OverridesAndErrors) {
  LinkChoice c{"10gbe", 2.5e9, Duration(3000)};
  const auto p = resolve_link(c);
  EXPECT_EQ(p.bandwidth_bytes_per_s, 2.5e9);
  EXPECT_EQ(p.latency, Duration(3000));
  EXPECT_THAT(p.name, HasSubstr("overridden"));
  EXPECT_THROW(resolve_link({"nope", {}, {}}), std::invalid_argument);
  EXPECT_THROW(resolve_link({"10gbe", 0.0, {}}), std::invalid_argument);
}

TEST(PlatformPresets, EveryPresetBuildsAndIsDocumented) {
  for (const auto& p : platform_presets()) {
    const PlatformSpec spec = p.make();
    EXPECT_EQ(spec.name, p.name);
    EXPECT_FALSE(spec.source.empty()) << p.name;
    EXPECT_FALSE(spec.description.empty()) << p.name;
    const Platform platform(spec, 4);
    // Every GPU reaches every other GPU, in its node and in the next.
    for (std::int64_t a = 0; a < spec.node.gpus; ++a) {
      for (std::int64_t b = 0; b < spec.node.gpus; ++b) {
        if (a != b) {
          EXPECT_FALSE(platform.route(platform.gpu(0, a), platform.gpu(0, b)).links.empty());
        }
        const Route r = platform.route(platform.gpu(0, a), platform.gpu(1, b));
        EXPECT_TRUE(r.crosses_nodes);
        EXPECT_GT(r.bandwidth_bytes_per_s, 0);
      }
    }
  }
  EXPECT_EQ(find_platform_preset("cray-1"), nullptr);
}

TEST(Platform, Dgx1RingFollowsDoubleNvlinksAndOthersCrossPcie) {
  const Platform p(find_platform_preset("dgx1")->make(), 1);
  const double nv1 = 0.8 * 25e9;
  // Ring order 0-3-2-1-5-6-7-4: every hop a doubled NVLink.
  for (std::int64_t i = 0; i < 8; ++i) {
    const Route r = p.route(p.gpu(0, i), p.gpu(0, (i + 1) % 8));
    ASSERT_EQ(r.links.size(), 1u) << i;
    EXPECT_DOUBLE_EQ(r.bandwidth_bytes_per_s, 2 * nv1) << i;
  }
  // GPUs 0 and 5 share no NVLink: the route goes through PCIe and the CPUs.
  const Route r = p.route(p.gpu(0, 0), p.gpu(0, 4));  // positions 0 and 4 are GPUs 0 and 5
  EXPECT_GT(r.links.size(), 2u);
  EXPECT_DOUBLE_EQ(r.bandwidth_bytes_per_s, find_link_preset("pcie3_x16")->bandwidth_bytes_per_s);
}

// shifted_link: the link that plays a link's part some nodes further on (an
// HSDP shard group's traffic copied to the other groups): every link of node
// 0 and its NICs maps to node 2's of the same name; past the last node there
// is none; a fat tree's leaf uplinks shift by whole leaves only.
TEST(Platform, ShiftedLinkIsTheSameLinkOnAnotherNode) {
  const Platform p(find_platform_preset("hgx_h100")->make(), 4);
  std::size_t node0 = 0;
  for (LinkId l = 0; l < p.links().size(); ++l) {
    const std::string name = p.link_name(l);
    if (name.find("node0/") == std::string::npos) continue;
    ++node0;
    const auto two = p.shifted_link(l, 2);
    ASSERT_TRUE(two.has_value()) << name;
    std::string expected = name;
    for (auto at = expected.find("node0/"); at != std::string::npos;
         at = expected.find("node0/", at)) {
      expected.replace(at, 6, "node2/");
    }
    EXPECT_EQ(p.link_name(*two), expected);
    EXPECT_FALSE(p.shifted_link(l, 4).has_value()) << name;  // past node 3
  }
  EXPECT_GT(node0, 40u);
  // 32 nodes a leaf: 4 nodes are one leaf group, and its uplinks go nowhere.
  for (LinkId l = 0; l < p.links().size(); ++l) {
    if (p.links()[l].kind == LinkKind::kFabric) EXPECT_FALSE(p.shifted_link(l, 1).has_value());
  }
  // 64 nodes: two leaf groups of 8 rail leaves; 32 nodes on is the next group's.
  const Platform big(find_platform_preset("hgx_h100")->make(), 64);
  std::size_t uplinks = 0;
  for (LinkId l = 0; l < big.links().size(); ++l) {
    if (big.links()[l].kind != LinkKind::kFabric) continue;
    const auto next = big.shifted_link(l, 32);
    if (!next) continue;
    ++uplinks;
    EXPECT_EQ(big.link_name(*next).substr(0, 4), big.link_name(l).substr(0, 4));
    EXPECT_NE(big.link_name(*next), big.link_name(l));
  }
  EXPECT_EQ(uplinks, 16u);  // the first group's 8 leaves, up and down
}

// The generic platform of two link presets: its PCIe is a free hop between
// GPU and NIC, said to be not modelled and left out of the link figures; GPUs
// that NVLink joins talk over NVLink, whichever of the two is faster.
TEST(Platform, GenericNvlinkGpusTalkOverNvlinkNotTheFreeHop) {
  for (const char* inter : {"ib_ndr400", "10gbe"}) {
    const auto intra = *find_link_preset("nvlink2");  // 25 GB/s: slower than NDR400's NIC
    const auto nic = *find_link_preset(inter);
    const Platform p(generic_platform(8, link_spec(intra), "nvlink2", link_spec(nic), inter), 2);
    EXPECT_THAT(p.describe(), ::testing::HasSubstr("PCIe not modelled")) << inter;
    const Route gg = p.route(p.gpu(0, 0), p.gpu(0, 5));
    for (const LinkId l : gg.links) EXPECT_EQ(p.links()[l].kind, LinkKind::kNvlink) << inter;
    EXPECT_DOUBLE_EQ(gg.bandwidth_bytes_per_s, intra.bandwidth_bytes_per_s) << inter;
    const Route out = p.route(p.gpu(0, 0), p.gpu(1, 0));
    EXPECT_DOUBLE_EQ(out.bandwidth_bytes_per_s, nic.bandwidth_bytes_per_s) << inter;
  }
  // With PCIe as the intra-node link, PCIe is modelled.
  const auto pcie = *find_link_preset("pcie3_x16");
  const auto eth = *find_link_preset("10gbe");
  const Platform q(generic_platform(4, link_spec(pcie), "pcie3_x16", link_spec(eth), "10gbe"), 2);
  EXPECT_THAT(q.describe(), ::testing::HasSubstr("PCIe 12.6 GB/s"));
}

TEST(Platform, FatTreeOversubscriptionNarrowsTheUplink) {
  PlatformSpec s = find_platform_preset("v100_pcie_4x_100gbe")->make();
  s.fabric.kind = FabricKind::kFatTree;
  s.fabric.nodes_per_leaf = 2;
  s.fabric.oversubscription = 4;
  s.fabric.switch_latency = Duration(500);
  const Platform p(s, 4);
  const double nic = find_link_preset("100gbe")->bandwidth_bytes_per_s;
  const Route same_leaf = p.route(p.gpu(0, 0), p.gpu(1, 0));
  const Route other_leaf = p.route(p.gpu(0, 0), p.gpu(2, 0));
  EXPECT_DOUBLE_EQ(same_leaf.bandwidth_bytes_per_s, nic);
  EXPECT_DOUBLE_EQ(other_leaf.bandwidth_bytes_per_s, 2 * nic / 4);  // 2 NICs under a leaf, 4:1
  EXPECT_EQ(other_leaf.links.size(), same_leaf.links.size() + 2);
  EXPECT_EQ(other_leaf.latency - same_leaf.latency, Duration(1000));  // two more switches
}

TEST(Platform, BadSpecsNameTheProblem) {
  PlatformSpec s = find_platform_preset("dgx1")->make();
  s.node.gpu_attach = {0, 0, 1, 1, 2, 2, 3, -1};
  s.node.nvlink_pairs.erase(std::remove_if(s.node.nvlink_pairs.begin(), s.node.nvlink_pairs.end(),
                                           [](const NvlinkPair& p) { return p.a == 7 || p.b == 7; }),
                            s.node.nvlink_pairs.end());
  s.node.ring_order.clear();
  try {
    const Platform p(s, 1);
    FAIL() << "a disconnected GPU was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot reach GPU 7"));
  }
  PlatformSpec z = find_platform_preset("hgx_h100")->make();
  z.node.nic.bandwidth_bytes_per_s = 0;
  EXPECT_THROW({ const Platform p(z, 2); }, std::invalid_argument);
  try {
    z.node.nic.bandwidth_bytes_per_s = -5;
    const Platform p(z, 2);
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("NIC bandwidth must be greater than zero"));
  }
  PlatformSpec o = find_platform_preset("hgx_h100")->make();
  o.fabric.oversubscription = 0.5;
  EXPECT_THROW({ const Platform p(o, 2); }, std::invalid_argument);
  PlatformSpec r = find_platform_preset("dgx1")->make();
  r.node.ring_order = {0, 1, 2, 3, 4, 5, 6, 6};
  EXPECT_THROW({ const Platform p(r, 1); }, std::invalid_argument);
  r = find_platform_preset("dgx1")->make();
  r.node.nvlink_pairs.push_back({0, 9, 1});
  EXPECT_THROW({ const Platform p(r, 1); }, std::invalid_argument);
}

TEST(ScenarioPlatform, PresetsKeysAndConflicts) {
  Scenario s = load_scenario(std::nullopt, {"platform.preset=hgx_h100", "cluster.nodes=2"});
  EXPECT_EQ(s.gpus_per_node, 8);
  EXPECT_EQ(scenario_platform_spec(s).node.nics, 8);
  s = load_scenario(std::nullopt, {"platform.preset=hgx_h100", "platform.nic.link=ib_hdr200",
                                   "platform.fabric.oversubscription=2"});
  const PlatformSpec spec = scenario_platform_spec(s);
  EXPECT_EQ(spec.node.nic.bandwidth_bytes_per_s, find_link_preset("ib_hdr200")->bandwidth_bytes_per_s);
  EXPECT_EQ(spec.fabric.oversubscription, 2.0);
  EXPECT_THAT(spec.name, HasSubstr("customised"));
  // RDMA over Ethernet is faster than the TCP the preset assumes.
  s = load_scenario(std::nullopt, {"platform.preset=v100_pcie_4x_100gbe", "platform.nic.transport=rdma"});
  EXPECT_GT(scenario_platform_spec(s).node.nic.bandwidth_bytes_per_s,
            find_link_preset("100gbe")->bandwidth_bytes_per_s);
  EXPECT_LT(scenario_platform_spec(s).node.nic.latency, find_link_preset("100gbe")->latency);
  s = load_scenario(std::nullopt, {"platform.preset=dgx1", "network.inter_node=10gbe"});
  EXPECT_THROW(scenario_platform_spec(s), std::invalid_argument);
  s = load_scenario(std::nullopt, {"platform.preset=dgx1", "cluster.gpus_per_node=9"});
  EXPECT_THROW(scenario_platform_spec(s), std::invalid_argument);
  EXPECT_THROW(load_scenario(std::nullopt, {"platform.preset=cray1"}), ssgd::InputError);
  EXPECT_THROW(load_scenario(std::nullopt, {"network.algorithm=butterfly"}), ssgd::InputError);
  EXPECT_THROW(load_scenario(std::nullopt, {"platform.nic.bandwidth=0GB/s"}), ssgd::InputError);
  EXPECT_THROW(load_scenario(std::nullopt, {"platform.nic.bandwidth=12furlongs"}), ssgd::InputError);
  EXPECT_THROW(load_scenario(std::nullopt, {"platform.nvlink.pairs=0-1:x"}), ssgd::InputError);
}

// A job on part of a preset's node: the first GPUs, each keeping its NVLinks,
// its place in the ring, its PCIe switch and its NIC.
PlatformSpec partial_spec(const char* preset, std::int64_t gpus, std::int64_t nodes,
                          std::vector<std::string> more = {}) {
  more.push_back(fmt::format("platform.preset={}", preset));
  more.push_back(fmt::format("cluster.gpus_per_node={}", gpus));
  more.push_back(fmt::format("cluster.nodes={}", nodes));
  return scenario_platform_spec(load_scenario(std::nullopt, more));
}

TEST(PartialNode, FourGpusOfADgx1KeepTheirNvlinksSwitchesAndNics) {
  const Platform whole(find_platform_preset("dgx1")->make(), 2);
  const PlatformSpec spec = partial_spec("dgx1", 4, 2);
  EXPECT_EQ(spec.name, "dgx1 (4 of a node's 8 GPUs)");
  const Platform part(spec, 2);
  ASSERT_EQ(part.gpus_per_node(), 4);
  // Ring 0-3-2-1, the whole ring's order: every hop one NVLink, doubled as in
  // the whole node but for 1-0, a single link (every ring of GPUs 0-3 has one).
  const double nv1 = 0.8 * 25e9;
  for (std::int64_t i = 0; i < 4; ++i) {
    const Route r = part.route(part.gpu(0, i), part.gpu(0, (i + 1) % 4));
    ASSERT_EQ(r.links.size(), 1u) << i;
    EXPECT_EQ(part.links()[r.links[0]].kind, LinkKind::kNvlink) << i;
    EXPECT_DOUBLE_EQ(r.bandwidth_bytes_per_s, i == 3 ? nv1 : 2 * nv1) << i;
  }
  for (std::int64_t g = 0; g < 4; ++g) {
    EXPECT_EQ(part.nic_of_gpu(g), whole.nic_of_gpu(g)) << g;
    EXPECT_EQ(part.nic_path(g, part.nic_of_gpu(g)), whole.nic_path(g, whole.nic_of_gpu(g))) << g;
    EXPECT_DOUBLE_EQ(part.nic_path_bandwidth(g, part.nic_of_gpu(g)),
                     whole.nic_path_bandwidth(g, whole.nic_of_gpu(g)))
        << g;
  }
  EXPECT_EQ(spec.node.nics, 2);  // GPUs 0-3 send through NICs 0 and 1 of the four
}

// First principles: a ring all-reduce of S bytes over P ranks, with a ring
// per NIC (NCCL's rails) and NVLink faster than the NICs inside a node, moves
// 2(P-1)/P S through the node's NICs together: 2 nodes of 4 HGX H100 GPUs use
// 4 of the 8 NICs, so take about 2(7/8) S / (4 B_nic), and the whole nodes
// 2(15/16) S / (8 B_nic): the half node is (7/8)/4 over (15/16)/8 = 1.87x as
// long, not the same (one NIC a GPU) nor 8x (one NIC a node).
TEST(PartialNode, HalfAnHgxNodeAllReducesAtItsFourNics) {
  const double bytes = 1024.0 * 1024 * 1024;
  const double nic = find_link_preset("ib_ndr400")->bandwidth_bytes_per_s;
  const auto time = [&](std::int64_t gpus) {
    Scenario s = load_scenario(std::nullopt, {"platform.preset=hgx_h100", "cluster.nodes=2",
                                              fmt::format("cluster.gpus_per_node={}", gpus),
                                              "network.algorithm=ring"});
    const auto ns = scenario_comm_model(s).isolated_time(CollectiveOp::kAllReduce, bytes).ns();
    return static_cast<double>(ns) * 1e-9;
  };
  const double half = time(4), whole = time(8);
  const double ideal_half = 2.0 * 7 / 8 * bytes / (4 * nic);
  EXPECT_GT(half, ideal_half) << "faster than the NICs allow";
  EXPECT_LT(half, 1.15 * ideal_half) << half << " s against " << ideal_half << " s";
  EXPECT_NEAR(half / whole, (7.0 / 8 / 4) / (15.0 / 16 / 8), 0.1) << half << " " << whole;
}

TEST(PartialNode, CountsThatWouldShareANicAcrossNodesAreRefused) {
  try {
    partial_spec("dgx1", 6, 2, {"platform.nic.count=2"});
    FAIL() << "6 of 8 GPUs with 2 NICs on 2 nodes was accepted";
  } catch (const ParameterError& e) {
    EXPECT_EQ(e.key(), "cluster.gpus_per_node");
    EXPECT_THAT(e.what(), HasSubstr("use 1, 2, 3, 4, 7 GPUs per node, or all 8"));
  }
  // On one node no NIC carries the job's traffic: any count is a job.
  EXPECT_EQ(partial_spec("dgx1", 6, 1, {"platform.nic.count=2"}).node.gpus, 6);
  EXPECT_EQ(partial_spec("hgx_h100", 8, 2).name, "hgx_h100");
}

// A listener that records when each flow ended.
struct Ends : FlowListener {
  explicit Ends(Engine& e) : engine(e) {}
  void flow_finished(std::uint64_t tag) override { at[tag] = engine.now().ns(); }
  Engine& engine;
  std::map<std::uint64_t, std::int64_t> at;
};

TEST(FlowNetwork, OneFlowRunsAtTheLinkRate) {
  Engine engine;
  FlowNetwork net(engine, {1e9});
  Ends ends(engine);
  const std::vector<std::uint32_t> route{0};
  net.start(route, 1e6, std::numeric_limits<double>::infinity(), &ends, 1);
  engine.run();
  EXPECT_EQ(ends.at[1], 1'000'000);  // 1 MB at 1 GB/s = 1 ms
}

TEST(FlowNetwork, TwoFlowsOnOneLinkEachGetHalf) {
  Engine engine;
  FlowNetwork net(engine, {1e9});
  Ends ends(engine);
  const std::vector<std::uint32_t> route{0};
  const double inf = std::numeric_limits<double>::infinity();
  net.start(route, 1e6, inf, &ends, 1);
  net.start(route, 1e6, inf, &ends, 2);
  engine.run();
  EXPECT_EQ(ends.at[1], 2'000'000);
  EXPECT_EQ(ends.at[2], 2'000'000);
  net.settle();
  EXPECT_DOUBLE_EQ(net.usage()[0].bytes, 2e6);
  EXPECT_EQ(net.usage()[0].busy, Duration(2'000'000));
}

TEST(FlowNetwork, MaxMinFairnessWithDifferentBottlenecks) {
  // Links: 0 (1 GB/s) shared by flows A and B; 1 (10 GB/s) carries B and C.
  // Max-min: A = B = 0.5 GB/s (link 0), C = 9.5 GB/s (the rest of link 1).
  Engine engine;
  FlowNetwork net(engine, {1e9, 10e9});
  Ends ends(engine);
  const double inf = std::numeric_limits<double>::infinity();
  net.start(std::vector<std::uint32_t>{0}, 0.5e6, inf, &ends, 'A');
  net.start(std::vector<std::uint32_t>{0, 1}, 1e6, inf, &ends, 'B');
  net.start(std::vector<std::uint32_t>{1}, 9.5e6, inf, &ends, 'C');
  engine.run();
  EXPECT_EQ(ends.at['A'], 1'000'000);  // 0.5 MB at 0.5 GB/s
  EXPECT_EQ(ends.at['C'], 1'000'000);  // 9.5 MB at 9.5 GB/s
  // B: 0.5 MB in the first ms, then alone on link 0: 0.5 MB at 1 GB/s.
  EXPECT_EQ(ends.at['B'], 1'500'000);
}

TEST(FlowNetwork, RateCapActsAsAPrivateLink) {
  Engine engine;
  FlowNetwork net(engine, {10e9});
  Ends ends(engine);
  net.start(std::vector<std::uint32_t>{0}, 1e6, 1e9, &ends, 1);  // capped at 1 GB/s
  net.start(std::vector<std::uint32_t>{0}, 9e6, std::numeric_limits<double>::infinity(), &ends, 2);
  engine.run();
  EXPECT_EQ(ends.at[1], 1'000'000);
  EXPECT_EQ(ends.at[2], 1'000'000);  // takes the other 9 GB/s
}

TEST(FlowNetwork, OnlyTheAffectedComponentIsRecomputed) {
  // Two flows on link 0 and one on link 1: ending a flow on link 0 must not
  // touch the flow on link 1, whose end stays exact.
  Engine engine;
  FlowNetwork net(engine, {1e9, 3e9});
  Ends ends(engine);
  const double inf = std::numeric_limits<double>::infinity();
  net.start(std::vector<std::uint32_t>{1}, 3e6, inf, &ends, 9);
  net.start(std::vector<std::uint32_t>{0}, 1e6, inf, &ends, 1);
  net.start(std::vector<std::uint32_t>{0}, 3e6, inf, &ends, 2);
  engine.run();
  EXPECT_EQ(ends.at[9], 1'000'000);
  EXPECT_EQ(ends.at[1], 2'000'000);
  EXPECT_EQ(ends.at[2], 4'000'000);  // 1 MB by t=2 ms, then 2 MB alone
  // One recompute for the three starts (same instant) and one per end.
  EXPECT_EQ(net.recomputations(), 4u);
}

// Each link's usage and what the network and its engine counted, once the
// engine has run out.
struct NetworkCounts {
  std::vector<double> bytes;
  std::vector<std::int64_t> busy;
  std::uint64_t events = 0;
  std::uint64_t flows = 0;
  std::uint64_t recomputations = 0;
  std::uint64_t pruned = 0;
};

NetworkCounts settle_and_count(FlowNetwork& net, const Engine& engine) {
  net.settle();
  NetworkCounts c;
  for (const auto& u : net.usage()) {
    c.bytes.push_back(u.bytes);
    c.busy.push_back(u.busy.ns());
  }
  c.events = engine.events_processed();
  c.flows = net.flows_started();
  c.recomputations = net.recomputations();
  c.pruned = net.links_pruned();
  return c;
}

// What a random network did: each flow's end, and the counts.
struct FlowRun {
  std::map<std::uint64_t, std::int64_t> ends;
  NetworkCounts n;
};

// Random links in four tiers of capacity (some equal, for ties), random
// routes over them, flows started at instants that often coincide, some
// with a rate cap of their own; run with and without pruning.
FlowRun run_random_network(std::uint64_t seed, bool prune) {
  std::mt19937_64 rng(seed);
  const auto pick = [&rng](std::uint64_t n) { return static_cast<std::size_t>(rng() % n); };
  const std::size_t links = 2 + pick(24);
  std::vector<double> caps(links);
  const double tiers[] = {1e8, 1e9, 1.2e10, 1.2e11};
  for (auto& c : caps) c = tiers[pick(4)] * (pick(3) == 0 ? 1.0 : 1 + static_cast<double>(pick(1000)) / 1000);
  Engine engine;
  FlowNetwork net(engine, caps, prune);
  Ends ends(engine);
  struct Planned {
    std::vector<std::uint32_t> route;
    double bytes = 0;
    double cap = 0;
  };
  std::vector<Planned> flows(1 + pick(80));
  for (auto& f : flows) {
    const std::size_t hops = 1 + pick(std::min<std::size_t>(4, links));
    while (f.route.size() < hops) {
      const auto l = static_cast<std::uint32_t>(pick(links));
      if (std::find(f.route.begin(), f.route.end(), l) == f.route.end()) f.route.push_back(l);
    }
    f.bytes = pick(4) == 0 ? 1e6 : static_cast<double>(1 + pick(10'000'000));
    f.cap = pick(5) == 0 ? tiers[pick(4)] * 0.7 : std::numeric_limits<double>::infinity();
  }
  const HandlerId start = engine.register_handler([&](Engine&, std::uint64_t i) {
    net.start(flows[i].route, flows[i].bytes, flows[i].cap, &ends, i);
  });
  for (std::size_t i = 0; i < flows.size(); ++i) {
    engine.schedule(Time(static_cast<std::int64_t>(pick(20)) * 100'000), start, i);
  }
  engine.run();
  return {ends.at, settle_and_count(net, engine)};
}

TEST(FlowNetwork, LeavingOutLinksThatCannotBottleneckChangesNothing) {
  std::uint64_t pruned = 0;
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    const FlowRun all = run_random_network(seed, false);
    const FlowRun some = run_random_network(seed, true);
    ASSERT_EQ(all.ends, some.ends) << "seed " << seed;
    ASSERT_EQ(all.n.bytes, some.n.bytes) << "seed " << seed;  // to the last bit
    ASSERT_EQ(all.n.busy, some.n.busy) << "seed " << seed;
    ASSERT_EQ(all.n.recomputations, some.n.recomputations) << "seed " << seed;
    ASSERT_EQ(all.n.events, some.n.events) << "seed " << seed;
    EXPECT_EQ(all.n.pruned, 0u);
    pruned += some.n.pruned;
  }
  EXPECT_GT(pruned, 1000u);  // the pruning was exercised
}

TEST(FlowNetwork, RejectsNonPositiveCapacity) {
  Engine engine;
  EXPECT_THROW(FlowNetwork(engine, {1e9, 0.0}), std::invalid_argument);
  EXPECT_THROW(FlowNetwork(engine, {-1.0}), std::invalid_argument);
}

Scenario uncontended(std::int64_t nodes, CollectiveAlgorithm algorithm, const std::string& model) {
  // One GPU per node on a single switch: no two transfers of a step share a link.
  Scenario s;
  s.nodes = nodes;
  s.gpus_per_node = 1;
  s.inter_node.preset = "ib_edr100";
  s.algorithm = algorithm;
  s.network_model = model;
  // Colocated servers share their node's PCIe uplink with its worker: that is
  // contention, which the closed form leaves out. Servers of their own do not.
  s.servers_colocated = false;
  return s;
}

Scenario tree_on_nodes(std::int64_t nodes) {
  Scenario s;
  s.nodes = nodes;
  s.gpus_per_node = 4;
  s.intra_node.preset = "nvlink2";
  s.inter_node.preset = "ib_edr100";
  s.algorithm = CollectiveAlgorithm::kDoubleBinaryTree;
  s.library = CollectiveLibrary::kGeneric;  // the textbook tree's lock-step steps
  s.network_model = "flow";
  return s;
}

TEST(CollectivePlanner, KeepsAPlanPerCallComparedByValue) {
  const CommModel comm = scenario_comm_model(tree_on_nodes(4));
  CollectivePlanner planner(comm.platform());
  const CollectiveCall a = comm.call(CollectiveOp::kAllReduce, 1e6);
  const auto plan = planner.plan(a);
  EXPECT_EQ(planner.plan(a), plan);
  EXPECT_EQ(planner.kept_transfers(), plan->transfers());
  // The same endpoints in another vector: the same plan.
  const std::vector<VertexId> copy = *a.endpoints;
  CollectiveCall b = a;
  b.endpoints = &copy;
  EXPECT_EQ(planner.plan(b), plan);
  // Other bytes, or other endpoints: another plan.
  EXPECT_NE(planner.plan(comm.call(CollectiveOp::kAllReduce, 2e6)), plan);
  std::vector<VertexId> reversed(a.endpoints->rbegin(), a.endpoints->rend());
  b.endpoints = &reversed;
  const auto other = planner.plan(b);
  EXPECT_NE(other, plan);
  // Each transfer's route is the platform's between its endpoints.
  const auto steps = decompose(a.op, a.algorithm, a.shape, a.bytes);
  ASSERT_EQ(plan->steps.size(), steps.size());
  std::size_t t = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(plan->steps[i].end - plan->steps[i].begin, steps[i].transfers.size());
    for (const auto& x : steps[i].transfers) {
      const Route expected = comm.platform().route((*a.endpoints)[x.src], (*a.endpoints)[x.dst]);
      EXPECT_EQ(plan->route[t]->links, expected.links);
      EXPECT_EQ(plan->bytes[t], x.bytes);
      ++t;
    }
  }
  EXPECT_THROW(planner.plan(CollectiveCall{}), std::logic_error);  // no endpoints
}

// HSDP's collectives in several places at once (CollectiveCall): a shard
// group's call in every group is its own transfers again on each group's
// nodes; the rails' all-reduces are one ring a rail, rank m of rail j being
// endpoint j + m x rails. Both are other plans than the call alone.
TEST(CollectivePlanner, RunsACallInEveryGroupAndOnEveryRail) {
  const CommModel comm = scenario_comm_model(tree_on_nodes(4));  // 4 nodes of 4 GPUs
  const Platform& platform = comm.platform();
  CollectivePlanner planner(platform);
  // The first two nodes' collective, and the same on the last two.
  const CommModel group(comm.shared_platform(), comm.settings(), 0, 2);
  const CollectiveCall one = group.call(CollectiveOp::kAllReduce, 1e6);  // the scenario's tree
  CollectiveCall both = one;
  both.groups = 2;
  both.group_nodes = 2;
  const auto alone = planner.plan(one);
  const auto twice = planner.plan(both);
  EXPECT_NE(alone, twice);
  ASSERT_EQ(twice->transfers(), 2 * alone->transfers());
  ASSERT_EQ(twice->steps.size(), alone->steps.size());
  for (std::size_t i = 0; i < alone->steps.size(); ++i) {
    const auto& a = alone->steps[i];
    const auto& b = twice->steps[i];
    ASSERT_EQ(b.end - b.begin, 2 * (a.end - a.begin));
    for (std::uint32_t t = a.begin; t < a.end; ++t) {
      const std::uint32_t first = b.begin + (t - a.begin);
      const std::uint32_t second = first + (a.end - a.begin);
      EXPECT_EQ(twice->route[first]->links, alone->route[t]->links);
      for (std::size_t k = 0; k < alone->route[t]->links.size(); ++k) {
        const auto moved = platform.shifted_link(alone->route[t]->links[k], 2);
        ASSERT_TRUE(moved.has_value());
        EXPECT_EQ(twice->route[second]->links[k], *moved);
      }
    }
  }
  both.group_nodes = 3;  // the second copy would end past the last node
  EXPECT_THROW((void)planner.plan(both), std::logic_error);

  // Rails: 4 rings of 4 ranks, one a node, GPU j of every node in ring j.
  Scenario rail_s = tree_on_nodes(4);
  rail_s.gpus_per_node = 1;
  const CommModel rail = scenario_comm_model(rail_s);
  CollectiveCall rings = rail.call(CollectiveOp::kAllReduce, 1e6);
  rings.algorithm = CollectiveAlgorithm::kRing;
  rings.rails = 4;
  rings.endpoints = &comm.endpoints();
  const auto planned = planner.plan(rings);
  const auto steps =
      decompose(CollectiveOp::kAllReduce, CollectiveAlgorithm::kRing, rings.shape, 1e6);
  std::size_t per_rail = 0;
  for (const auto& st : steps) per_rail += st.transfers.size();
  EXPECT_EQ(planned->transfers(), 4 * per_rail);
  for (std::size_t t = 0; t < planned->transfers(); ++t) {
    // Every transfer between nodes, from a GPU to the same GPU of another.
    EXPECT_TRUE(planned->route[t]->crosses_nodes);
  }
  const Route& first = *planned->route[0];
  EXPECT_EQ(first.links, platform.route(comm.endpoints()[0], comm.endpoints()[4]).links);
}

TEST(CollectivePlanner, KeepsNothingPastItsBudget) {
  const CommModel comm = scenario_comm_model(tree_on_nodes(4));
  CollectivePlanner planner(comm.platform(), 10);  // fewer transfers than any plan here
  const CollectiveCall a = comm.call(CollectiveOp::kAllReduce, 1e6);
  const auto first = planner.plan(a);
  EXPECT_GT(first->transfers(), 10u);
  EXPECT_NE(planner.plan(a), first);
  EXPECT_EQ(planner.kept_transfers(), 0u);
}

TEST(CollectivePlanner, SharedOrNotAndOnThreadsTheTimesAreTheSame) {
  const Scenario s = tree_on_nodes(8);
  const std::vector<double> sizes = {512, 4096, 1e6, 4096, 3e7};
  const CommModel one_by_one = scenario_comm_model(s);
  const CommModel threaded = scenario_comm_model(s);
  threaded.prepare_isolated(CollectiveOp::kAllReduce, sizes, 3);
  for (const double bytes : sizes) {
    const Duration expected = one_by_one.isolated_time(CollectiveOp::kAllReduce, bytes);
    EXPECT_EQ(threaded.isolated_time(CollectiveOp::kAllReduce, bytes), expected) << bytes;
    // A runner with a planner of its own.
    Engine engine;
    FlowNetwork net(engine, one_by_one.platform().link_capacities());
    CollectiveRunner runner(engine, net, one_by_one.platform());
    runner.run(one_by_one.call(CollectiveOp::kAllReduce, bytes), [] {});
    engine.run();
    EXPECT_EQ(engine.now() - Time::zero(), expected) << bytes;
  }
  // A planner for another platform is refused.
  const CommModel elsewhere = scenario_comm_model(tree_on_nodes(2));
  Engine engine;
  FlowNetwork net(engine, one_by_one.platform().link_capacities());
  EXPECT_THROW(CollectiveRunner(engine, net, one_by_one.platform(), &elsewhere.planner()),
               std::logic_error);
}

// Runs `sizes` one after another on one network, each alone (as a list
// schedule runs them), and returns every link's usage, the ends, and the
// engine's and network's counts.
struct SequenceRun {
  std::vector<std::int64_t> ends;
  NetworkCounts n;
  std::uint64_t replayed = 0;
};

SequenceRun run_sequence(const CommModel& comm, const std::vector<double>& sizes, bool alone) {
  Engine engine;
  FlowNetwork net(engine, comm.platform().link_capacities());
  CollectiveRunner runner(engine, net, comm.platform(), &comm.planner());
  SequenceRun out;
  std::size_t next = 0;
  std::function<void()> start = [&] {
    if (next > 0) out.ends.push_back(engine.now().ns());
    if (next == sizes.size()) return;
    const CollectiveCall call = comm.call(CollectiveOp::kAllReduce, sizes[next++]);
    if (alone) {
      runner.run_alone(call, start);
    } else {
      runner.run(call, start);
    }
  };
  start();
  engine.run();
  out.n = settle_and_count(net, engine);
  out.replayed = runner.collectives_replayed();
  return out;
}

TEST(CollectiveRunner, ARecordedRunAloneReplaysToTheLastBit) {
  // Sizes whose bytes do not add up exactly, so the order of additions shows.
  const std::vector<double> sizes = {4096, 1e6 / 3, 333333.3, 4096, 2.5e7 / 7, 1e6 / 3, 777.7};
  for (const auto algorithm : {CollectiveAlgorithm::kDoubleBinaryTree, CollectiveAlgorithm::kRing,
                               CollectiveAlgorithm::kHierarchical,
                               CollectiveAlgorithm::kHalvingDoubling}) {
    Scenario s = tree_on_nodes(7);
    s.algorithm = algorithm;
    SCOPED_TRACE(to_string(algorithm));
    const CommModel recorded = scenario_comm_model(s);
    recorded.prepare_isolated(CollectiveOp::kAllReduce, sizes, 2);  // records each size
    const CommModel fresh = scenario_comm_model(s);  // its planner has no recording
    const SequenceRun replayed = run_sequence(recorded, sizes, true);
    const SequenceRun ran = run_sequence(fresh, sizes, true);
    EXPECT_EQ(replayed.replayed, sizes.size());
    EXPECT_EQ(ran.replayed, 0u);
    EXPECT_EQ(replayed.ends, ran.ends);
    EXPECT_EQ(replayed.n.bytes, ran.n.bytes);  // every link, to the last bit
    EXPECT_EQ(replayed.n.busy, ran.n.busy);
    EXPECT_EQ(replayed.n.events, ran.n.events);
    EXPECT_EQ(replayed.n.flows, ran.n.flows);
    EXPECT_EQ(replayed.n.recomputations, ran.n.recomputations);
    EXPECT_EQ(replayed.n.pruned, ran.n.pruned);
    // run() never replays.
    EXPECT_EQ(run_sequence(recorded, sizes, false).replayed, 0u);
  }
}

TEST(CollectiveRunner, CappedFlowsReplayToTheLastBitToo) {
  // Over 10 Gb Ethernet with the TCP streams' bound flows between nodes are
  // capped, and NCCL's flows are paced: ties between capped flows go by
  // start order, not by flow number, so a recording replays them exactly.
  for (const std::string library : {"generic", "nccl"}) {
    SCOPED_TRACE(library);
    const Scenario s = load_scenario(
        std::nullopt, {"cluster.nodes=4", "cluster.gpus_per_node=4", "network.inter_node=10gbe",
                       "network.model=flow", "network.algorithm=double_binary_tree",
                       "network.library=" + library, "platform.nic.tcp_stream_rate=1.25GB/s",
                       "platform.nic.tcp_streams=2"});
    const std::vector<double> sizes = {4096, 1e6, 1e6 / 3, 4096};
    const CommModel recorded = scenario_comm_model(s);
    ASSERT_TRUE(recorded.platform().inter_node_streams().on());
    recorded.prepare_isolated(CollectiveOp::kAllReduce, sizes, 2);
    const CommModel fresh = scenario_comm_model(s);
    const SequenceRun replayed = run_sequence(recorded, sizes, true);
    const SequenceRun ran = run_sequence(fresh, sizes, true);
    EXPECT_EQ(replayed.replayed, sizes.size());
    EXPECT_EQ(ran.replayed, 0u);
    EXPECT_EQ(replayed.ends, ran.ends);
    EXPECT_EQ(replayed.n.bytes, ran.n.bytes);
    EXPECT_EQ(replayed.n.busy, ran.n.busy);
    EXPECT_EQ(replayed.n.events, ran.n.events);
  }
}

TEST(FlowVersusAnalytical, AgreeWithoutContention) {
  // NCCL's ring and tree (paced pipelines) and the textbook algorithms'
  // lock-step steps, one GPU a node on one switch.
  for (const auto library : {CollectiveLibrary::kNccl, CollectiveLibrary::kGeneric}) {
    for (auto algorithm : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kHalvingDoubling,
                           CollectiveAlgorithm::kDoubleBinaryTree,
                           CollectiveAlgorithm::kParameterServer}) {
      if (!library_runs(library, algorithm)) continue;
      for (std::int64_t p = 2; p <= 64; p *= 2) {
        Scenario sa = uncontended(p, algorithm, "analytical");
        Scenario sf = uncontended(p, algorithm, "flow");
        sa.library = sf.library = library;
        const CommModel analytical = scenario_comm_model(sa);
        const CommModel flow = scenario_comm_model(sf);
        for (double bytes : {4096.0, 1e6, 64e6}) {
          const auto a = analytical.isolated_time(CollectiveOp::kAllReduce, bytes);
          const auto f = flow.isolated_time(CollectiveOp::kAllReduce, bytes);
          // The flow model rounds each step's end up to a whole nanosecond.
          const auto steps =
              library == CollectiveLibrary::kNccl
                  ? 1
                  : step_count(decompose(CollectiveOp::kAllReduce, algorithm, flow.shape(), bytes));
          EXPECT_LE(std::llabs(a.ns() - f.ns()), steps + 1)
              << to_string(library) << " " << to_string(algorithm) << " P=" << p << " M=" << bytes
              << ": analytical " << a.ns() << " ns, flow " << f.ns() << " ns";
        }
      }
    }
  }
}

TEST(FlowVersusAnalytical, ASharedNicCostsTheSameInBoth) {
  // 4 GPUs behind one 100GbE NIC: a 2D torus sends 4 column rings through it
  // at once, each getting a quarter. Both models charge that now.
  Scenario s;
  s.platform.preset = "v100_pcie_4x_100gbe";
  s.nodes = 4;
  s.gpus_per_node = 4;
  s.algorithm = CollectiveAlgorithm::kTorus2d;
  const CommModel analytical = scenario_comm_model(s);
  s.network_model = "flow";
  const CommModel flow = scenario_comm_model(s);
  const double bytes = 256e6;
  const auto a = analytical.isolated_time(CollectiveOp::kAllReduce, bytes);
  const auto f = flow.isolated_time(CollectiveOp::kAllReduce, bytes);
  const auto steps = step_count(decompose(CollectiveOp::kAllReduce, CollectiveAlgorithm::kTorus2d,
                                          flow.shape(), bytes));
  EXPECT_LE(std::llabs(a.ns() - f.ns()), steps + 1) << "analytical " << a.ns() << " flow " << f.ns();
  // The column all-reduce moves 2(Y-1)/Y x M/X bytes per ring over the NIC,
  // four rings at once: at least that over the NIC's rate.
  const double nic = find_link_preset("100gbe")->bandwidth_bytes_per_s;
  const double shared_columns_s = 4 * 2.0 * 3 / 4 * (bytes / 4) / nic;
  EXPECT_GE(static_cast<double>(a.ns()) * 1e-9, shared_columns_s);
}

}  // namespace
}  // namespace ssgd::sim

namespace ssgd::sim {
namespace {

// Published nccl-tests all_reduce_perf bus bandwidth on one 8 x H100 SXM node
// with NVLink SHARP off (ring): "NCCL can get an effective NVLink bandwidth of
// 370GB/s" (NVIDIA, github.com/NVIDIA/nccl-tests/issues/212) and 368.76 GB/s
// measured on an HGX H100 with NVLS disabled (github.com/NVIDIA/nccl-tests/
// issues/309). docs/validation.md records the whole curve.
TEST(HgxH100Validation, RingBusBandwidthAgainstPublishedNcclTests) {
  Scenario s;
  s.platform.preset = "hgx_h100";
  s.gpus_per_node = 8;
  s.nodes = 1;
  s.algorithm = CollectiveAlgorithm::kRing;
  s.network_model = "flow";
  const CommModel comm = scenario_comm_model(s);
  std::printf("\n| size | predicted time | predicted busbw (GB/s) |\n|---|---|---|\n");
  double large = 0;
  for (double bytes = 8.0 * (1 << 20); bytes <= 8.0 * (1 << 30); bytes *= 2) {
    const Duration t = comm.isolated_time(CollectiveOp::kAllReduce, bytes);
    const double busbw = bytes / (static_cast<double>(t.ns()) * 1e-9) *
                         bus_bandwidth_factor(CollectiveOp::kAllReduce, 8) / 1e9;
    std::printf("| %.0f MiB | %lld ns | %.1f |\n", bytes / (1 << 20), static_cast<long long>(t.ns()), busbw);
    if (bytes >= 1024.0 * (1 << 20)) large = busbw;
  }
  EXPECT_NEAR(large, 368.76, 0.10 * 368.76);
}

}  // namespace
}  // namespace ssgd::sim
