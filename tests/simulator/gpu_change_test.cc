// The what-if to another GPU (simulator/perturb/gpu_change.h): the GPU table,
// the rule for the host's gaps, first principles (memory-bound work scales
// with bandwidth, matrix work with the peak rate of its arithmetic), and the
// refusals that name platform.gpu.model.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "simulator/input/scenario_inputs.h"
#include "simulator/perturb/gpu_change.h"
#include "simulator/platform/gpu_preset.h"
#include "simulator/replay/replay.h"
#include "simulator/scenario/scenario.h"

namespace ssgd::sim {
namespace {

using ::testing::HasSubstr;
using trace::RateSplit;
using trace::WorkRate;

RateSplit split(std::initializer_list<std::pair<WorkRate, std::int64_t>> parts) {
  RateSplit s;
  for (const auto& [r, v] : parts) s[r] = v;
  return s;
}

// Two layers measured on `gpu`, each forward all `fwd`, backward all `bwd`,
// and an update of 1 ms of memory-bound work.
trace::LayerProfile profile_on(const std::string& gpu, const RateSplit& fwd, const RateSplit& bwd) {
  trace::LayerProfile p;
  p.gpu = gpu;
  p.batch_per_gpu = 32;
  for (int l = 0; l < 2; ++l) {
    trace::LayerRow row{l, "layer" + std::to_string(l), Duration(fwd.total()), Duration(bwd.total()),
                        1'000'000, std::nullopt, std::nullopt, std::nullopt};
    row.forward_split = fwd;
    row.backward_split = bwd;
    p.layers.push_back(row);
  }
  p.update = Duration(1'000'000);
  p.update_split = split({{WorkRate::kMemory, 1'000'000}});
  return p;
}

Scenario on_gpu(const std::string& model) {
  return load_scenario(std::nullopt, {"platform.gpu.model=" + model, "iterations=3"});
}

TEST(GpuPresets, DriverNamesFindTheirGpu) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"NVIDIA H200", "h200"},
      {"NVIDIA H100 80GB HBM3", "h100-sxm"},
      {"NVIDIA H100 PCIe", "h100-pcie"},
      {"NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"},
      {"NVIDIA A100-SXM4-40GB", "a100-sxm4-40gb"},
      {"NVIDIA A100 80GB PCIe", "a100-pcie-80gb"},
      {"Tesla V100-SXM2-16GB", "v100-sxm2-16gb"},
      {"Tesla V100-SXM2-32GB", "v100-sxm2-32gb"},
      {"Tesla V100-PCIE-32GB", "v100-pcie"},
      {"NVIDIA B200", "b200"},
  };
  for (const auto& [device, preset] : cases) {
    SCOPED_TRACE(device);
    const GpuSpec* g = gpu_preset_for_device(device);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->name, preset);
    // A preset's own description names it back.
    EXPECT_EQ(gpu_preset_for_device(g->description), g);
  }
  EXPECT_EQ(gpu_preset_for_device("NVIDIA H100 NVL"), nullptr);
  EXPECT_EQ(gpu_preset_for_device("NVIDIA GeForce RTX 4090"), nullptr);
  EXPECT_EQ(gpu_preset_for_device("AMD Instinct MI300X"), nullptr);
}

// Dense rates are half the sparse ones the Hopper datasheets print.
TEST(GpuPresets, HopperRatesAreTheDatasheetsDenseOnes) {
  const GpuSpec* h100 = find_gpu_preset("h100-sxm");
  const GpuSpec* h200 = find_gpu_preset("h200");
  ASSERT_TRUE(h100 && h200);
  EXPECT_DOUBLE_EQ(h100->bf16_tflops, 989);  // printed 1,979*
  EXPECT_DOUBLE_EQ(h200->fp8_tflops, 3958.0 / 2);
  EXPECT_DOUBLE_EQ(h100->memory_gb_per_s, 3350);
  EXPECT_DOUBLE_EQ(h200->memory_gb_per_s, 4800);
  // A V100 has no TF32 units: TF32 work runs as FP32 there.
  const auto v100 = gpu_rate(*find_gpu_preset("v100-sxm2-16gb"), WorkRate::kTf32);
  ASSERT_TRUE(v100);
  EXPECT_EQ(v100->as, WorkRate::kFp32);
  EXPECT_DOUBLE_EQ(v100->value, 15.7);
}

// K' <= K: K' + H; K' > K: max(K', K + H).
TEST(GpuChange, HostGapsStayForAFasterGpuAndFillForASlowerOne) {
  std::array<double, trace::kWorkRateCount> f{};
  f.fill(1.0);
  const RateSplit s = split({{WorkRate::kMemory, 1000}, {WorkRate::kHost, 300}});
  f[static_cast<std::size_t>(WorkRate::kMemory)] = 0.5;
  RateSplit out;
  EXPECT_EQ(time_on_gpu(s, f, &out), 500 + 300);
  EXPECT_EQ(out[WorkRate::kMemory], 500);
  EXPECT_EQ(out[WorkRate::kHost], 300);
  f[static_cast<std::size_t>(WorkRate::kMemory)] = 1.2;  // 1200 < 1000 + 300: the gaps fill
  EXPECT_EQ(time_on_gpu(s, f, &out), 1300);
  EXPECT_EQ(out[WorkRate::kHost], 100);
  f[static_cast<std::size_t>(WorkRate::kMemory)] = 2.0;  // GPU-bound again
  EXPECT_EQ(time_on_gpu(s, f, &out), 2000);
  EXPECT_EQ(out[WorkRate::kHost], 0);
  EXPECT_EQ(out.total(), 2000);
}

// First principles: memory-bound work from an H100 to an H200 takes
// 3,350 / 4,800 of its time (bytes / bandwidth); TF32 matrix work from an
// H100 to an A100 takes 494.5 / 156 (FLOPs / rate); the host's time stays.
TEST(GpuChange, EachPartScalesByTheRateThatBoundsIt) {
  const auto p = profile_on("NVIDIA H100 80GB HBM3",
                            split({{WorkRate::kMemory, 4'800'000}}),
                            split({{WorkRate::kTf32, 1'560'000}, {WorkRate::kHost, 100'000}}));
  const GpuChange to_h200 = plan_gpu_change(p, "h200", true);
  ASSERT_TRUE(to_h200.applied);
  const auto on_h200 = profile_on_gpu(p, to_h200);
  EXPECT_EQ(on_h200.layers[0].forward.ns(), 3'350'000);
  EXPECT_EQ(on_h200.layers[0].backward.ns(), 1'560'000 + 100'000);  // same TF32 rate
  EXPECT_EQ(on_h200.update->ns(), 697'917);                          // 1 ms x 3350 / 4800
  const GpuChange to_a100 = plan_gpu_change(p, "a100-sxm4-80gb", true);
  const auto on_a100 = profile_on_gpu(p, to_a100);
  // 1.56 ms x 494.5 / 156 = 4.945 ms; slower, so the host's 0.1 ms is filled.
  EXPECT_EQ(on_a100.layers[0].backward.ns(), 4'945'000);
  EXPECT_EQ(on_a100.layers[0].forward.ns(), std::int64_t{4'800'000} * 3350 / 2039 + 1);  // 7,886,218.7
  // The replay sees it: two layers' forward and backward, and the update.
  const ReplayResult r = replay(p, on_gpu("a100-sxm4-80gb"));
  EXPECT_EQ(r.breakdown.compute.ns(), 2 * (7'886'219 + 4'945'000) + 1'642'962);
  EXPECT_TRUE(r.gpu_change.applied);
  EXPECT_EQ(r.gpu_change.captured_preset, "h100-sxm");
}

TEST(GpuChange, TheSameGpuOrNoneNamedChangesNothing) {
  const auto p = profile_on("NVIDIA H200", split({{WorkRate::kMemory, 1000}}),
                            split({{WorkRate::kMemory, 1000}}));
  EXPECT_FALSE(plan_gpu_change(p, "h200", true).applied);
  EXPECT_FALSE(plan_gpu_change(p, "", false).applied);
  Scenario capture = load_scenario(std::nullopt, {"platform.preset=hgx_h100", "platform.gpu.model=capture"});
  EXPECT_FALSE(replay(p, capture).gpu_change.applied);
}

TEST(GpuChange, AGpuNamedByTheUserThatTheInputCannotReachIsRefused) {
  auto no_gpu = profile_on("", split({{WorkRate::kMemory, 1000}}), split({{WorkRate::kMemory, 1000}}));
  no_gpu.source = "model.csv";
  try {
    (void)plan_gpu_change(no_gpu, "h100-sxm", true);
    FAIL() << "expected a refusal";
  } catch (const ParameterError& e) {
    EXPECT_EQ(e.key(), "platform.gpu.model");
    EXPECT_THAT(e.what(), HasSubstr("model.csv does not say which GPU"));
    EXPECT_THAT(e.what(), HasSubstr("platform.gpu.model: capture"));
  }
  auto unknown = no_gpu;
  unknown.gpu = "NVIDIA GeForce RTX 4090";
  EXPECT_THROW((void)plan_gpu_change(unknown, "h100-sxm", true), ParameterError);
  auto unsplit = no_gpu;
  unsplit.gpu = "NVIDIA H200";
  for (auto& row : unsplit.layers) row.forward_split.reset(), row.backward_split.reset();
  EXPECT_THROW((void)plan_gpu_change(unsplit, "h100-sxm", true), ParameterError);
  // From a platform preset: a note, and the times as measured.
  const GpuChange noted = plan_gpu_change(unsplit, "h100-sxm", false);
  EXPECT_FALSE(noted.applied);
  ASSERT_EQ(noted.notes.size(), 1u);
  EXPECT_THAT(noted.notes[0], HasSubstr("compute replayed as measured"));
}

TEST(GpuChange, AScenarioKeyOfAnUnknownGpuNamesTheKnownOnes) {
  try {
    (void)load_scenario(std::nullopt, {"platform.gpu.model=h300"});
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("platform.gpu.model"));
    EXPECT_THAT(e.what(), HasSubstr("h100-sxm"));
  }
}

// workload.fp32_matmul: FP32 matrix work moves between the FP32 cores and
// the TF32 tensor cores by the ratio of their peak rates (FLOPs / rate), on
// the capture's GPU when none is named, else on the one named.
TEST(GpuChange, Fp32MatrixWorkMovesToTheOtherUnitByThePeakRates) {
  const auto p = profile_on("NVIDIA A100-SXM4-80GB", split({{WorkRate::kFp32, 1'950'000}}),
                            split({{WorkRate::kTf32, 1'560'000}}));
  const GpuChange same = plan_gpu_change(p, "", false, Fp32Matmul::kTf32);
  ASSERT_TRUE(same.applied);
  EXPECT_TRUE(same.target_captured);
  EXPECT_EQ(same.target, "a100-sxm4-80gb");
  const auto on_tf32 = profile_on_gpu(p, same);
  EXPECT_EQ(on_tf32.layers[0].forward.ns(), 243'750);  // 1.95 ms x 19.5 / 156
  EXPECT_EQ(on_tf32.layers[0].backward.ns(), 1'560'000);
  // The moved work is TF32 work from now on.
  EXPECT_EQ((*on_tf32.layers[0].forward_split)[WorkRate::kTf32], 243'750);
  EXPECT_EQ((*on_tf32.layers[0].forward_split)[WorkRate::kFp32], 0);
  ASSERT_EQ(same.notes.size(), 1u);
  EXPECT_THAT(same.notes[0], HasSubstr("workload.fp32_matmul tf32: the fp32 matrix work (48.6%"));

  // TF32 off on an H100: the FP32 work at 19.5 / 67, the TF32 work at 156 / 67.
  const GpuChange off = plan_gpu_change(p, "h100-sxm", true, Fp32Matmul::kFp32);
  const auto on_fp32 = profile_on_gpu(p, off);
  EXPECT_EQ(on_fp32.layers[0].forward.ns(), 567'537);     // 567,537.3
  EXPECT_EQ(on_fp32.layers[0].backward.ns(), 3'632'239);  // 3,632,238.8
  EXPECT_EQ((*on_fp32.layers[0].backward_split)[WorkRate::kFp32], 3'632'239);

  // A V100 has no TF32 units: the work stays on its FP32 cores, and it says so.
  const GpuChange v100 = plan_gpu_change(p, "v100-sxm2-16gb", true, Fp32Matmul::kTf32);
  EXPECT_NEAR(static_cast<double>(profile_on_gpu(p, v100).layers[0].forward.ns()),
              1.95e6 * 19.5 / 15.7, 1);
  EXPECT_THAT(v100.notes[0], HasSubstr("v100-sxm2-16gb has no tf32 units"));

  // Nothing to move: said.
  const auto tf32_only = profile_on("NVIDIA H200", split({{WorkRate::kTf32, 1000}}),
                                    split({{WorkRate::kMemory, 1000}}));
  const GpuChange nothing = plan_gpu_change(tf32_only, "", false, Fp32Matmul::kTf32);
  EXPECT_THAT(nothing.notes[0], HasSubstr("the input has no fp32 matrix work; nothing moves"));

  // Through the scenario key and the replay.
  const ReplayResult r =
      replay(p, load_scenario(std::nullopt, {"workload.fp32_matmul=tf32", "iterations=3"}));
  EXPECT_TRUE(r.gpu_change.applied);
  EXPECT_EQ(r.gpu_change.fp32_matmul, Fp32Matmul::kTf32);
}

TEST(GpuChange, Fp32MatmulThatCannotApplyIsRefusedNamingItsKey) {
  auto no_gpu = profile_on("", split({{WorkRate::kFp32, 1000}}), split({{WorkRate::kFp32, 1000}}));
  no_gpu.source = "model.csv";
  try {
    (void)plan_gpu_change(no_gpu, "", false, Fp32Matmul::kTf32);
    FAIL() << "expected a refusal";
  } catch (const ParameterError& e) {
    EXPECT_EQ(e.key(), "workload.fp32_matmul");
    EXPECT_THAT(e.what(), HasSubstr("model.csv does not say which GPU"));
    EXPECT_THAT(e.what(), HasSubstr("workload.fp32_matmul: capture"));
  }
  auto unsplit = no_gpu;
  unsplit.gpu = "NVIDIA H200";
  for (auto& row : unsplit.layers) row.forward_split.reset(), row.backward_split.reset();
  try {
    (void)plan_gpu_change(unsplit, "h200", false, Fp32Matmul::kFp32);
    FAIL() << "expected a refusal";
  } catch (const ParameterError& e) {
    EXPECT_EQ(e.key(), "workload.fp32_matmul");
  }
  try {
    (void)load_scenario(std::nullopt, {"workload.fp32_matmul=tf16"});
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("workload.fp32_matmul"));
    EXPECT_THAT(e.what(), HasSubstr("expected capture, fp32 or tf32"));
  }
}

// The one-GPU baseline of the speedup computes on the run's GPU.
TEST(GpuChange, TheSingleGpuBaselineRunsOnTheSameGpu) {
  const auto p = profile_on("NVIDIA H200", split({{WorkRate::kMemory, 4'800'000}}),
                            split({{WorkRate::kMemory, 4'800'000}}));
  Scenario s = load_scenario(std::nullopt, {"platform.preset=hgx_h100", "cluster.nodes=1",
                                            "cluster.gpus_per_node=8", "iterations=3"});
  const ReplayResult r = replay(p, s);
  ASSERT_TRUE(r.gpu_change.applied);
  ASSERT_TRUE(r.single_worker_iteration_time.has_value());
  // 4 x 4.8 ms of memory-bound work and a 1 ms update, at 4,800 / 3,350.
  EXPECT_NEAR(static_cast<double>(r.single_worker_iteration_time->ns()),
              (4 * 4.8e6 + 1e6) * 4800.0 / 3350.0, 10);
}

}  // namespace
}  // namespace ssgd::sim
