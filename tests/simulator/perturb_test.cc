// What-if perturbations (simulator/perturb/): each changes a small synthetic
// run in exactly the expected way, and every bad value is an error that
// names its key.
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "simulator/input/scenario_inputs.h"
#include "simulator/network/comm_model.h"
#include "simulator/perturb/compute_perturbation.h"
#include "simulator/perturb/jitter.h"
#include "traces/kernel_class.h"
#include "simulator/perturb/repeat_stats.h"
#include "simulator/platform/platform.h"
#include "simulator/replay/replay.h"
#include "presentation/report/report.h"
#include "simulator/scenario/scenario.h"
#include "simulator/scenario/scenario_network.h"
#include "simulator/scenario/scenario_platform.h"

namespace ssgd::sim {
namespace {

using ::testing::HasSubstr;

// Four layers of 1 ms forward and 2 ms backward: 12 ms of compute.
trace::LayerProfile profile() {
  trace::LayerProfile p;
  p.batch_per_gpu = 32;
  const char* names[] = {"conv1", "bn1", "fc", "head"};
  for (int l = 0; l < 4; ++l) {
    p.layers.push_back({l, names[l], Duration(1'000'000), Duration(2'000'000), 4'000'001, std::nullopt, std::nullopt, std::nullopt});
  }
  return p;
}

Scenario two_workers(OverlapPolicy policy = OverlapPolicy::kBsp) {
  Scenario s;
  s.nodes = 2;
  s.iterations = 4;
  s.overlap_policy = policy;
  return s;
}

Scenario with(Scenario s, const std::vector<std::string>& sets) {
  // Reads the perturb.* flags as the command line does, for `s`'s cluster.
  std::vector<std::string> flags{fmt::format("cluster.nodes={}", s.nodes),
                                 fmt::format("cluster.gpus_per_node={}", s.gpus_per_node)};
  flags.insert(flags.end(), sets.begin(), sets.end());
  Scenario loaded = load_scenario(std::nullopt, flags);
  s.perturb = loaded.perturb;
  return s;
}

std::string input_error(const std::vector<std::string>& sets) {
  try {
    load_scenario(std::nullopt, sets);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError for " << sets.front();
  return {};
}

std::string replay_error(const Scenario& s) {
  try {
    replay(profile(), s);
  } catch (const std::invalid_argument& e) {
    return e.what();
  } catch (const ssgd::InputError& e) {  // a model's complaint, located at its key
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(Perturb, ComputeTimeFactorMultipliesComputeAndKeepsFolding) {
  const auto base = replay(profile(), two_workers());
  const auto slow = replay(profile(), with(two_workers(), {"perturb.compute_time_factor=2"}));
  EXPECT_EQ(base.breakdown.compute, Duration(12'000'000));
  EXPECT_EQ(slow.breakdown.compute, Duration(24'000'000));
  EXPECT_EQ(slow.iteration_time - base.iteration_time, Duration(12'000'000));
  EXPECT_EQ(slow.ranks_simulated, 1);  // ranks still alike: folded
  ASSERT_TRUE(slow.closed_form);
  EXPECT_EQ(*slow.closed_form, slow.iteration_time);
  // The single-worker baseline runs on the same, slower GPU.
  EXPECT_EQ(*slow.single_worker_iteration_time, Duration(24'000'000));
}

TEST(Perturb, LayerFactorsByGlobAndByNumber) {
  Scenario one;
  one.iterations = 2;
  EXPECT_EQ(replay(profile(), with(one, {"perturb.layer_factors=bn?:3"})).iteration_time,
            Duration(12'000'000 + 2 * 3'000'000));
  EXPECT_EQ(replay(profile(), with(one, {"perturb.layer_factors=3:0.5"})).iteration_time,
            Duration(12'000'000 - 1'500'000));
  // Factors of every pattern a layer matches multiply.
  EXPECT_EQ(replay(profile(), with(one, {"perturb.layer_factors=*:2,fc:2"})).iteration_time,
            Duration(24'000'000 + 6'000'000));
  const Scenario wfbp = with(two_workers(OverlapPolicy::kWfbp), {"perturb.layer_factors=c*:1.7"});
  const auto r = replay(profile(), wfbp);
  EXPECT_EQ(*r.closed_form, r.iteration_time);
}

TEST(Perturb, LayerPatternMatchingNoLayerIsAnError) {
  const std::string e = replay_error(with(two_workers(), {"perturb.layer_factors=conv1:2,layer9*:2"}));
  EXPECT_THAT(e, HasSubstr("field 'perturb.layer_factors': pattern 'layer9*' matches no layer"));
}

TEST(Perturb, LayerPatternMatchingNoLayerIsNamedWhereTheKeyWasSet) {
  const Scenario s = load_scenario(std::nullopt, {"perturb.layer_factors=conv1:2,layer9*:2"});
  EXPECT_THAT(replay_error(s),
              HasSubstr("--set: field 'perturb.layer_factors': pattern 'layer9*' matches no "
                        "layer"));
  EXPECT_THAT(replay_error(s), HasSubstr("(value given: 'conv1:2,layer9*:2')"));
}

TEST(Perturb, GlobMatch) {
  EXPECT_TRUE(glob_match("layer1.*", "layer1.0.conv1"));
  EXPECT_TRUE(glob_match("*conv?", "layer1.0.conv2"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_FALSE(glob_match("conv", "conv1"));
  EXPECT_FALSE(glob_match("?", ""));
  EXPECT_TRUE(glob_match("a*b*c", "aXbYbZc"));
}

TEST(Perturb, ClassFactorsScaleTheirLayersOnly) {
  Scenario one;
  one.iterations = 2;
  // conv1 is conv, bn1 norm, fc gemm, head other.
  const auto r = replay(profile(), with(one, {"perturb.class_factors=conv:2,gemm:0.5,other:1"}));
  EXPECT_EQ(r.iteration_time, Duration(12'000'000 + 3'000'000 - 1'500'000));
}

// The nccl class factor t multiplies every collective's time by t, under
// both network models (t x latency, bandwidth / t on every link).
TEST(Perturb, NcclClassFactorScalesCollectives) {
  for (const std::string model : {"analytical", "flow"}) {
    Scenario s = two_workers();
    s.network_model = model;
    const auto base = replay(profile(), s);
    const auto slow = replay(profile(), with(s, {"perturb.class_factors=nccl:2"}));
    SCOPED_TRACE(model);
    EXPECT_NEAR(static_cast<double>(slow.comm_per_iteration.ns()),
                2.0 * static_cast<double>(base.comm_per_iteration.ns()), 4);
    EXPECT_EQ(slow.breakdown.compute, base.breakdown.compute);
  }
}

TEST(Perturb, MixedPrecisionHalvesComputeAndGradientBytes) {
  const auto base = replay(profile(), two_workers());
  const auto mixed = replay(profile(), with(two_workers(), {"perturb.mixed_precision=true"}));
  EXPECT_EQ(mixed.breakdown.compute, Duration(6'000'000));
  ASSERT_FALSE(mixed.collectives.empty());
  for (const auto& c : mixed.collectives) EXPECT_EQ(c.bytes, 2'000'001);  // ceil(4000001 / 2)
  EXPECT_LT(mixed.comm_per_iteration, base.comm_per_iteration);
  EXPECT_EQ(*mixed.closed_form, mixed.iteration_time);
  const auto p = perturbed_profile(
      profile(), with(two_workers(), {"perturb.mixed_precision=on", "perturb.mixed_precision_speedup=4"})
                     .perturb);
  EXPECT_EQ(p.layers[0].forward, Duration(250'000));
  EXPECT_EQ(p.layers[0].grad_bytes, 2'000'001);
}

// Halving the NICs' bandwidth doubles the inter-node bandwidth (beta) term
// of the analytical closed form; the latency (alpha) term stays.
TEST(Perturb, NicBandwidthFactorDoublesTheInterNodeBetaTerm) {
  Scenario s = two_workers();
  s.algorithm = CollectiveAlgorithm::kRing;
  const Scenario half = with(s, {"perturb.bandwidth_factors=nic:0.5"});
  const Platform p0(scenario_platform_spec(s), 2);
  const Platform p1(scenario_platform_spec(half), 2);
  // The ring's crossing, from the last GPU of node 0 to the first of node 1.
  const auto crossing = [](const Platform& p) {
    return p.route(p.gpu(0, p.gpus_per_node() - 1), p.gpu(1, 0));
  };
  EXPECT_DOUBLE_EQ(crossing(p1).bandwidth_bytes_per_s, 0.5 * crossing(p0).bandwidth_bytes_per_s);
  EXPECT_EQ(crossing(p1).latency, crossing(p0).latency);
  const CommModel c0 = scenario_comm_model(s);
  const CommModel c1 = scenario_comm_model(half);
  // The closed form is linear in the size: t(2M) - t(M) is the beta term of M.
  const double m = 64e6;
  const auto beta = [m](const CommModel& c) {
    return static_cast<double>((c.isolated_time(CollectiveOp::kAllReduce, 2 * m) -
                                c.isolated_time(CollectiveOp::kAllReduce, m)).ns());
  };
  const auto alpha = [m, &beta](const CommModel& c) {
    return static_cast<double>(c.isolated_time(CollectiveOp::kAllReduce, m).ns()) - beta(c);
  };
  EXPECT_NEAR(beta(c1), 2 * beta(c0), 2);
  EXPECT_NEAR(alpha(c1), alpha(c0), 3);
  // Latency factors reach the routes too.
  const Platform p2(scenario_platform_spec(with(s, {"perturb.latency_factors=pcie:3,socket:3,nvlink:3,nic:3,fabric:3"})), 2);
  EXPECT_EQ(crossing(p2).latency, 3 * crossing(p0).latency);
}

TEST(Perturb, BandwidthFactorReachesTheFlowModel) {
  Scenario s = two_workers();
  s.network_model = "flow";
  const auto base = replay(profile(), s);
  const auto slow = replay(profile(), with(s, {"perturb.bandwidth_factors=nic:0.25"}));
  EXPECT_GT(slow.comm_per_iteration, base.comm_per_iteration * 3);
}

// Under BSP every collective waits for the slowest rank's backward pass: a
// rank 20% slower adds 20% of the compute to the iteration, and the run is
// not folded.
TEST(Perturb, StragglerUnderBspAddsItsExtraComputeAndIsNotFolded) {
  for (const std::string model : {"analytical", "flow"}) {
    Scenario s = two_workers();
    s.network_model = model;
    const auto base = replay(profile(), s);
    const auto slow = replay(profile(), with(s, {"perturb.stragglers=1:20"}));
    SCOPED_TRACE(model);
    EXPECT_EQ(base.ranks_simulated, 1);
    EXPECT_EQ(slow.ranks_simulated, 2);
    EXPECT_TRUE(slow.ranks_differ);
    EXPECT_FALSE(slow.closed_form);
    EXPECT_EQ(slow.iteration_time - base.iteration_time, Duration(2'400'000));
    // The single-worker baseline is an unperturbed rank.
    EXPECT_EQ(slow.single_worker_iteration_time, base.single_worker_iteration_time);
  }
}

// Folding by class: ranks of equal compute factor fold into one rank each,
// and every figure the run reports is the unfolded run's, to the nanosecond.
void expect_same_run(const ReplayResult& folded, const ReplayResult& all) {
  EXPECT_EQ(folded.iteration_times, all.iteration_times);
  EXPECT_EQ(folded.iteration_time, all.iteration_time);
  EXPECT_EQ(folded.breakdown.compute, all.breakdown.compute);
  EXPECT_EQ(folded.breakdown.io, all.breakdown.io);
  EXPECT_EQ(folded.breakdown.exposed_comm, all.breakdown.exposed_comm);
  EXPECT_EQ(folded.breakdown.idle, all.breakdown.idle);
  EXPECT_EQ(folded.critical_path.length, all.critical_path.length);
  EXPECT_EQ(folded.critical_path.time_by_kind, all.critical_path.time_by_kind);
  EXPECT_EQ(folded.critical_path.gaps, all.critical_path.gaps);
  EXPECT_EQ(folded.comm_per_iteration, all.comm_per_iteration);
  EXPECT_EQ(folded.single_worker_iteration_time, all.single_worker_iteration_time);
}

TEST(Perturb, StragglersFoldByClassToTheNanosecond) {
  struct Case {
    std::vector<std::string> sets;
    std::int64_t classes;
  };
  const std::vector<Case> cases = {
      {{"perturb.stragglers=5:20"}, 2},
      {{"perturb.stragglers=1:20,6:20"}, 2},           // one class of two stragglers
      {{"perturb.stragglers=0:35,3:10,7:10"}, 3},
      {{"perturb.imbalance=0.2"}, 8},                  // every rank its own factor: nothing folds
  };
  for (const std::string model : {"analytical", "flow"}) {
    for (const auto policy : {OverlapPolicy::kBsp, OverlapPolicy::kWfbp, OverlapPolicy::kMgWfbp}) {
      for (const auto& c : cases) {
        Scenario s = two_workers(policy);
        s.nodes = 4;
        s.gpus_per_node = 2;
        s.network_model = model;
        s = with(s, c.sets);
        SCOPED_TRACE(fmt::format("{} {} {}", model, to_string(policy), c.sets[0]));
        ReplayOptions no_fold;
        no_fold.fold_ranks = false;
        const auto folded = replay(profile(), s);
        const auto all = replay(profile(), s, no_fold);
        EXPECT_EQ(folded.ranks_simulated, c.classes);
        EXPECT_EQ(all.ranks_simulated, 8);
        EXPECT_TRUE(folded.ranks_differ);
        expect_same_run(folded, all);
        if (c.classes < 8) {
          EXPECT_LT(folded.tasks, all.tasks);
        }
      }
    }
  }
}

// Jitter draws for every task: its ranks never fold, and a run that keeps
// its schedule (a timeline, a simulated trace) does not fold by class.
TEST(Perturb, JitterAndKeptSchedulesDoNotFoldByClass) {
  Scenario s = two_workers();
  s.nodes = 4;
  const auto jittered = replay(profile(), with(s, {"perturb.stragglers=1:20", "perturb.jitter=normal:0.05"}));
  EXPECT_EQ(jittered.ranks_simulated, 4);
  ReplayOptions keep;
  keep.keep_schedule = true;
  const auto kept = replay(profile(), with(s, {"perturb.stragglers=1:20"}), keep);
  EXPECT_EQ(kept.ranks_simulated, 4);
  const auto folded = replay(profile(), with(s, {"perturb.stragglers=1:20"}));
  EXPECT_EQ(folded.ranks_simulated, 2);
  expect_same_run(folded, kept);
}

// perturb.jitter_draw: class: the ranks of a class share their draws, so
// they still fold, with the unfolded run's figures to the nanosecond.
TEST(Perturb, JitterDrawnPerClassFoldsToTheNanosecond) {
  for (const std::string model : {"analytical", "flow"}) {
    for (const auto& [sets, classes] :
         std::vector<std::pair<std::vector<std::string>, std::int64_t>>{
             {{"perturb.jitter=normal:0.2", "perturb.jitter_draw=class"}, 1},
             {{"perturb.jitter=lognormal:0.3", "perturb.jitter_draw=class", "perturb.stragglers=5:20"}, 2}}) {
      Scenario s = two_workers(OverlapPolicy::kWfbp);
      s.nodes = 4;
      s.gpus_per_node = 2;
      s.network_model = model;
      s = with(s, sets);
      SCOPED_TRACE(fmt::format("{} {}", model, sets.back()));
      ReplayOptions no_fold;
      no_fold.fold_ranks = false;
      const auto folded = replay(profile(), s);
      const auto all = replay(profile(), s, no_fold);
      EXPECT_EQ(folded.ranks_simulated, classes);
      EXPECT_EQ(all.ranks_simulated, 8);
      expect_same_run(folded, all);
      // The draws do something: not the unjittered run.
      Scenario plain = s;
      plain.perturb.jitter = {};
      EXPECT_NE(replay(profile(), plain).iteration_times, folded.iteration_times);
    }
  }
  EXPECT_THAT(input_error({"perturb.jitter_draw=rank"}), HasSubstr("perturb.jitter_draw"));
  EXPECT_THAT(input_error({"perturb.jitter_draw=rank"}), HasSubstr("expected task or class"));
}

TEST(Perturb, RankClassesInOrderOfTheirFirstRank) {
  const RankClasses c = rank_classes({1.2, 1.0, 1.0, 1.2, 1.5, 1.0});
  EXPECT_EQ(c.of_rank, (std::vector<std::uint32_t>{0, 1, 1, 0, 2, 1}));
  EXPECT_EQ(c.factor, (std::vector<double>{1.2, 1.0, 1.5}));
  EXPECT_EQ(c.size, (std::vector<std::int64_t>{2, 3, 1}));
}

TEST(Perturb, StragglerRankOutOfRangeIsAnError) {
  // Scenarios built in code skip load_scenario's check: the replay checks again.
  Scenario s = two_workers();
  s.perturb.stragglers = {{0, 10}, {5, 20}};
  const std::string e = replay_error(s);
  EXPECT_THAT(e, HasSubstr("perturb.stragglers"));
  EXPECT_THAT(e, HasSubstr("rank 5"));
  EXPECT_THAT(e, HasSubstr("2 workers"));
}

TEST(Perturb, StragglerRankIsCheckedWhenTheScenarioLoads) {
  const std::string e = input_error({"cluster.nodes=2", "perturb.stragglers=2:20"});
  EXPECT_THAT(e, HasSubstr("perturb.stragglers"));
  EXPECT_THAT(e, HasSubstr("rank 2 is out of range: the scenario has 2 workers"));
  EXPECT_NO_THROW(load_scenario(std::nullopt, {"cluster.nodes=3", "perturb.stragglers=2:20"}));
}

TEST(Perturb, ScenarioFileSection) {
  const std::string path = ::testing::TempDir() + "perturb_section.yaml";
  {
    std::ofstream out(path);
    out << "cluster:\n  nodes: 4\nperturb:\n  compute_time_factor: 0.5\n  stragglers: 3:20\n"
           "  jitter: lognormal:0.1\n  repeats: 3\n  bandwidth_factors: nic:0.5\n";
  }
  const Scenario s = load_scenario(path, {"perturb.seed=9"});
  EXPECT_EQ(s.perturb.compute_time_factor, 0.5);
  EXPECT_EQ(s.perturb.stragglers, (std::vector<Straggler>{{3, 20}}));
  EXPECT_EQ(s.perturb.jitter, (JitterSpec{JitterKind::kLognormal, 0.1}));
  EXPECT_EQ(s.perturb.repeats, 3);
  EXPECT_EQ(s.perturb.seed, 9u);
  EXPECT_EQ(s.perturb.bandwidth_factors[static_cast<std::size_t>(LinkKind::kNic)], 0.5);
  {
    std::ofstream out(path);
    out << "perturb:\n  jiter: normal:0.1\n";
  }
  try {
    load_scenario(path, {});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("did you mean 'perturb.jitter'"));
    EXPECT_THAT(e.what(), HasSubstr(":2:"));
  }
}

TEST(Perturb, ImbalanceIsLinearAcrossRanks) {
  const auto base = replay(profile(), two_workers());
  const auto zero = replay(profile(), with(two_workers(), {"perturb.imbalance=0"}));
  EXPECT_EQ(zero.iteration_times, base.iteration_times);
  EXPECT_EQ(zero.ranks_simulated, 1);
  // Two ranks: 0.9 and 1.1; BSP waits for the slower.
  const auto r = replay(profile(), with(two_workers(), {"perturb.imbalance=0.1"}));
  EXPECT_EQ(r.iteration_time - base.iteration_time, Duration(1'200'000));
  const auto f = rank_compute_factors(with(two_workers(), {"perturb.imbalance=0.5"}).perturb, 5);
  const std::vector<double> expected{0.5, 0.75, 1.0, 1.25, 1.5};
  ASSERT_EQ(f.size(), expected.size());
  for (std::size_t i = 0; i < f.size(); ++i) EXPECT_DOUBLE_EQ(f[i], expected[i]);
  EXPECT_EQ(rank_compute_factors(with(two_workers(), {"perturb.imbalance=0.5"}).perturb, 1),
            std::vector<double>{1.0});
}

TEST(Perturb, JitterIsReproducibleBySeed) {
  const Scenario a = with(two_workers(OverlapPolicy::kWfbp), {"perturb.jitter=normal:0.1", "perturb.seed=7"});
  const Scenario b = with(two_workers(OverlapPolicy::kWfbp), {"perturb.jitter=normal:0.1", "perturb.seed=8"});
  const auto r1 = replay(profile(), a);
  const auto r2 = replay(profile(), a);
  const auto r3 = replay(profile(), b);
  EXPECT_EQ(r1.iteration_times, r2.iteration_times);
  EXPECT_EQ(report::report_json(r1, a, {}).dump(), report::report_json(r2, a, {}).dump());
  EXPECT_NE(r1.iteration_times, r3.iteration_times);
  EXPECT_EQ(r1.ranks_simulated, 2);
  for (const char* kind : {"uniform:0.2", "lognormal:0.3"}) {
    const auto s = with(two_workers(), {fmt::format("perturb.jitter={}", kind)});
    EXPECT_EQ(replay(profile(), s).iteration_times, replay(profile(), s).iteration_times) << kind;
  }
}

TEST(Perturb, JitterDrawsHaveTheStatedMoments) {
  for (const auto& spec : {JitterSpec{JitterKind::kNormal, 0.1}, JitterSpec{JitterKind::kUniform, 0.2},
                           JitterSpec{JitterKind::kLognormal, 0.2}}) {
    TaskJitter j(spec, 42);
    TaskJitter again(spec, 42);
    double sum = 0, squares = 0;
    const int n = 200'000;
    for (int i = 0; i < n; ++i) {
      const double x = j.next();
      EXPECT_EQ(x, again.next());
      EXPECT_GE(x, 0.0);
      sum += x;
      squares += x * x;
    }
    const double mean = sum / n;
    const double sd = std::sqrt(squares / n - mean * mean);
    SCOPED_TRACE(to_string(spec.kind));
    EXPECT_NEAR(mean, 1.0, 0.002);
    const double expected_sd = spec.kind == JitterKind::kNormal    ? 0.1
                               : spec.kind == JitterKind::kUniform ? 0.2 / std::sqrt(3.0)
                                                                   : std::sqrt(std::exp(0.04) - 1);
    EXPECT_NEAR(sd, expected_sd, 0.002);
  }
  TaskJitter none(JitterSpec{}, 1);
  EXPECT_EQ(none.next(), 1.0);
}

TEST(Perturb, RepeatsGiveMeanAndConfidenceInterval) {
  const Scenario s = with(two_workers(OverlapPolicy::kWfbp),
                          {"perturb.jitter=uniform:0.2", "perturb.seed=3", "perturb.repeats=5"});
  const auto r = replay(profile(), s);
  ASSERT_TRUE(r.repeats);
  EXPECT_EQ(r.repeats->count, 5);
  ASSERT_EQ(r.repeat_iteration_times.size(), 5u);
  EXPECT_EQ(r.repeat_iteration_times[0], r.iteration_time);
  Scenario fourth = s;
  fourth.perturb.seed = 6;
  fourth.perturb.repeats = 1;
  EXPECT_EQ(r.repeat_iteration_times[3], replay(profile(), fourth).iteration_time);
  EXPECT_GT(r.repeats->ci95_half_width, Duration::zero());
  EXPECT_LE(r.repeats->min, r.repeats->mean);
  EXPECT_GE(r.repeats->max, r.repeats->mean);
  const auto j = report::report_json(r, s, {});
  EXPECT_EQ(j["repeats"]["count"], 5);
  EXPECT_EQ(j["repeats"]["iteration_time_mean_ns"].get<std::int64_t>(), r.repeats->mean.ns());
  EXPECT_EQ(j["scenario"]["perturb"]["jitter"]["distribution"], "uniform");
  // Without jitter every repeat is the same run.
  const auto same = replay(profile(), with(two_workers(), {"perturb.repeats=3"}));
  EXPECT_EQ(same.repeats->ci95_half_width, Duration::zero());
  EXPECT_EQ(same.repeats->mean, same.iteration_time);
}

TEST(Perturb, RepeatStatsUseStudentT) {
  const auto st = repeat_stats({Duration(10), Duration(12), Duration(14)});
  EXPECT_EQ(st.mean, Duration(12));
  // sd 2, t(0.975, 2) = 4.3027: 4.3027 x 2 / sqrt(3) = 4.968
  EXPECT_EQ(st.ci95_half_width, Duration(5));
  const auto big = repeat_stats({Duration(1'000'000), Duration(1'200'000), Duration(1'400'000)});
  EXPECT_EQ(big.ci95_half_width, Duration(496'833));
  EXPECT_DOUBLE_EQ(student_t_975(1), 12.7062);
  EXPECT_NEAR(student_t_975(60), 2.0003, 1e-4);
  EXPECT_NEAR(student_t_975(1'000'000), 1.96, 1e-4);
  EXPECT_EQ(repeat_stats({Duration(7)}).ci95_half_width, Duration::zero());
}

TEST(Perturb, ReportShowsActivePerturbations) {
  const Scenario s = with(two_workers(), {"perturb.compute_time_factor=1.5", "perturb.stragglers=1:20"});
  const auto r = replay(profile(), s);
  std::ostringstream out;
  report::print_summary(r, s, {}, out);
  EXPECT_THAT(out.str(), HasSubstr("perturb: compute x1.5, rank 1 +20%"));
  EXPECT_THAT(out.str(), HasSubstr("not applicable: perturbed ranks differ"));
  const auto j = report::report_json(r, s, {});
  EXPECT_EQ(j["scenario"]["perturb"]["active"], true);
  EXPECT_EQ(j["scenario"]["perturb"]["stragglers"][0]["rank"], 1);
  EXPECT_EQ(j["simulation"]["ranks_differ"], true);
  const auto plain = report::report_json(replay(profile(), two_workers()), two_workers(), {});
  EXPECT_EQ(plain["scenario"]["perturb"]["active"], false);
}

TEST(Perturb, BadValuesNameTheirKey) {
  struct Case {
    std::string set, key, reason;
  };
  const std::vector<Case> cases = {
      {"perturb.compute_time_factor=0", "perturb.compute_time_factor", "greater than 0"},
      {"perturb.compute_time_factor=fast", "perturb.compute_time_factor", "expected a number"},
      {"perturb.layer_factors=conv1", "perturb.layer_factors", "pattern:factor"},
      {"perturb.layer_factors=conv1:-1", "perturb.layer_factors", "greater than 0"},
      {"perturb.class_factors=tensor:2", "perturb.class_factors", "unknown kernel class 'tensor'"},
      {"perturb.class_factors=gemm:2,gemm:3", "perturb.class_factors", "given twice"},
      {"perturb.mixed_precision=maybe", "perturb.mixed_precision", "true or false"},
      {"perturb.mixed_precision_speedup=0", "perturb.mixed_precision_speedup", "greater than 0"},
      {"perturb.bandwidth_factors=nic:0", "perturb.bandwidth_factors", "greater than 0"},
      {"perturb.bandwidth_factors=wifi:2", "perturb.bandwidth_factors", "unknown link kind 'wifi'"},
      {"perturb.latency_factors=nic:-1", "perturb.latency_factors", "at least 0"},
      {"perturb.stragglers=x:20", "perturb.stragglers", "expected a rank"},
      {"perturb.stragglers=3", "perturb.stragglers", "rank:percent"},
      {"perturb.stragglers=3:-5", "perturb.stragglers", "at least 0"},
      {"perturb.stragglers=3:5,3:6", "perturb.stragglers", "rank 3 given twice"},
      {"perturb.imbalance=1", "perturb.imbalance", "below 1"},
      {"perturb.jitter=gauss:0.1", "perturb.jitter", "unknown jitter 'gauss:0.1'"},
      {"perturb.jitter=normal", "perturb.jitter", "needs its spread"},
      {"perturb.jitter=normal:2", "perturb.jitter", "at most 1"},
      {"perturb.seed=-1", "perturb.seed", "between"},
      {"perturb.repeats=0", "perturb.repeats", "between 1"},
  };
  for (const auto& c : cases) {
    const std::string e = input_error({c.set});
    EXPECT_THAT(e, HasSubstr(c.key)) << c.set;
    EXPECT_THAT(e, HasSubstr(c.reason)) << c.set << ": " << e;
  }
}

TEST(Perturb, ListsAcceptSpacesAndNone) {
  const Scenario s = load_scenario(
      std::nullopt, {"cluster.nodes=4", "perturb.stragglers= 3:20 , 1:5", "perturb.class_factors=none",
                     "perturb.bandwidth_factors=nic:0.5, fabric:2"});
  ASSERT_EQ(s.perturb.stragglers.size(), 2u);
  EXPECT_EQ(s.perturb.stragglers[0].rank, 3);
  EXPECT_EQ(s.perturb.stragglers[1].percent, 5);
  EXPECT_EQ(s.perturb.class_factors[static_cast<std::size_t>(KernelClass::kGemm)], 1);
  EXPECT_EQ(s.perturb.bandwidth_factors[static_cast<std::size_t>(LinkKind::kNic)], 0.5);
  EXPECT_EQ(s.perturb.bandwidth_factors[static_cast<std::size_t>(LinkKind::kFabric)], 2);
  EXPECT_TRUE(s.perturb.varies_by_rank());
}

}  // namespace
}  // namespace ssgd::sim
