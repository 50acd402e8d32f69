// The interference model (simulator/perturb/interference.h) and its run on
// the event engine (simulator/replay/interference_executor.h): the factors a
// plan gives each task, the rate arithmetic of overlapped work worked out by
// hand, the refusals that name the key, and whole replays: factors of 0 change
// nothing, compute that overlaps nothing is not slowed, and an all-reduce
// that overlaps backward slows it by what the factor says.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/collective_op.h"
#include "common/error.h"
#include "dag/task_graph.h"
#include "simulator/engine/engine.h"
#include "simulator/engine/schedule.h"
#include "simulator/input/scenario_inputs.h"
#include "simulator/perturb/interference.h"
#include "simulator/replay/interference_executor.h"
#include "simulator/replay/replay.h"
#include "simulator/scenario/scenario.h"

namespace ssgd::sim {
namespace {

using ::testing::HasSubstr;
using trace::RateSplit;
using trace::WorkRate;

InterferencePlan plan_of(double compute, double comm) {
  InterferencePlan p;
  p.active = true;
  p.compute = p.memory = compute;
  p.comm = comm;
  p.update = compute;
  return p;
}

// One compute task on rank 0 and one collective of all ranks (of `bytes`, of
// a job of `workers`), both ready at 0, each `ns` long at full speed.
// Returns their ends.
std::pair<std::int64_t, std::int64_t> run_pair(const InterferencePlan& plan,
                                               std::int64_t compute_ns, std::int64_t comm_ns,
                                               std::int64_t bytes = 0, std::int64_t workers = 1) {
  dag::TaskGraph g;
  const auto cpu = g.add_resource({dag::ResourceKind::kCompute, 0});
  const auto net = g.add_resource({dag::ResourceKind::kNetwork, dag::kAllRanks});
  dag::Task c;
  c.kind = dag::TaskKind::kBackward;
  c.duration = Duration(compute_ns);
  c.resource = cpu;
  c.layer = 0;
  dag::Task m;
  m.kind = dag::TaskKind::kComm;
  m.rank = dag::kAllRanks;
  m.duration = Duration(comm_ns);
  m.bytes = bytes;
  m.resource = net;
  const auto tc = g.add_task(c);
  const auto tm = g.add_task(m);
  g.finalize();
  Engine engine;
  InterferenceExecutor executor(engine, nullptr, plan, workers);
  ScheduleOptions options;
  options.executor = &executor;
  const auto s = run_schedules(engine, {&g}, {options}).front();
  return {s.end[tc].ns(), s.end[tm].ns()};
}

InterferencePlan demand_plan(double cpu_per_byte) {
  InterferencePlan p;
  p.active = true;
  p.demand = true;
  p.resource = InterferenceResource::kHost;
  p.cpu_per_byte = cpu_per_byte;
  return p;
}

// run_pair's tasks under the model demand, the collective an all-reduce of
// `bytes` over 2 ranks (2 x bytes through a rank).
std::pair<std::int64_t, std::int64_t> run_demand_pair(double cpu_per_byte, std::int64_t bytes,
                                                      std::int64_t compute_ns,
                                                      std::int64_t comm_ns) {
  return run_pair(demand_plan(cpu_per_byte), compute_ns, comm_ns, bytes, 2);
}

TEST(InterferenceExecutorDemand, ACollectiveTheCpuBoundsSharesItHalfAndHalf) {
  // 500 bytes all-reduced over 2 ranks: 1000 through the rank, 1 ns each:
  // the collective's 1000 ns alone are all CPU (u = 1). Beside compute each
  // gets half: both do 1000 of work at 1/2 and end at 2000, as processor
  // sharing (contention with factors 1 and 1) has them.
  EXPECT_EQ(run_demand_pair(1.0, 500, 1000, 1000),
            (std::pair<std::int64_t, std::int64_t>{2000, 2000}));
  EXPECT_EQ(run_pair(plan_of(1, 1), 1000, 1000),
            (std::pair<std::int64_t, std::int64_t>{2000, 2000}));
}

TEST(InterferenceExecutorDemand, ALinkBoundCollectiveTakesItsBytesCpuAndLosesNothing) {
  // 250 bytes through the rank in 1000 ns: u = 0.25. The collective keeps
  // what it wants and ends at 1000; compute runs at 0.75 meanwhile (750 of
  // work), its 250 left at full speed: 1250.
  EXPECT_EQ(run_demand_pair(1.0, 125, 1000, 1000),
            (std::pair<std::int64_t, std::int64_t>{1250, 1000}));
  // Ten times the CPU a byte: u = 1 again, processor sharing.
  EXPECT_EQ(run_demand_pair(10.0, 125, 1000, 1000),
            (std::pair<std::int64_t, std::int64_t>{2000, 2000}));
  // No CPU a byte: nothing shared.
  EXPECT_EQ(run_demand_pair(0.0, 125, 1000, 1000),
            (std::pair<std::int64_t, std::int64_t>{1000, 1000}));
}

TEST(InterferenceDemand, BytesThroughARankAsRingsMoveThem) {
  EXPECT_DOUBLE_EQ(bytes_through_rank(CollectiveOp::kAllReduce, 1000, 4), 3000);  // 4 x 3/4
  EXPECT_DOUBLE_EQ(bytes_through_rank(CollectiveOp::kAllGather, 1000, 4), 1500);  // 2 x 3/4
  EXPECT_DOUBLE_EQ(bytes_through_rank(CollectiveOp::kReduceScatter, 1000, 4), 1500);
  EXPECT_DOUBLE_EQ(bytes_through_rank(CollectiveOp::kReduce, 1000, 4), 1875);  // 1500 x 5/4
  EXPECT_DOUBLE_EQ(bytes_through_rank(CollectiveOp::kAllReduce, 1000, 1), 0);
}

TEST(InterferenceDemand, TheCaptureLosesTheCpuItsCollectivesTookAtMostHalf) {
  trace::LayerProfile profile;
  trace::LayerRow row;
  row.forward = Duration(1000);
  row.backward = Duration(1000);
  row.forward_beside_comm = 0.5;
  row.forward_beside_comm_rate = 0.2;  // 200 bytes through the rank over the 1000 ns
  row.backward_beside_comm = 0.5;
  row.backward_beside_comm_rate = 0.4;  // 400: more than half the overlapped 500 ns
  profile.layers.push_back(row);
  InterferencePlan plan = demand_plan(1.0);
  const trace::LayerProfile alone = profile_without_interference(profile, plan);
  EXPECT_EQ(alone.layers[0].forward.ns(), 800);
  EXPECT_EQ(alone.layers[0].backward.ns(), 750);
  EXPECT_EQ(alone.layers[0].forward_beside_comm_rate, 0);
  ASSERT_FALSE(plan.notes.empty());
  EXPECT_THAT(plan.notes.back(), HasSubstr("22.5% of its compute time"));
}

// The refusal plan_interference gives `spec` on `profile` (a failure if none).
ParameterError refusal(const InterferenceSpec& spec, const trace::LayerProfile& profile) {
  try {
    (void)plan_interference(spec, profile);
  } catch (const ParameterError& e) {
    return e;
  }
  ADD_FAILURE() << "plan_interference accepted the spec";
  return ParameterError("", "");
}

TEST(InterferenceDemand, RefusedOnAGpuAndWithoutItsConstantNamingTheKey) {
  trace::LayerProfile host;
  host.host_compute = true;
  host.layers.push_back(trace::LayerRow{});
  InterferenceSpec spec;
  spec.model = InterferenceModel::kDemand;
  EXPECT_EQ(refusal(spec, host).key(), "interference.host.cpu_per_byte");
  spec.host_cpu_per_byte = 0.8;
  spec.resource = InterferenceResource::kGpu;
  const ParameterError gpu = refusal(spec, host);
  EXPECT_EQ(gpu.key(), "interference.model");
  EXPECT_THAT(gpu.what(), HasSubstr("host-side library"));
  spec.resource = InterferenceResource::kAuto;
  spec.host_compute = 0.3;
  const InterferencePlan plan = plan_interference(spec, host);
  EXPECT_TRUE(plan.demand);
  EXPECT_DOUBLE_EQ(plan.cpu_per_byte, 0.8);
  ASSERT_FALSE(plan.notes.empty());
  EXPECT_THAT(plan.notes.front(), HasSubstr("not applied"));
}

TEST(InterferenceExecutor, ComputeBesideACollectiveRunsAtOneOverOnePlusF) {
  // f = 0.5: 1000 ns of work beside a 1000 ns collective does 666.7 by
  // t = 1000, the 333.3 left at full speed: ends at 1333.
  const auto [compute, comm] = run_pair(plan_of(0.5, 0), 1000, 1000);
  EXPECT_EQ(compute, 1333);
  EXPECT_EQ(comm, 1000);
}

TEST(InterferenceExecutor, BothSlowedUntilOneEnds) {
  // compute at 1/1.5, the collective at 1/2: compute ends at 1500, when the
  // collective has done 750; its 250 left at full speed end at 1750.
  const auto [compute, comm] = run_pair(plan_of(0.5, 1.0), 1000, 1000);
  EXPECT_EQ(compute, 1500);
  EXPECT_EQ(comm, 1750);
}

TEST(InterferenceExecutor, FactorsOfZeroChangeNothing) {
  const auto [compute, comm] = run_pair(plan_of(0, 0), 1000, 400);
  EXPECT_EQ(compute, 1000);
  EXPECT_EQ(comm, 400);
}

TEST(InterferenceExecutor, ComputeOutlivingTheCollectiveIsSlowedOnlyBesideIt) {
  // f = 1: 400 ns beside the collective do 200 of work; the 800 left: 1200.
  const auto [compute, comm] = run_pair(plan_of(1.0, 0), 1000, 400);
  EXPECT_EQ(compute, 1200);
  EXPECT_EQ(comm, 400);
}

// Published (NVIDIA/nccl#1428, an Nsight trace of GPT training on an
// A100-SXM4-80GB): a GEMM took 1.18 ms alone and 2.08 ms beside an
// all-gather over NVLink. First principles: NCCL moves about 3 bytes through
// HBM per byte on the wire (its maintainer, same thread), 3 x 300 GB/s of
// NVLink is 44.1% of the A100's 2,039 GB/s, so memory-bound work keeps 56% of
// the bandwidth: f = 1 / 0.56 - 1 = 0.79. The GEMM beside a longer
// all-gather: 2.11 ms, +1.5% against 2.08 ms.
TEST(InterferenceExecutor, PublishedGemmBesideAnAllGatherOnAnA100) {
  const double f = hbm_contention_factor(300e9, 2039e9, 3);
  EXPECT_NEAR(f, 0.790, 0.001);
  const auto [gemm, gather] = run_pair(plan_of(f, 0), 1'180'000, 5'000'000);
  EXPECT_NEAR(static_cast<double>(gemm) / 2'080'000, 1.0, 0.02) << gemm;
  EXPECT_EQ(gather, 5'000'000);
}

// Three collectives of one process group (one network resource), all ready
// at 0, each `ns` long alone, with no compute. Returns their ends in order.
std::vector<std::int64_t> run_three_collectives(double concurrent, std::int64_t ns) {
  dag::TaskGraph g;
  const auto net = g.add_resource({dag::ResourceKind::kNetwork, dag::kAllRanks});
  std::vector<dag::TaskId> ids;
  for (int k = 0; k < 3; ++k) {
    dag::Task m;
    m.kind = dag::TaskKind::kComm;
    m.rank = dag::kAllRanks;
    m.duration = Duration(ns);
    m.resource = net;
    ids.push_back(g.add_task(m));
  }
  g.finalize();
  Engine engine;
  InterferencePlan plan = plan_of(0, 0);
  plan.concurrent = concurrent;
  InterferenceExecutor executor(engine, nullptr, plan);
  ScheduleOptions options;
  options.executor = &executor;
  const auto s = run_schedules(engine, {&g}, {options}).front();
  std::vector<std::int64_t> ends;
  for (const auto id : ids) ends.push_back(s.end[id].ns());
  const InterferenceStats& st = executor.stats();
  EXPECT_EQ(st.comm_queued, concurrent > 0 ? 2 : 0);
  EXPECT_EQ(st.comm_queued_added_ns,
            concurrent > 0 ? std::llround(2 * concurrent * static_cast<double>(ns)) : 0);
  return ends;
}

TEST(InterferenceExecutor, ACollectiveThatWaitedBehindAnotherTakesOnePlusConcurrentTimesItsTime) {
  // host.concurrent = 1.5: the first starts as it is ready (1000 ns); the
  // two that waited behind it take 2500 each: 1000, 3500, 6000.
  EXPECT_EQ(run_three_collectives(1.5, 1000), (std::vector<std::int64_t>{1000, 3500, 6000}));
  // Off: one at a time at their own time.
  EXPECT_EQ(run_three_collectives(0, 1000), (std::vector<std::int64_t>{1000, 2000, 3000}));
}

TEST(InterferenceFactor, HbmContentionIsBoundedAndZeroWithoutTraffic) {
  EXPECT_EQ(hbm_contention_factor(0, 3350e9, 3), 0);
  // The wire's HBM traffic past the HBM's bandwidth: capped at 90% taken.
  EXPECT_NEAR(hbm_contention_factor(2000e9, 3350e9, 3), 9.0, 1e-9);
  EXPECT_THROW(hbm_contention_factor(1e9, 0, 3), std::invalid_argument);
}

trace::LayerProfile gpu_profile() {
  trace::LayerProfile p;
  p.gpu = "NVIDIA H100 80GB HBM3";
  p.batch_per_gpu = 32;
  for (int l = 0; l < 2; ++l) {
    trace::LayerRow row{l, "layer" + std::to_string(l), Duration(1'000'000), Duration(2'000'000),
                        200'000, std::nullopt, std::nullopt, std::nullopt};
    RateSplit f;
    f[WorkRate::kBf16] = 600'000;
    f[WorkRate::kMemory] = 400'000;
    RateSplit b;
    b[WorkRate::kBf16] = 1'000'000;
    b[WorkRate::kMemory] = 800'000;
    b[WorkRate::kHost] = 200'000;
    row.forward_split = f;
    row.backward_split = b;
    p.layers.push_back(row);
  }
  return p;
}

TEST(InterferencePlan, MixesTheGpuFactorsByEachRatesShare) {
  InterferenceSpec spec;
  spec.model = InterferenceModel::kContention;
  spec.gpu_compute = 0.1;
  spec.gpu_memory = 0.5;
  const InterferencePlan p = plan_interference(spec, gpu_profile());
  ASSERT_TRUE(p.active);
  EXPECT_EQ(p.resource, InterferenceResource::kGpu);
  EXPECT_THAT(p.why, HasSubstr("H100"));
  // forward: 0.6 x 0.1 + 0.4 x 0.5; backward: 0.5 x 0.1 + 0.4 x 0.5 + 0.1 x 0 (host).
  EXPECT_NEAR(p.forward[0], 0.26, 1e-12);
  EXPECT_NEAR(p.backward[1], 0.25, 1e-12);
}

TEST(InterferencePlan, HostOnlySplitsTakeTheHostFactors) {
  trace::LayerProfile p = gpu_profile();
  p.gpu.clear();
  for (auto& row : p.layers) {
    RateSplit f;
    f[WorkRate::kHost] = row.forward.ns();
    RateSplit b;
    b[WorkRate::kHost] = row.backward.ns();
    row.forward_split = f;
    row.backward_split = b;
  }
  InterferenceSpec spec;
  spec.model = InterferenceModel::kContention;
  spec.host_compute = 0.3;
  spec.gpu_compute = 0.9;
  const InterferencePlan plan = plan_interference(spec, p);
  EXPECT_EQ(plan.resource, InterferenceResource::kHost);
  EXPECT_DOUBLE_EQ(plan.backward[0], 0.3);
  EXPECT_THAT(plan.notes.front(), HasSubstr("interference.gpu.* set but not applied"));
}

TEST(InterferencePlan, OnWithoutFactorsOfItsClassIsRefusedAtTheModelKey) {
  InterferenceSpec spec;
  spec.model = InterferenceModel::kContention;
  spec.host_compute = 0.3;
  const ParameterError e = refusal(spec, gpu_profile());
  EXPECT_EQ(e.key(), "interference.model");
  EXPECT_THAT(std::string(e.what()), HasSubstr("none of interference.gpu.* is set"));
  EXPECT_THAT(std::string(e.what()), HasSubstr("only interference.host.* is"));
}

Scenario scenario_of(std::vector<std::string> sets) {
  sets.push_back("cluster.nodes=4");
  sets.push_back("iterations=4");
  sets.push_back("network.inter_node=10gbe");
  return load_scenario(std::nullopt, sets);
}

TEST(InterferenceReplay, FactorsOfZeroReplayAsNone) {
  const auto none = replay(gpu_profile(), scenario_of({}));
  const auto zero = replay(gpu_profile(), scenario_of({"interference.model=contention",
                                                       "interference.gpu.compute=0"}));
  EXPECT_EQ(zero.iteration_time, none.iteration_time);
  EXPECT_TRUE(zero.interference.active);
  EXPECT_EQ(zero.interference_stats.compute_added_ns, 0);
  EXPECT_GT(zero.interference_stats.compute_tasks, 0);
  // The closed forms know nothing of interference: not reported with it on.
  EXPECT_TRUE(none.closed_form.has_value());
  EXPECT_FALSE(zero.closed_form.has_value());
}

TEST(InterferenceReplay, SlowsOverlappedComputeOnlyAndIsDeterministic) {
  const auto none = replay(gpu_profile(), scenario_of({}));
  const auto on = replay(gpu_profile(), scenario_of({"interference.model=contention",
                                                     "interference.gpu.compute=0.2",
                                                     "interference.gpu.memory=0.6"}));
  const auto again = replay(gpu_profile(), scenario_of({"interference.model=contention",
                                                        "interference.gpu.compute=0.2",
                                                        "interference.gpu.memory=0.6"}));
  EXPECT_EQ(on.iteration_time, again.iteration_time);
  EXPECT_GT(on.iteration_time, none.iteration_time);
  // Under WFBP layer 1's all-reduce runs beside layer 0's backward (and the
  // next forward): at most every compute task slowed by its whole factor.
  const double added = static_cast<double>(on.interference_stats.compute_added_ns) /
                       static_cast<double>(on.interference_stats.compute_ns);
  EXPECT_GT(added, 0);
  EXPECT_LT(added, 0.6 * 0.4 + 0.2 * 0.6);
  // The one-GPU baseline has no collective: nothing slows it.
  const auto base = replay(gpu_profile(), load_scenario(std::nullopt,
                                                        {"iterations=4",
                                                         "interference.model=contention",
                                                         "interference.gpu.compute=0.2"}));
  EXPECT_EQ(base.interference_stats.compute_added_ns, 0);
}

TEST(InterferenceReplay, BspOverlapsNothingSoNothingSlows) {
  const auto none = replay(gpu_profile(), scenario_of({"policy.overlap=bsp"}));
  const auto on = replay(gpu_profile(), scenario_of({"policy.overlap=bsp",
                                                     "interference.model=contention",
                                                     "interference.gpu.compute=0.5"}));
  EXPECT_EQ(on.iteration_time, none.iteration_time);
}

TEST(InterferenceScenario, KeysAreCheckedAndNamed) {
  EXPECT_THROW(scenario_of({"interference.model=sometimes"}), InputError);
  EXPECT_THROW(scenario_of({"interference.gpu.compute=-0.1"}), InputError);
  EXPECT_THROW(scenario_of({"interference.gpu.compute=11"}), InputError);
  EXPECT_THROW(scenario_of({"interference.resource=tpu"}), InputError);
  const Scenario s = scenario_of({"interference.model=contention", "interference.host.comm=0.4",
                                  "interference.host.concurrent=2.5"});
  EXPECT_TRUE(s.interference.active());
  EXPECT_DOUBLE_EQ(*s.interference.host_comm, 0.4);
  EXPECT_DOUBLE_EQ(*s.interference.host_concurrent, 2.5);
  EXPECT_THROW(scenario_of({"interference.host.concurrent=-1"}), InputError);
}

}  // namespace
}  // namespace ssgd::sim
