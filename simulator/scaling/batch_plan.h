#pragma once
// GPU-count scaling: which batch each GPU computes, how many samples an
// iteration processes, the one-GPU baseline a run is compared with, and the
// speedup and scaling efficiency against it (docs/scaling.md).
//
//   weak   (scaling.mode: weak, the default): every GPU keeps the batch the
//          input's times were measured at, b_ref; P GPUs process P b_ref
//          samples an iteration. Baseline: one GPU at b_ref.
//          speedup = P t(1) / t(P), efficiency = t(1) / t(P).
//   strong (scaling.mode: strong): the global batch B (scaling.global_batch,
//          default b_ref x the scenario's GPU count) is split over the P
//          GPUs; each computes ceil(B / P) samples (B mod P of them get one
//          more than the others, and a synchronous step waits for the
//          largest share), compute follows the batch by the model of
//          batch_time_model.h, and an iteration processes B samples.
//          Baseline: one GPU computing all of B.
//          speedup = t(1) / t(P), efficiency = speedup / P.
// In both, speedup is the throughput ratio (samples/s on P GPUs over samples/s
// on one), and efficiency = speedup / P.

#include <cstdint>
#include <optional>
#include <string>

#include "common/time.h"
#include "simulator/scaling/batch_time_model.h"
#include "simulator/scaling/scaling_choice.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {

struct BatchPlan {
  ScalingMode mode = ScalingMode::kWeak;
  std::int64_t gpus = 1;             // P
  std::int64_t reference_batch = 1;  // b_ref: workload.batch_per_gpu, else the input's metadata
  bool batch_known = false;        // false: no batch anywhere; 1 assumed, throughput counts batches
  std::int64_t global_batch = 1;   // B: samples an iteration processes over all GPUs
  std::int64_t per_gpu_batch = 1;  // b: the largest batch a GPU computes (ceil(B / P) when strong)
  [[nodiscard]] bool rescaled() const { return per_gpu_batch != reference_batch; }
};

// The batches of `gpus` GPUs under `scaling` for `profile`, whose reference
// batch is `batch_per_gpu` when given (workload.batch_per_gpu), else the
// profile's own. Throws ssgd::InputError naming the profile and its
// batch_per_gpu field when strong scaling has no batch to start from (no
// '# batch_per_gpu:' line and no workload.batch_per_gpu), and
// std::invalid_argument naming scaling.global_batch when it is below the GPU
// count (load_scenario checks that first, for scenarios read from files).
BatchPlan batch_plan(const trace::LayerProfile& profile, const ScalingChoice& scaling,
                     std::int64_t gpus, std::optional<std::int64_t> batch_per_gpu);

// The compute model for `profile`: fitted to `second_profile` (which must
// carry its batch_per_gpu) when given, else scaling.fixed_fraction (default
// 0: proportional).
BatchTimeModel batch_time_model(const trace::LayerProfile& profile, const ScalingChoice& scaling,
                                const BatchPlan& plan, const trace::LayerProfile* second_profile);

struct ScalingFigures {
  double speedup = 0;     // throughput on P GPUs / throughput on one
  double efficiency = 0;  // speedup / P
};
// 0 and 0 when either time is 0.
ScalingFigures scaling_figures(const BatchPlan& plan, Duration iteration_time,
                               Duration single_gpu_iteration_time);

}  // namespace ssgd::sim
