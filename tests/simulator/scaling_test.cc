// GPU-count scaling: the batch compute model (exact values, rounding, the
// two-profile fit and its errors), the batch plan of weak and strong
// scaling, and speedup and efficiency of whole replays checked against hand
// computations.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "common/error.h"
#include "presentation/report/report.h"
#include "simulator/input/scenario_inputs.h"
#include "simulator/replay/replay.h"
#include "simulator/scaling/batch_plan.h"
#include "simulator/scaling/batch_time_model.h"
#include "simulator/scenario/scenario.h"
#include "simulator/scenario/scenario_scaling.h"
#include "tests/support/report_context.h"
#include "tests/support/test_files.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {
namespace {

using ::testing::HasSubstr;

trace::LayerProfile profile_of(std::int64_t batch,
                               std::vector<std::pair<std::int64_t, std::int64_t>> times,
                               std::int64_t grad_bytes = 1000) {
  trace::LayerProfile p;
  p.source = fmt::format("batch{}.csv", batch);
  p.batch_per_gpu = batch;
  for (std::size_t l = 0; l < times.size(); ++l) {
    p.layers.push_back({static_cast<std::int64_t>(l), fmt::format("l{}", l),
                        Duration(times[l].first), Duration(times[l].second), grad_bytes,
                        std::nullopt, std::nullopt, std::nullopt});
  }
  return p;
}

// --- the compute model ---

TEST(BatchTimeModel, ReferenceBatchKeepsTheMeasuredTimes) {
  const auto p = profile_of(64, {{1'000'001, 2'000'003}, {7, 0}});
  for (const double f : {0.0, 0.3, 0.7, 0.999}) {
    const auto at = profile_at_batch(p, fixed_fraction_model(p, 64, f), 64);
    for (std::size_t l = 0; l < p.layers.size(); ++l) {
      EXPECT_EQ(at.layers[l].forward, p.layers[l].forward) << f;
      EXPECT_EQ(at.layers[l].backward, p.layers[l].backward) << f;
    }
  }
}

// At b_ref / 2, t(b) = t (f + (1 - f) / 2), rounded to the nearest
// nanosecond with halves away from zero.
TEST(BatchTimeModel, FixedFractionAtHalfTheBatch) {
  const auto p = profile_of(64, {{1'000'000, 2'000'000}, {1'000'001, 3}});
  const auto model = fixed_fraction_model(p, 64, 0.25);
  const auto half = profile_at_batch(p, model, 32);
  EXPECT_EQ(half.layers[0].forward, Duration(625'000));  // 1e6 x 0.625
  EXPECT_EQ(half.layers[0].backward, Duration(1'250'000));
  EXPECT_EQ(half.layers[1].forward, Duration(625'001));  // 625000.625 -> 625001
  EXPECT_EQ(half.layers[1].backward, Duration(2));       // 1.875 -> 2
  // Proportional (f = 0): 5 ns at half the batch is 2.5 ns, which rounds up.
  const auto q = profile_of(2, {{5, 7}});
  const auto prop = profile_at_batch(q, fixed_fraction_model(q, 2, 0.0), 1);
  EXPECT_EQ(prop.layers[0].forward, Duration(3));
  EXPECT_EQ(prop.layers[0].backward, Duration(4));
  // Twice the batch, f = 0.5: t x 1.5; gradient bytes and comm unchanged.
  auto r = profile_of(8, {{1000, 3000}}, 4096);
  r.layers[0].comm = Duration(777);
  const auto twice = profile_at_batch(r, fixed_fraction_model(r, 8, 0.5), 16);
  EXPECT_EQ(twice.layers[0].forward, Duration(1500));
  EXPECT_EQ(twice.layers[0].backward, Duration(4500));
  EXPECT_EQ(twice.layers[0].grad_bytes, 4096);
  EXPECT_EQ(twice.layers[0].comm, Duration(777));
}

TEST(BatchTimeModel, FitThroughTwoProfilesReproducesBoth) {
  const auto a = profile_of(32, {{1'000'000, 2'000'000}, {10'000, 30'001}, {5, 5}});
  const auto b = profile_of(128, {{3'400'000, 6'500'000}, {10'000, 90'003}, {5, 5}});
  const auto model = fitted_model(a, 32, b, 128);
  const auto at_a = profile_at_batch(a, model, 32);
  const auto at_b = profile_at_batch(a, model, 128);
  for (std::size_t l = 0; l < a.layers.size(); ++l) {
    EXPECT_EQ(at_a.layers[l].forward, a.layers[l].forward) << l;
    EXPECT_EQ(at_a.layers[l].backward, a.layers[l].backward) << l;
    EXPECT_EQ(at_b.layers[l].forward, b.layers[l].forward) << l;
    EXPECT_EQ(at_b.layers[l].backward, b.layers[l].backward) << l;
  }
  // In between and beyond, on the line: k = 2.4e6 / 96 = 25000 ns per sample.
  EXPECT_EQ(profile_at_batch(a, model, 64).layers[0].forward, Duration(1'800'000));
  EXPECT_EQ(profile_at_batch(a, model, 256).layers[0].forward, Duration(6'600'000));
  // t0 = 1e6 - 32 x 25000 = 200000 ns: what batch 1 still costs.
  EXPECT_EQ(profile_at_batch(a, model, 1).layers[0].forward, Duration(225'000));
  // The second profile may be the smaller batch.
  const auto back = fitted_model(b, 128, a, 32);
  EXPECT_EQ(profile_at_batch(b, back, 32).layers[1].backward, Duration(30'001));
}

TEST(BatchTimeModel, NegativeInterceptIsClampedAtZero) {
  // Superlinear between the two: 1000 at 32, 2100 at 64; the line reaches 0 below batch 2.
  const auto a = profile_of(32, {{1000, 0}});
  const auto b = profile_of(64, {{2100, 0}});
  const auto model = fitted_model(a, 32, b, 64);
  EXPECT_EQ(profile_at_batch(a, model, 1).layers[0].forward, Duration(0));
  EXPECT_EQ(profile_at_batch(a, model, 4).layers[0].forward, Duration(38));  // -100 + 137.5
}

InputError fit_error(const trace::LayerProfile& a, std::int64_t ba, const trace::LayerProfile& b,
                     std::int64_t bb) {
  try {
    fitted_model(a, ba, b, bb);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "fitted_model accepted the profiles";
  return InputError({}, "");
}

TEST(BatchTimeModel, FitErrorsNameFileLayerAndField) {
  const auto a = profile_of(32, {{1000, 2000}, {3000, 4000}});
  {
    const auto e = fit_error(a, 32, profile_of(32, {{1000, 2000}, {3000, 4000}}), 32);
    EXPECT_EQ(e.where().file, "batch32.csv");
    EXPECT_EQ(e.where().field, "batch_per_gpu");
    EXPECT_THAT(e.reason(), HasSubstr("two different batches"));
  }
  {
    const auto e = fit_error(a, 32, profile_of(64, {{2000, 4000}}), 64);
    EXPECT_EQ(e.where().file, "batch64.csv");
    EXPECT_THAT(e.reason(), HasSubstr("has 1 layers, the input batch32.csv has 2"));
  }
  {
    auto b = profile_of(64, {{2000, 4000}, {6000, 8000}});
    b.layers[1].name = "conv9";
    const auto e = fit_error(a, 32, b, 64);
    EXPECT_EQ(e.where().field, "name");
    EXPECT_THAT(e.reason(), HasSubstr("layer 1 is 'conv9', the input's is 'l1'"));
  }
  {
    const auto e = fit_error(a, 32, profile_of(64, {{2000, 4000}, {6000, 8000}}, 999), 64);
    EXPECT_EQ(e.where().field, "grad_bytes");
    EXPECT_THAT(e.reason(), HasSubstr("layer 'l0' has 999 gradient bytes"));
  }
  {
    const auto e = fit_error(a, 32, profile_of(64, {{2000, 4000}, {6000, 3999}}), 64);
    EXPECT_EQ(e.where().field, "backward_ns");
    EXPECT_THAT(e.reason(), HasSubstr("layer 'l1': 4000 ns at batch 32 but 3999 ns at batch 64"));
  }
}

TEST(BatchTimeModel, IoAndCopyAreProportional) {
  EXPECT_EQ(batch_proportional_time(Duration(1'000'000), 16, 64), Duration(250'000));
  EXPECT_EQ(batch_proportional_time(Duration(5), 1, 2), Duration(3));
  EXPECT_EQ(batch_proportional_time(Duration(7), 64, 64), Duration(7));
  EXPECT_EQ(batch_proportional_time(Duration(1000), 256, 64), Duration(4000));
}

// --- the batch plan ---

Scenario strong(std::int64_t nodes, std::optional<std::int64_t> global_batch) {
  Scenario s;
  s.nodes = nodes;
  s.scaling.mode = ScalingMode::kStrong;
  s.scaling.global_batch = global_batch;
  return s;
}

TEST(BatchPlan, WeakKeepsTheBatchStrongSplitsTheGlobalBatch) {
  const auto p = profile_of(64, {{1000, 2000}});
  Scenario weak;
  weak.nodes = 8;
  auto plan = batch_plan(p, weak);
  EXPECT_EQ(plan.per_gpu_batch, 64);
  EXPECT_EQ(plan.global_batch, 512);
  EXPECT_FALSE(plan.rescaled());

  plan = batch_plan(p, strong(8, 256));
  EXPECT_EQ(plan.per_gpu_batch, 32);
  EXPECT_EQ(plan.global_batch, 256);
  EXPECT_TRUE(plan.rescaled());
  // Not divisible: the largest share, ceil(250 / 8) = 32, sets the pace.
  plan = batch_plan(p, strong(8, 250));
  EXPECT_EQ(plan.per_gpu_batch, 32);
  EXPECT_EQ(plan.global_batch, 250);
  // Default: the input's batch on the scenario's GPU count, which is weak scaling's run.
  plan = batch_plan(p, strong(8, std::nullopt));
  EXPECT_EQ(plan.global_batch, 512);
  EXPECT_EQ(plan.per_gpu_batch, 64);
  // workload.batch_per_gpu says what batch the input was measured at.
  Scenario s = strong(2, 64);
  s.batch_per_gpu = 16;
  plan = batch_plan(p, s);
  EXPECT_EQ(plan.reference_batch, 16);
  EXPECT_EQ(plan.per_gpu_batch, 32);
}

TEST(BatchPlan, StrongNeedsABatchAndEnoughSamples) {
  auto p = profile_of(64, {{1000, 2000}});
  p.batch_per_gpu.reset();
  try {
    batch_plan(p, strong(2, 64));
    ADD_FAILURE() << "no batch accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "batch64.csv");
    EXPECT_EQ(e.where().field, "batch_per_gpu");
    EXPECT_THAT(e.reason(), HasSubstr("scaling.mode strong"));
    EXPECT_THAT(e.reason(), HasSubstr("workload.batch_per_gpu"));
  }
  // Weak scaling without a batch counts batches, as before.
  Scenario weak;
  weak.nodes = 4;
  EXPECT_FALSE(batch_plan(p, weak).batch_known);
  EXPECT_EQ(batch_plan(p, weak).global_batch, 4);
  p.batch_per_gpu = 64;
  try {
    batch_plan(p, strong(8, 4));
    ADD_FAILURE() << "4 samples over 8 GPUs accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("scaling.global_batch: 4 samples cannot be split over 8 GPUs"));
  }
}

TEST(BatchPlan, BatchesThatWouldOverflowAreRefused) {
  auto p = profile_of(64, {{1000, 2000}});
  p.batch_per_gpu = std::int64_t{1} << 40;  // a batch line can hold any positive integer
  try {
    batch_plan(p, strong(1 << 20, std::nullopt));
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("scaling.global_batch: the default"));
  }
  Scenario weak;
  weak.nodes = 1 << 20;
  weak.gpus_per_node = 1 << 10;
  p.batch_per_gpu = std::int64_t{1} << 40;
  EXPECT_THROW(batch_plan(p, weak), std::invalid_argument);
  // A huge batch on one GPU makes I/O overflow the clock: refused naming the key.
  p.batch_per_gpu = 1;
  Scenario s = strong(1, std::int64_t{1} << 30);
  s.io_time = Duration(1'000'000LL * 1'000'000'000LL);
  const auto plan = batch_plan(p, s);
  const auto model = fixed_fraction_model(p, 1, 0);
  try {
    workload_at_batch(p, s, plan, &model);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("workload.io_time at batch 1073741824"));
  }
}

// --- whole replays ---

// A zero-cost network: measured all-reduces that take no time.
TEST(ScalingReplay, WeakScalingOnAZeroCostNetworkIsExactlyEfficient) {
  auto p = profile_of(32, {{1'000'000, 2'000'000}, {3'000'000, 1'000'000}}, 1 << 20);
  for (auto& row : p.layers) row.comm = Duration(0);
  for (const auto policy : {OverlapPolicy::kBsp, OverlapPolicy::kWfbp}) {
    Scenario s;
    s.nodes = 4;
    s.gpus_per_node = 2;
    s.iterations = 4;
    s.overlap_policy = policy;
    s.io_time = Duration(1000);
    const auto r = replay(p, s);
    EXPECT_TRUE(r.comm_replayed);
    EXPECT_EQ(r.scaling_efficiency, 1.0);
    EXPECT_EQ(r.speedup, 8.0);
    EXPECT_EQ(r.global_batch, 256);
  }
  // And one GPU, with any network.
  Scenario one;
  const auto r = replay(profile_of(32, {{1000, 2000}}), one);
  EXPECT_EQ(r.scaling_efficiency, 1.0);
  EXPECT_EQ(r.speedup, 1.0);
}

// Strong scaling with a zero-cost network and time proportional to the
// batch is exactly efficient too: P GPUs each compute 1/P of the batch.
TEST(ScalingReplay, StrongScalingOfProportionalComputeOnAZeroCostNetwork) {
  auto p = profile_of(64, {{1'000'000, 2'000'000}, {3'000'000, 1'000'000}}, 1 << 20);
  for (auto& row : p.layers) row.comm = Duration(0);
  Scenario s = strong(4, 256);
  s.overlap_policy = OverlapPolicy::kBsp;
  s.io_time = Duration(400'000);  // at batch 64; 256 on one GPU reads 4 times as long
  const auto r = replay(p, s);
  EXPECT_EQ(r.batch_per_gpu, 64);
  EXPECT_EQ(r.iteration_time, Duration(7'400'000));
  EXPECT_EQ(r.single_worker_batch, 256);
  EXPECT_EQ(*r.single_worker_iteration_time, Duration(29'600'000));
  EXPECT_EQ(r.speedup, 4.0);
  EXPECT_EQ(r.scaling_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(r.throughput_samples_per_s, 256 / 7.4e-3);
}

// Two layers at batch 64, one gradient of 1 MB, BSP, a ring all-reduce
// between nodes of one GPU each over links of 1 GB/s and 10 us:
//   ring over P: 2 (P - 1) x 10 us + 2 (P - 1) / P x 1e6 B / 1e9 B/s
//   P = 2: 20 us + 1 ms = 1.020 ms;  P = 4: 60 us + 1.5 ms = 1.560 ms
// Compute at batch b with f = 0.5: 6 ms x (0.5 + 0.5 b / 64).
TEST(ScalingReplay, JsonReportMatchesAHandComputation) {
  const auto p = profile_of(64, {{1'000'000, 2'000'000}, {1'000'000, 2'000'000}}, 0);
  auto q = p;
  q.layers[0].grad_bytes = 1'000'000;
  const auto scenario = [](std::int64_t nodes, ScalingMode mode) {
    Scenario s = load_scenario(
        std::nullopt, {"network.inter_node_bandwidth=1GB/s", "network.inter_node_latency=10us",
                       "network.algorithm=ring", "network.library=generic", "policy.overlap=bsp",
                       "iterations=3"});
    s.nodes = nodes;
    s.scaling.mode = mode;
    s.scaling.fixed_fraction = 0.5;
    if (mode == ScalingMode::kStrong) s.scaling.global_batch = 128;
    return s;
  };
  {
    // Strong, P = 2: batch 64 each, 6 ms + 1.020 ms; one GPU at 128: 6 ms x 1.5 = 9 ms.
    const Scenario s = scenario(2, ScalingMode::kStrong);
    const auto j =
        report::report_json(replay(q, s), s, testing::report_context("q.csv", "layer-profile-csv"));
    const auto& sc = j.at("scaling");
    EXPECT_EQ(sc["mode"], "strong");
    EXPECT_EQ(sc["gpus"], 2);
    EXPECT_EQ(sc["per_gpu_batch"], 64);
    EXPECT_EQ(sc["global_batch"], 128);
    EXPECT_EQ(sc["iteration_time_ns"], 7'020'000);
    EXPECT_EQ(sc["single_gpu"]["iteration_time_ns"], 9'000'000);
    EXPECT_EQ(sc["single_gpu"]["per_gpu_batch"], 128);
    EXPECT_DOUBLE_EQ(sc["speedup"].get<double>(), 9.0 / 7.02);
    EXPECT_DOUBLE_EQ(sc["scaling_efficiency"].get<double>(), 9.0 / 7.02 / 2);
    EXPECT_DOUBLE_EQ(sc["throughput_samples_per_s"].get<double>(), 128 / 7.02e-3);
    EXPECT_DOUBLE_EQ(sc["single_gpu"]["throughput_samples_per_s"].get<double>(), 128 / 9e-3);
    EXPECT_EQ(j["speedup"], sc["speedup"]);
    EXPECT_EQ(j["scaling_efficiency"], sc["scaling_efficiency"]);
    EXPECT_EQ(j["scenario"]["scaling"]["global_batch"], 128);
  }
  {
    // Strong, P = 4: batch 32 each, 6 ms x 0.75 = 4.5 ms, + 1.560 ms.
    const Scenario s = scenario(4, ScalingMode::kStrong);
    const auto j =
        report::report_json(replay(q, s), s, testing::report_context("q.csv", "layer-profile-csv"));
    EXPECT_EQ(j["scaling"]["per_gpu_batch"], 32);
    EXPECT_EQ(j["scaling"]["iteration_time_ns"], 6'060'000);
    EXPECT_DOUBLE_EQ(j["scaling"]["speedup"].get<double>(), 9.0 / 6.06);
    EXPECT_DOUBLE_EQ(j["scaling"]["scaling_efficiency"].get<double>(), 9.0 / 6.06 / 4);
  }
  {
    // Weak, P = 4: batch 64 each, 6 ms + 1.560 ms; one GPU at 64: 6 ms.
    const Scenario s = scenario(4, ScalingMode::kWeak);
    const auto j =
        report::report_json(replay(q, s), s, testing::report_context("q.csv", "layer-profile-csv"));
    EXPECT_EQ(j["scaling"]["global_batch"], 256);
    EXPECT_EQ(j["scaling"]["iteration_time_ns"], 7'560'000);
    EXPECT_EQ(j["scaling"]["single_gpu"]["iteration_time_ns"], 6'000'000);
    EXPECT_DOUBLE_EQ(j["scaling"]["scaling_efficiency"].get<double>(), 6.0 / 7.56);
    EXPECT_DOUBLE_EQ(j["scaling"]["speedup"].get<double>(), 6.0 / 7.56 * 4);
    EXPECT_EQ(j["scaling"]["compute_model"], "");
  }
}

class ScalingFiles : public testing::TempDirTest {};

TEST_F(ScalingFiles, SecondProfileFromTheScenarioFolderIsFitted) {
  const auto write = [this](const std::string& name, std::int64_t batch, std::int64_t fwd) {
    testing::write_file_bytes(dir_ / name,
                              fmt::format("# batch_per_gpu: {}\nlayer,name,forward_ns,backward_ns,"
                                          "grad_bytes\n0,conv,{},{},0\n",
                                          batch, fwd, 2 * fwd));
  };
  write("at64.csv", 64, 1'000'000);
  write("at128.csv", 128, 1'800'000);
  testing::write_file_bytes(dir_ / "s.yaml",
                            "scaling:\n  mode: strong\n  global_batch: 128\n"
                            "  second_profile: at128.csv\n");
  const Scenario s = load_scenario(dir_ / "s.yaml", {});
  EXPECT_EQ(*s.scaling.second_profile, dir_ / "at128.csv");
  const auto input = trace::read_layer_profile_csv(dir_ / "at64.csv");
  const auto r = replay(input, s);
  // One GPU at 128 is the second profile itself: 1.8 ms + 3.6 ms.
  EXPECT_EQ(*r.single_worker_iteration_time, Duration(5'400'000));
  EXPECT_THAT(r.compute_model, HasSubstr("fitted to batch 64"));

  // A second profile without its batch is refused, naming it.
  testing::write_file_bytes(dir_ / "nobatch.csv",
                            "layer,name,forward_ns,backward_ns,grad_bytes\n0,conv,1,2,0\n");
  Scenario bad = s;
  bad.scaling.second_profile = dir_ / "nobatch.csv";
  // The scenario's files are read once, by load_scenario or read_scenario_files, not in a replay.
  EXPECT_THROW(replay(input, bad), std::logic_error);
  try {
    read_scenario_files(bad);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, (dir_ / "nobatch.csv").string());
    EXPECT_EQ(e.where().field, "batch_per_gpu");
  }
}

}  // namespace
}  // namespace ssgd::sim
