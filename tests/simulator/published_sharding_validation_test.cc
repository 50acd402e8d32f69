// A published FSDP measurement predicted by the sharded replay
// (docs/validation.md, "Sharded data parallelism"): TorchTitan's Llama 3.1
// 8B with FSDP2 on 8 and on 128 H100 GPUs (pytorch/torchtitan,
// benchmarks/llama3_h100_202412_torchtitan.md, tables 1 and 3, "FSDP" rows:
// 5,762 and 5,605 tokens/s per GPU, 82.4 and 67.0 GiB peak reserved memory;
// local batch 2, sequence 8,192, bf16 parameters and fp32 gradient
// reduction, AdamW, selective activation checkpointing, one fully_shard per
// transformer block; Grand Teton hosts of 8 H100 with 400 Gb/s RDMA per GPU).
//
// The profile is the model's, from first principles: each block's FLOPs
// (6 x its parameters + 12 h s per token, torchtitan's own count; forward a
// third) at one rate, the rate at which the 8-GPU run's step does its FLOPs
// (949 TFLOP a step in 2.843 s: 334 TFLOP/s). The 8-GPU replay is then a
// replay of the measurement's compute plus the modelled collectives inside
// one NVSwitch node; the 128-GPU run is a what-if (another GPU count, and
// every collective across 16 nodes), and so is the memory's drop from 8 to
// 128 GPUs (the sharded state; the activations are not in the profile and
// cancel between the two).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "simulator/input/scenario_inputs.h"
#include "simulator/replay/replay.h"
#include "simulator/scenario/scenario.h"

namespace ssgd::sim {
namespace {

constexpr double kTokens = 2 * 8192;  // a GPU's tokens a step
constexpr double kHidden = 4096, kSeq = 8192;
constexpr double kVocab = 128256;
constexpr double kBlockParams = 4096.0 * (4096 + 1024 + 1024 + 4096) + 3 * 4096.0 * 14336 + 2 * 4096;
constexpr double kEmbeddingParams = kVocab * kHidden;
// The 8-GPU step: 16,384 tokens at 5,762 tokens/s.
constexpr double kMeasured8 = kTokens / 5762;
constexpr double kMeasured128 = kTokens / 5605;

trace::LayerProfile llama3_8b(double flops_per_s) {
  trace::LayerProfile p;
  p.model = "Llama 3.1 8B (FLOPs at one rate)";
  p.batch_per_gpu = 2;
  p.grad_dtype = "fp32";
  const auto add = [&](const std::string& name, double params, double flops_fwd_bwd) {
    trace::LayerRow row;
    row.layer = static_cast<std::int64_t>(p.layers.size());
    row.name = name;
    const double seconds = flops_fwd_bwd / flops_per_s;
    row.forward = Duration(std::llround(seconds / 3 * 1e9));
    row.backward = Duration(std::llround(seconds * 2 / 3 * 1e9));
    row.grad_bytes = 4 * static_cast<std::int64_t>(params);
    row.unit = row.layer;
    p.layers.push_back(row);
  };
  add("tok_embeddings", kEmbeddingParams, 0);
  for (int b = 0; b < 32; ++b) {
    add("layers." + std::to_string(b), kBlockParams,
        (6 * kBlockParams + 12 * kHidden * kSeq) * kTokens);
  }
  add("norm+output", kEmbeddingParams + 4096, 6 * kEmbeddingParams * kTokens);
  return p;
}

double total_flops() {
  return 32 * (6 * kBlockParams + 12 * kHidden * kSeq) * kTokens + 6 * kEmbeddingParams * kTokens;
}

ReplayResult torchtitan(int gpus, double rate) {
  std::vector<std::string> sets = {
      "platform.preset=hgx_h100", "platform.gpu.memory=96GiB",
      "cluster.nodes=" + std::to_string(gpus / 8), "sharding.strategy=zero3",
      "workload.precision=bf16", "workload.reduce_dtype=fp32", "workload.optimizer=adam",
      "iterations=4"};
  ReplayOptions options;
  options.single_worker_baseline = false;
  return replay(llama3_8b(rate), load_scenario(std::nullopt, sets), options);
}

TEST(PublishedShardingValidation, TorchtitanLlama3On8And128H100) {
  const double rate = total_flops() / kMeasured8;  // 334 TFLOP/s
  const ReplayResult r8 = torchtitan(8, rate);
  const ReplayResult r128 = torchtitan(128, rate);
  const double t8 = static_cast<double>(r8.iteration_time.ns()) * 1e-9;
  const double t128 = static_cast<double>(r128.iteration_time.ns()) * 1e-9;
  const double err8 = t8 / kMeasured8 - 1;
  const double err128 = t128 / kMeasured128 - 1;
  // The sharded state's drop from 8 to 128 GPUs, against the measured
  // drop of peak reserved memory (82.4 - 67.0 GiB).
  const double gib = 1024.0 * 1024 * 1024;
  const double drop = static_cast<double>(r8.memory.total() - r128.memory.total()) / gib;
  const double measured_drop = 82.4 - 67.0;
  std::printf(
      "TorchTitan Llama 3.1 8B FSDP2 (tokens/s per GPU): 8 GPUs %.0f predicted vs 5762 "
      "measured (%+.1f%%); 128 GPUs %.0f vs 5605 (%+.1f%%); memory drop 8->128 %.2f GiB vs "
      "%.1f GiB (%+.1f%%); memory at 8 GPUs without activations %.2f GiB, at 128 %.2f GiB\n",
      kTokens / t8, -100 * err8 / (1 + err8), kTokens / t128, -100 * err128 / (1 + err128),
      drop, measured_drop, 100 * (drop / measured_drop - 1),
      static_cast<double>(r8.memory.total()) / gib, static_cast<double>(r128.memory.total()) / gib);
  EXPECT_LT(std::abs(err8), 0.03);     // a replay: within 3%
  EXPECT_LT(std::abs(err128), 0.05);   // a what-if: within 5%
  EXPECT_LT(std::abs(drop / measured_drop - 1), 0.10);  // memory: within 10%
  // The 128-GPU step is slower than the 8-GPU one, as measured (2.7%).
  EXPECT_GT(t128, t8);
}

}  // namespace
}  // namespace ssgd::sim
