// replay() builds its DAG an iteration window at a time unless it keeps the
// schedule; every figure it reports is the whole graph's, to the nanosecond:
// iterations, breakdown, critical path, collectives, links, counts, under
// the policies, perturbations, network models and workload keys that shape
// the DAG.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "simulator/input/scenario_inputs.h"
#include "simulator/replay/replay.h"
#include "simulator/scenario/scenario.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {
namespace {

const trace::LayerProfile& resnet() {
  static const auto p =
      trace::read_layer_profile_csv(SSGD_SOURCE_DIR "/traces/datasets/resnet50_v100.csv");
  return p;
}

const trace::LayerProfile& with_comm() {
  static const auto p =
      trace::read_layer_profile_csv(SSGD_SOURCE_DIR "/tests/data/profiles/with_comm.csv");
  return p;
}

void expect_identical(const ReplayResult& a, const ReplayResult& b) {
  EXPECT_EQ(a.iteration_times, b.iteration_times);
  EXPECT_EQ(a.iteration_time, b.iteration_time);
  EXPECT_EQ(a.throughput_samples_per_s, b.throughput_samples_per_s);
  EXPECT_EQ(a.breakdown.compute, b.breakdown.compute);
  EXPECT_EQ(a.breakdown.io, b.breakdown.io);
  EXPECT_EQ(a.breakdown.exposed_comm, b.breakdown.exposed_comm);
  EXPECT_EQ(a.breakdown.idle, b.breakdown.idle);
  EXPECT_EQ(a.critical_path.task_count, b.critical_path.task_count);
  EXPECT_EQ(a.critical_path.length, b.critical_path.length);
  EXPECT_EQ(a.critical_path.time_by_kind, b.critical_path.time_by_kind);
  EXPECT_EQ(a.critical_path.gaps, b.critical_path.gaps);
  EXPECT_EQ(a.comm_per_iteration, b.comm_per_iteration);
  EXPECT_EQ(a.collectives_per_iteration, b.collectives_per_iteration);
  ASSERT_EQ(a.collectives.size(), b.collectives.size());
  for (std::size_t k = 0; k < a.collectives.size(); ++k) {
    EXPECT_EQ(a.collectives[k].group, b.collectives[k].group);
    EXPECT_EQ(a.collectives[k].bytes, b.collectives[k].bytes);
    EXPECT_EQ(a.collectives[k].algorithm, b.collectives[k].algorithm);
    EXPECT_EQ(a.collectives[k].time, b.collectives[k].time);
    EXPECT_EQ(a.collectives[k].replayed, b.collectives[k].replayed);
    EXPECT_EQ(a.collectives[k].busbw_bytes_per_s, b.collectives[k].busbw_bytes_per_s);
  }
  ASSERT_EQ(a.link_kinds.size(), b.link_kinds.size());
  for (std::size_t k = 0; k < a.link_kinds.size(); ++k) {
    EXPECT_EQ(a.link_kinds[k].kind, b.link_kinds[k].kind);
    EXPECT_EQ(a.link_kinds[k].bytes, b.link_kinds[k].bytes);
    EXPECT_EQ(a.link_kinds[k].mean_utilisation, b.link_kinds[k].mean_utilisation);
    EXPECT_EQ(a.link_kinds[k].max_utilisation, b.link_kinds[k].max_utilisation);
  }
  ASSERT_EQ(a.busiest_links.size(), b.busiest_links.size());
  for (std::size_t k = 0; k < a.busiest_links.size(); ++k) {
    EXPECT_EQ(a.busiest_links[k].name, b.busiest_links[k].name);
    EXPECT_EQ(a.busiest_links[k].utilisation, b.busiest_links[k].utilisation);
  }
  EXPECT_EQ(a.ranks_simulated, b.ranks_simulated);
  EXPECT_EQ(a.tasks, b.tasks);
  EXPECT_EQ(a.edges, b.edges);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.closed_form, b.closed_form);
  EXPECT_EQ(a.single_worker_iteration_time, b.single_worker_iteration_time);
  EXPECT_EQ(a.repeat_iteration_times, b.repeat_iteration_times);
}

struct Case {
  const trace::LayerProfile* profile;
  std::vector<std::string> sets;
};

TEST(WindowedReplay, EveryFigureIsTheWholeGraphs) {
  const std::vector<std::string> small{"cluster.nodes=4", "cluster.gpus_per_node=2",
                                       "network.intra_node=nvlink2",
                                       "network.inter_node=ib_edr100", "iterations=5"};
  const std::vector<Case> cases = {
      {&resnet(), {}},
      {&resnet(), {"perturb.jitter=normal:0.1"}},
      {&resnet(), {"perturb.jitter=lognormal:0.3", "perturb.stragglers=3:40", "policy.overlap=bsp"}},
      {&resnet(), {"perturb.jitter=normal:0.05", "network.model=flow"}},
      {&resnet(), {"perturb.imbalance=0.3", "policy.overlap=mgwfbp"}},
      {&resnet(), {"perturb.jitter=uniform:0.2", "policy.overlap=ddp", "workload.io_time=3ms",
                   "workload.h2d_time=400us"}},
      {&resnet(), {"perturb.jitter=normal:0.1", "policy.overlap=horovod",
                   "policy.prefetch_depth=2", "workload.io_time=20ms", "workload.h2d_time=1ms"}},
      {&resnet(), {"perturb.jitter=normal:0.1", "policy.overlap=priority",
                   "policy.partition_size=2MB", "policy.credit_size=8MB",
                   "policy.schedule_overhead=20us"}},
      {&resnet(), {"perturb.jitter=normal:0.1", "policy.overlap=priority", "policy.credit_size=0B",
                   "policy.update=global", "policy.prefetch_depth=1", "workload.io_time=5ms"}},
      {&resnet(), {"perturb.jitter=normal:0.1", "perturb.jitter_draw=class",
                   "perturb.stragglers=1:20", "network.model=flow"}},
      {&resnet(), {"perturb.jitter=normal:0.1", "perturb.repeats=3"}},
      {&resnet(), {"perturb.jitter=normal:0.1", "iterations=1"}},
      {&resnet(), {"scaling.mode=strong", "scaling.global_batch=512", "perturb.jitter=normal:0.05"}},
      {&resnet(), {"network.algorithm=parameter_server", "network.servers=2",
                   "perturb.jitter=normal:0.05"}},
      {&with_comm(), {"perturb.jitter=normal:0.1"}},
      {&with_comm(), {"perturb.stragglers=0:50"}},
  };
  for (const auto& c : cases) {
    std::vector<std::string> sets = small;
    sets.insert(sets.end(), c.sets.begin(), c.sets.end());
    SCOPED_TRACE(fmt::format("{}", fmt::join(sets, " ")));
    const Scenario s = load_scenario(std::nullopt, sets);
    for (const bool fold : {true, false}) {
      ReplayOptions windowed;
      windowed.fold_ranks = fold;
      ReplayOptions whole = windowed;
      whole.whole_graph = true;
      const ReplayResult a = replay(*c.profile, s, windowed);
      const ReplayResult b = replay(*c.profile, s, whole);
      expect_identical(a, b);
      // Computed as a list schedule where the graph allows it, else as
      // events: the same either way.
      ReplayOptions events = windowed;
      events.list_schedule = false;
      const ReplayResult e = replay(*c.profile, s, events);
      expect_identical(a, e);
      EXPECT_FALSE(e.list_scheduled);
      EXPECT_FALSE(b.list_scheduled);
      // Priority scheduling is refused as a list schedule during the run:
      // the job's graph is made again (rebuild_job) and run as events.
      if (std::find(c.sets.begin(), c.sets.end(), "policy.overlap=priority") != c.sets.end()) {
        EXPECT_FALSE(a.list_scheduled);
        EXPECT_NE(a.list_refused.find("prioritized"), std::string::npos) << a.list_refused;
      }
      // WFBP with a global update, jittered or not, under either network
      // model: a list schedule.
      if (c.sets.empty() || c.sets == std::vector<std::string>{"perturb.jitter=normal:0.1"} ||
          c.sets == std::vector<std::string>{"perturb.jitter=normal:0.05", "network.model=flow"}) {
        EXPECT_EQ(a.list_scheduled, fold || !c.sets.empty()) << a.list_refused;
      }
    }
  }
}

}  // namespace
}  // namespace ssgd::sim
