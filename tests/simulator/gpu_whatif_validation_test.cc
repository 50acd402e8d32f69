// The what-if to another GPU against measurement (docs/validation.md,
// section 13): the same trainings captured on an H200 and an H100
// (traces/datasets/h200-pytorch and h100-pytorch, docs/runs/2026-11-27-h100-h200),
// each capture moved to the other GPU, and one published figure.
//
//   kernel ratio   the GPU time of an iteration on the other GPU over its time
//                  on the capture's, as the model predicts it, against the
//                  ratio of the two GPUs' untraced iteration medians (both
//                  runs keep their GPU busy: the H200's ResNet-50 kernels take
//                  31.9 of its 34.0 ms). Within 5%.
//   iteration      the H200 captures replayed on an H100 against the H100's
//                  untraced median: within 5%. (The H100 captures carry the
//                  H100 machine's tracer cost, 60% on ResNet-50, so their
//                  replays are not compared with untraced runs.)
//   published      ResNet-50 v1.5 training on one A100 80GB in TF32, NVIDIA
//                  DeepLearningExamples (PyTorch/Classification/ConvNets/
//                  resnet50v1.5/README.md, "Training performance: NVIDIA DGX
//                  A100 (8x A100 80GB)", 1 GPU, pytorch-21.03 container):
//                  938 img/s at batch 256 with DALI; predicted from the H200
//                  fp32 capture at batch 64. Within 10%: the setups differ
//                  (batch, data loading, the software of 2021). And BERT-base
//                  fine-tuning (SQuAD) in FP32 on one V100 16GB, Lambda's
//                  PyTorch benchmarks (lambdal/deeplearning-benchmark,
//                  pytorch/results/LambdaCloud_V100_16GB_v1/
//                  PyTorch_bert_base_squad_FP32/16-12-2022_03-05-07.txt:
//                  DeepLearningExamples' run_squad.py, batch 24, sequence
//                  384, no AMP), predicted from the H200 fp32 capture of a
//                  BERT-base-sized encoder at batch 32, sequence 128: compared
//                  per FLOP (below). Within 10%: model code, batch, sequence
//                  and optimizer differ. The same benchmark's A100 and H100
//                  rows, in TF32, from the same capture with
//                  workload.fp32_matmul tf32: within 10% per FLOP.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "simulator/input/replay_input.h"
#include "simulator/input/scenario_inputs.h"
#include "simulator/replay/replay.h"
#include "simulator/scenario/scenario.h"

namespace ssgd::sim {
namespace {

std::filesystem::path capture(const std::string& gpu, const std::string& id) {
  return std::filesystem::path(SSGD_SOURCE_DIR) / "traces/datasets" / (gpu + "-pytorch") / id /
         "trace.ssgdt";
}

ReplayResult on(const std::filesystem::path& trace, const std::string& gpu, int batch = 64,
                const std::string& fp32_matmul = "capture") {
  const ReplayInput input = load_replay_input(trace);
  return replay(input.profile,
                load_scenario(std::nullopt, {"platform.gpu.model=" + gpu,
                                             "workload.batch_per_gpu=" + std::to_string(batch),
                                             "workload.fp32_matmul=" + fp32_matmul}));
}

double kernel_ratio(const ReplayResult& r) {
  return static_cast<double>(r.gpu_change.kernel_ns_after) /
         static_cast<double>(r.gpu_change.kernel_ns_before);
}

double percent(double predicted, double measured) { return 100.0 * (predicted / measured - 1); }

// Untraced medians, ms (the datasets' manifests, `measured.iteration_ns.median`).
struct Pair {
  const char* id;
  double h200_ms;
  double h100_ms;
};
constexpr Pair kPairs[] = {{"resnet50-fp32", 33.958053, 39.950751}, {"bert-base", 63.462150, 66.050751}};

// A trace's profile splits every layer's time by rate, adding up to it, and
// records the GPU its device record names.
TEST(GpuWhatIfValidation, ATracesProfileSplitsEveryLayerByRate) {
  const ReplayInput input = load_replay_input(capture("h200", "resnet50-fp32"));
  const trace::LayerProfile& p = input.profile;
  EXPECT_EQ(p.gpu, "NVIDIA H200");
  ASSERT_TRUE(p.has_splits());
  ASSERT_TRUE(p.update_split.has_value());
  for (const auto& row : p.layers) {
    SCOPED_TRACE(row.name);
    EXPECT_EQ(row.forward_split->total(), row.forward.ns());
    EXPECT_EQ(row.backward_split->total(), row.backward.ns());
  }
  EXPECT_EQ(p.update_split->total(), p.update->ns());
  // ResNet-50: convolutions, batch norms, elementwise kernels and layout copies.
  const auto& c = p.kernel_classes;
  for (const auto k : {trace::KernelClass::kConv, trace::KernelClass::kNorm,
                       trace::KernelClass::kElementwise, trace::KernelClass::kCopy}) {
    EXPECT_GT(c.ns[static_cast<std::size_t>(k)], 0) << trace::to_string(k);
  }
  EXPECT_EQ(c.ns[static_cast<std::size_t>(trace::KernelClass::kNccl)], 0);
}

TEST(GpuWhatIfValidation, H200CapturesPredictTheH100) {
  for (const Pair& p : kPairs) {
    SCOPED_TRACE(p.id);
    const ReplayResult r = on(capture("h200", p.id), "h100-sxm");
    ASSERT_TRUE(r.gpu_change.applied);
    const double measured = p.h100_ms / p.h200_ms;
    const double iteration_ms = static_cast<double>(r.iteration_time.ns()) / 1e6;
    std::printf("%-14s H200 -> H100: kernels x%.3f (measured x%.3f, %+.1f%%); iteration %.3f ms "
                "(measured %.3f ms, %+.1f%%)\n",
                p.id, kernel_ratio(r), measured, percent(kernel_ratio(r), measured), iteration_ms,
                p.h100_ms, percent(iteration_ms, p.h100_ms));
    EXPECT_LE(std::abs(percent(kernel_ratio(r), measured)), 5.0);
    EXPECT_LE(std::abs(percent(iteration_ms, p.h100_ms)), 5.0);
  }
}

TEST(GpuWhatIfValidation, H100CapturesPredictTheH200) {
  for (const Pair& p : kPairs) {
    SCOPED_TRACE(p.id);
    const ReplayResult r = on(capture("h100", p.id), "h200");
    ASSERT_TRUE(r.gpu_change.applied);
    const double measured = p.h200_ms / p.h100_ms;
    std::printf("%-14s H100 -> H200: kernels x%.3f (measured x%.3f, %+.1f%%)\n", p.id,
                kernel_ratio(r), measured, percent(kernel_ratio(r), measured));
    EXPECT_LE(std::abs(percent(kernel_ratio(r), measured)), 5.0);
  }
}

// The same VGG-16 training captured by ssgd's tracer and by torch.profiler
// (Kineto JSON, imported) splits alike: the two moves to an H100 agree
// within 1% (today x1.201 and x1.200).
TEST(GpuWhatIfValidation, TheTracerAndTorchProfilerSplitAlike) {
  const ReplayResult tracer = on(capture("h200", "vgg16"), "h100-sxm");
  const ReplayResult kineto = on(capture("h200", "vgg16-kineto"), "h100-sxm");
  ASSERT_TRUE(tracer.gpu_change.applied && kineto.gpu_change.applied);
  std::printf("vgg16          H200 -> H100: kernels x%.3f (ssgd tracer), x%.3f (torch.profiler)\n",
              kernel_ratio(tracer), kernel_ratio(kineto));
  EXPECT_LE(std::abs(percent(kernel_ratio(kineto), kernel_ratio(tracer))), 1.0);
}

// The published run's matmuls were TF32 too (PyTorch of 2021 allowed TF32
// for matmuls by default; 1.12 turned it off), the capture's FC layer's
// GEMMs FP32: workload.fp32_matmul tf32 moves them (today 876 img/s,
// -6.6%; as captured 856, -8.7%).
TEST(GpuWhatIfValidation, PublishedA100ResNet50Tf32) {
  const ReplayResult r = on(capture("h200", "resnet50-fp32"), "a100-sxm4-80gb", 64, "tf32");
  ASSERT_TRUE(r.gpu_change.applied);
  const double images_per_s = r.throughput_samples_per_s;
  const double as_captured =
      on(capture("h200", "resnet50-fp32"), "a100-sxm4-80gb").throughput_samples_per_s;
  std::printf(
      "resnet50-fp32  H200 -> A100 80GB, TF32: %.0f img/s (DeepLearningExamples: 938, %+.1f%%; "
      "FP32 GEMMs as captured: %.0f, %+.1f%%)\n",
      images_per_s, percent(images_per_s, 938), as_captured, percent(as_captured, 938));
  EXPECT_LE(std::abs(percent(images_per_s, 938)), 8.0);
  EXPECT_GT(images_per_s, as_captured);
}

// BERT-base on a V100 in FP32: no TF32 on either side (the capture's GEMMs
// are FP32 SIMT and FFMA kernels: PyTorch 2 leaves TF32 off for matmuls;
// the V100 has none). The published run's steady rate: iterations 51 to 101
// of 24 sequences of 384 tokens, logged at 03:06:05.348948 and
// 03:06:33.218695. Sequences of 384 tokens cost more per token than 128
// (attention): per layer and token, 24 d^2 + 4 s d FLOPs with d = 768, so
// the published rate is converted to sequences of 128 by 3 x that ratio.
TEST(GpuWhatIfValidation, PublishedV100BertBaseFp32) {
  const ReplayResult r = on(capture("h200", "bert-base"), "v100-sxm2-16gb", 32);
  ASSERT_TRUE(r.gpu_change.applied);
  const double seconds_per_step = (33.218695 - 5.348948) / 50;
  const double published_384 = 24 / seconds_per_step;  // sequences of 384 a second
  const double d = 768;
  const auto per_token = [d](double seq) { return 24 * d * d + 4 * seq * d; };
  const double published_128 = published_384 * 3 * per_token(384) / per_token(128);
  const double predicted = r.throughput_samples_per_s;
  std::printf(
      "bert-base      H200 -> V100 16GB: %.1f seq/s of 128 (Lambda: %.1f of 384, %.1f of "
      "128 by FLOPs, %+.1f%%; by tokens %+.1f%%)\n",
      predicted, published_384, published_128, percent(predicted, published_128),
      percent(predicted * 128, published_384 * 384));
  EXPECT_LE(std::abs(percent(predicted, published_128)), 10.0);
}

// The same benchmark on an A100 and an H100 (Lambda's table,
// pytorch/pytorch-train-throughput-fp32.csv, "A100 80GB SXM4" 239, "A100 80GB
// PCIe" 224, "H100 80GB SXM5" 408): batch 172, sequence 384, AMP off, in
// NGC containers 22.09 and 22.10, whose TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1
// runs FP32 matmuls on TF32 tensor cores (no TF32 setting in the logs or the
// scripts: by the container's default). Steady rates from each log's marks
// at iterations 51 and 101 (pytorch/results/A100_80GB_SXM4_v1/
// PyTorch_bert_base_squad_FP32/19-11-2022_18-56-22.txt, A100_80GB_PCIe_v1/
// .../14-12-2022_22-51-11.txt, H100_80GB_SXM5_v1/.../14-02-2023_05-30-17.txt).
// The capture's GEMMs are FP32 on CUDA cores: workload.fp32_matmul tf32
// moves them (today -7.8%, -2.6%, +6.0% per FLOP); as captured they come out
// 63-79% low.
TEST(GpuWhatIfValidation, PublishedTf32BertBaseOnA100AndH100) {
  struct Published {
    const char* gpu;
    double seconds_51_to_101;  // between the log's marks, 50 steps of 172
  };
  const double d = 768;
  const auto per_token = [d](double seq) { return 24 * d * d + 4 * seq * d; };
  for (const Published& p : {Published{"a100-sxm4-80gb", 59.685293 - 24.406178},
                             Published{"a100-pcie-80gb", 53.467412 - 15.472781},
                             Published{"h100-sxm", 26.063666 - 5.588713}}) {
    SCOPED_TRACE(p.gpu);
    const double published_384 = 172 * 50 / p.seconds_51_to_101;
    const double published_128 = published_384 * 3 * per_token(384) / per_token(128);
    const ReplayResult tf32 = on(capture("h200", "bert-base"), p.gpu, 32, "tf32");
    const ReplayResult fp32 = on(capture("h200", "bert-base"), p.gpu, 32);
    ASSERT_TRUE(tf32.gpu_change.applied);
    std::printf(
        "bert-base      H200 -> %s, TF32: %.1f seq/s of 128 (Lambda: %.1f of 384, %.1f of 128 "
        "by FLOPs, %+.1f%%; by tokens %+.1f%%; FP32 GEMMs as captured: %+.1f%%)\n",
        p.gpu, tf32.throughput_samples_per_s, published_384, published_128,
        percent(tf32.throughput_samples_per_s, published_128),
        percent(tf32.throughput_samples_per_s * 128, published_384 * 384),
        percent(fp32.throughput_samples_per_s, published_128));
    EXPECT_LE(std::abs(percent(tf32.throughput_samples_per_s, published_128)), 10.0);
    EXPECT_LT(percent(fp32.throughput_samples_per_s, published_128), -50.0);
  }
}

// Public Kineto traces of one ResNet-50 training (batch 32, FP32 model) on a
// V100-SXM2-32GB (cuDNN's FP32 kernels) and on two A100-PG509-200 (A100
// SXM4 40 GB; cuDNN's TF32 kernels, PyTorch's default for convolutions):
// traces/datasets/hta-resnet50, from HolisticTraceAnalysis' test data. Each
// capture's kernel time an iteration (ssgd's own figure, kernel_ns_before)
// is the measurement of the other's prediction. Not within the 5% of the
// H200/H100 pair: moving a convolution between FP32 cores and TF32 tensor
// cores by the ratio of the peaks (x9.94) overstates the change, since
// ResNet-50's TF32 convolutions reach a far smaller share of their peak than
// its FP32 ones (docs/validation.md, section 13). Held where they are today
// (V100 -> A100 -17.7%, A100 -> V100 +66%) so that a change shows.
std::filesystem::path hta(const std::string& id) {
  return std::filesystem::path(SSGD_SOURCE_DIR) / "traces/datasets/hta-resnet50" / id /
         "trace.ssgdt";
}

TEST(GpuWhatIfValidation, HtaV100AndA100CapturesOfOneTrainingPredictEachOther) {
  const ReplayResult to_a100 = on(hta("v100"), "a100-sxm4-40gb", 32, "tf32");
  const ReplayResult to_v100 = on(hta("a100-ddp"), "v100-sxm2-32gb", 32);
  ASSERT_TRUE(to_a100.gpu_change.applied && to_v100.gpu_change.applied);
  const double v100_ms = static_cast<double>(to_a100.gpu_change.kernel_ns_before) / 1e6;
  const double a100_ms = static_cast<double>(to_v100.gpu_change.kernel_ns_before) / 1e6;
  const double to_a100_ms = static_cast<double>(to_a100.gpu_change.kernel_ns_after) / 1e6;
  const double to_v100_ms = static_cast<double>(to_v100.gpu_change.kernel_ns_after) / 1e6;
  // The matrix work (convolutions and GEMMs) of each, as the split has it.
  const auto matrix_ms = [](const ReplayResult& r) {
    const auto& s = r.gpu_change.split;
    double ns = 0;
    for (const auto rate : {trace::WorkRate::kFp32, trace::WorkRate::kTf32, trace::WorkRate::kFp16,
                            trace::WorkRate::kBf16}) {
      ns += static_cast<double>(s[rate]);
    }
    return ns / 1e6;
  };
  std::printf(
      "resnet50 (HTA) V100 -> A100, TF32: kernels %.3f -> %.3f ms (A100 measured %.3f, %+.1f%%)\n"
      "resnet50 (HTA) A100 -> V100: kernels %.3f -> %.3f ms (V100 measured %.3f, %+.1f%%)\n"
      "  matrix work: V100 FP32 %.3f ms, A100 TF32 and FP32 %.3f ms: x%.2f measured, x%.2f by "
      "the peaks\n",
      v100_ms, to_a100_ms, a100_ms, percent(to_a100_ms, a100_ms), a100_ms, to_v100_ms, v100_ms,
      percent(to_v100_ms, v100_ms), matrix_ms(to_a100), matrix_ms(to_v100),
      matrix_ms(to_a100) / matrix_ms(to_v100), 156 / 15.7);
  EXPECT_NEAR(percent(to_a100_ms, a100_ms), -17.7, 3.0);
  EXPECT_NEAR(percent(to_v100_ms, v100_ms), 66.0, 5.0);
  // Without workload.fp32_matmul the V100's FP32 convolutions stay FP32 on
  // the A100 (+90%), and a note says that PyTorch would run them in TF32.
  const ReplayResult kept = on(hta("v100"), "a100-sxm4-40gb", 32);
  const double kept_ms = static_cast<double>(kept.gpu_change.kernel_ns_after) / 1e6;
  std::printf("resnet50 (HTA) V100 -> A100, FP32 kept: kernels %.3f ms (%+.1f%%)\n", kept_ms,
              percent(kept_ms, a100_ms));
  EXPECT_NEAR(percent(kept_ms, a100_ms), 89.6, 3.0);
  const auto& notes = kept.gpu_change.notes;
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const std::string& n) {
    return n.find("PyTorch would run convolutions on TF32 tensor cores") != std::string::npos;
  }));
}

}  // namespace
}  // namespace ssgd::sim
