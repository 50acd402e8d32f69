#include "simulator/timeline.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

#include "simulator/replay.h"

namespace ssgd::sim {
namespace {

TEST(Timeline, ChromeTraceWithTracksPerRankAndResource) {
  trace::LayerProfile p;
  p.layers.push_back({0, "conv \"1\"", Duration(1500), Duration(2500), 1000, std::nullopt});
  p.layers.push_back({1, "fc", Duration(700), Duration(900), 2000, std::nullopt});
  Scenario s;
  s.nodes = 2;
  s.gpus_per_node = 2;
  s.iterations = 2;
  ReplayOptions o;
  o.keep_schedule = true;
  const auto r = replay(p, s, o);
  std::ostringstream a, b;
  write_timeline(*r.graph, *r.schedule, {2}, a);
  write_timeline(*r.graph, *r.schedule, {2}, b);
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

}  // namespace
}  // namespace ssgd::sim
