#include "presentation/report/timeline.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>

#include "simulator/replay/replay.h"

namespace ssgd::sim {
namespace {

TEST(Timeline, ChromeTraceWithTracksPerRankAndResource) {
  trace::LayerProfile p;
  p.layers.push_back({0, "conv \"1\"", Duration(1500), Duration(2500), 1000, std::nullopt, std::nullopt, std::nullopt});
  p.layers.push_back({1, "fc", Duration(700), Duration(900), 2000, std::nullopt, std::nullopt, std::nullopt});
  Scenario s;
  s.nodes = 2;
  s.gpus_per_node = 2;
  s.iterations = 2;
  ReplayOptions o;
  o.keep_schedule = true;
  const auto r = replay(p, s, o);
  std::ostringstream a, b;
  report::write_timeline(*r.task_graph, *r.schedule, {2}, a);
  report::write_timeline(*r.task_graph, *r.schedule, {2}, b);
  EXPECT_EQ(a.str(), b.str());  // deterministic
  const auto j = nlohmann::json::parse(a.str());
  std::set<int> pids;
  int complete = 0;
  bool network_named = false;
  for (const auto& e : j["traceEvents"]) {
    pids.insert(e["pid"].get<int>());
    if (e["ph"] == "X") {
      ++complete;
      EXPECT_GE(e["dur"].get<double>(), 0.0);
    }
    if (e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "network") {
      network_named = true;
    }
  }
  EXPECT_TRUE(network_named);
  EXPECT_EQ(pids, (std::set<int>{0, 1, 2}));  // network, ranks 0 and 1 of 4
  // Per shown rank and iteration: io, h2d, 2 forward, 2 backward, update; plus 2 comms per iteration.
  EXPECT_EQ(complete, 2 * 2 * 7 + 2 * 2);
  EXPECT_NE(a.str().find("\"ts\":1.500"), std::string::npos);  // ns precision: 1500 ns
}

// Communication shows on one track per link, under both network models:
// every busy slice lies within a collective, and the links of the nodes
// holding the shown ranks are the ones with tracks.
TEST(Timeline, LinkTracksShowWhenEachLinkCarriesTraffic) {
  trace::LayerProfile p;
  for (int l = 0; l < 3; ++l) {
    p.layers.push_back({l, fmt::format("l{}", l), Duration(100'000), Duration(200'000),
                        4 << 20, std::nullopt, std::nullopt, std::nullopt});
  }
  for (const std::string model : {"analytical", "flow"}) {
    SCOPED_TRACE(model);
    Scenario s;
    s.nodes = 3;
    s.gpus_per_node = 2;
    s.iterations = 2;
    s.network_model = model;
    s.algorithm = CollectiveAlgorithm::kRing;
    ReplayOptions o;
    o.keep_schedule = true;
    o.link_track_ranks = 2;  // node 0's links and its NIC's
    const auto r = replay(p, s, o);
    ASSERT_FALSE(r.link_tracks.empty());
    std::vector<std::pair<double, double>> comms;  // [start, end) of each collective, in us
    for (dag::TaskId t = 0; t < r.task_graph->task_count(); ++t) {
      if (r.task_graph->task(t).kind != dag::TaskKind::kComm) continue;
      comms.emplace_back(static_cast<double>(r.schedule->start[t].ns()) / 1e3,
                         static_cast<double>(r.schedule->end[t].ns()) / 1e3);
    }
    std::ostringstream out;
    report::write_timeline(*r.task_graph, *r.schedule, {0, &r.link_tracks}, out);
    const auto j = nlohmann::json::parse(out.str());
    int links_pid = -1;
    std::set<std::string> track_names;
    int slices = 0;
    for (const auto& e : j["traceEvents"]) {
      if (e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "links") {
        links_pid = e["pid"].get<int>();
      }
    }
    ASSERT_GE(links_pid, 0) << "no links process";
    for (const auto& e : j["traceEvents"]) {
      if (e["pid"].get<int>() != links_pid) continue;
      if (e["ph"] == "M" && e["name"] == "thread_name") {
        track_names.insert(e["args"]["name"].get<std::string>());
      }
      if (e["ph"] != "X") continue;
      ++slices;
      EXPECT_EQ(e["cat"], "link");
      const double ts = e["ts"].get<double>();
      const double end = ts + e["dur"].get<double>();
      EXPECT_GT(e["dur"].get<double>(), 0.0);
      const bool inside = std::any_of(comms.begin(), comms.end(), [&](const auto& c) {
        return ts >= c.first - 1e-3 && end <= c.second + 1e-3;
      });
      EXPECT_TRUE(inside) << "slice at " << ts << " us outside every collective";
    }
    EXPECT_EQ(track_names.size(), r.link_tracks.size());
    EXPECT_GE(slices, 2 * 3);  // every collective of both iterations crosses node 0's NIC
    bool nic = false;
    for (const auto& name : track_names) {
      EXPECT_NE(name.find("node0"), std::string::npos) << name;  // only node 0's links
      nic = nic || name.find("nic") != std::string::npos;
    }
    EXPECT_TRUE(nic);
    // All ranks: tracks for the other nodes' links too.
    o.link_track_ranks = 0;
    EXPECT_GT(replay(p, s, o).link_tracks.size(), r.link_tracks.size());
  }
}

// The generic platform of one GPU a node has no PCIe to speak of (a free hop
// between GPU and NIC, NodeSpec::pcie_free): no track draws it, as no row of
// the link utilisation shows it.
TEST(Timeline, NoTrackForTheFreePcieHop) {
  trace::LayerProfile p;
  p.layers.push_back({0, "l0", Duration(100'000), Duration(200'000), 4 << 20, std::nullopt,
                      std::nullopt, std::nullopt});
  Scenario s;
  s.nodes = 3;
  s.iterations = 2;
  ReplayOptions o;
  o.keep_schedule = true;
  const auto r = replay(p, s, o);
  ASSERT_FALSE(r.link_tracks.empty());
  for (const auto& t : r.link_tracks) {
    EXPECT_EQ(t.name.find("pcie"), std::string::npos) << t.name;
    EXPECT_NE(t.name.find("nic"), std::string::npos) << t.name;
  }
}

}  // namespace
}  // namespace ssgd::sim
