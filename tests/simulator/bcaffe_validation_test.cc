// Validation against the MG-WFBP authors' GoogLeNet measurements on a 10GbE
// cluster (../shared/data/bcaffe, read as its README says). The per-layer
// backward and all-reduce times measured at 2, 4 and 8 nodes are replayed,
// forward time is half the backward time, and:
//   - the simulated WFBP iteration equals the closed form exactly;
//   - the predicted speedups over one node are printed next to the measured
//     ones (docs/validation.md holds the table) and must stay within a
//     tolerance band, so a model change that breaks them shows up.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "simulator/network/comm_model.h"
#include "simulator/replay/closed_form.h"
#include "simulator/replay/replay.h"
#include "simulator/scenario/scenario_network.h"
#include "traces/import/bcaffe/bcaffe_log.h"

namespace ssgd::sim {
namespace {

const std::filesystem::path kData = "../shared/data/bcaffe";

struct Measured {
  int nodes;
  double wfbp;
  double no_overlap;
};
// The MG-WFBP paper's measured speedups, as listed in ../shared/data/README.md.
constexpr Measured kMeasured[] = {{2, 1.83, 1.53}, {4, 3.67, 2.82}, {8, 6.16, 5.44}};

Duration replay_iteration(const trace::LayerProfile& p, int nodes, OverlapPolicy policy) {
  Scenario s;
  s.nodes = nodes;
  s.gpus_per_node = 1;
  s.inter_node.preset = "10gbe";
  s.overlap_policy = policy;
  s.iterations = 5;
  ReplayOptions o;
  o.single_worker_baseline = false;
  const auto r = replay(p, s, o);
  const CommModel comm = scenario_comm_model(s);
  EXPECT_EQ(r.iteration_time, closed_form_iteration_time(policy, layer_times(p, s, comm)))
      << nodes << " nodes, " << to_string(policy);
  return r.iteration_time;
}

TEST(BcaffeValidation, GoogLeNetSpeedupsOn10GbE) {
  if (!std::filesystem::exists(kData / "tmpcomm.log")) {
    GTEST_SKIP() << "reference data not found at " << kData << " (run from the repository root "
                 << "with ../shared/data present)";
  }
  const auto one = trace::read_bcaffe_log(kData / "tmpcomm.log");
  const Duration t1 = replay_iteration(one, 1, OverlapPolicy::kWfbp);
  std::printf("\n| nodes | policy | t_iter 1 node (ms) | t_iter N nodes (ms) | predicted speedup | measured | error |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const auto& m : kMeasured) {
    const auto p = trace::read_bcaffe_log(kData / ("tmp" + std::to_string(m.nodes) + "comm.log"));
    ASSERT_TRUE(p.has_comm());
    for (auto policy : {OverlapPolicy::kWfbp, OverlapPolicy::kBsp}) {
      const Duration tn = replay_iteration(p, m.nodes, policy);
      const double speedup = m.nodes * static_cast<double>(t1.ns()) / static_cast<double>(tn.ns());
      const double measured = policy == OverlapPolicy::kWfbp ? m.wfbp : m.no_overlap;
      const double err = (speedup - measured) / measured;
      std::printf("| %d | %s | %.2f | %.2f | %.2f | %.2f | %+.1f%% |\n", m.nodes, to_string(policy),
                  static_cast<double>(t1.ns()) / 1e6, static_cast<double>(tn.ns()) / 1e6, speedup,
                  measured, 100 * err);
      // A band, not a target: replaying measured per-layer times under WFBP
      // should land near the measured WFBP speedups. BSP here replays the
      // per-layer all-reduces one after another, while the measured "no
      // overlap" run used one merged all-reduce, so it is reported but not
      // held to a band (docs/validation.md explains).
      if (policy == OverlapPolicy::kWfbp) {
        EXPECT_LT(std::fabs(err), 0.15) << m.nodes << " nodes " << to_string(policy);
      }
    }
  }
}

}  // namespace
}  // namespace ssgd::sim
