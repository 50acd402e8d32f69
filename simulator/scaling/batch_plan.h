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
#include <string>

#include "common/time.h"
#include "simulator/scaling/batch_time_model.h"
#include "simulator/scenario.h"
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

// The batches of `scenario` for `profile`. Throws ssgd::InputError naming
// the profile and its batch_per_gpu field when strong scaling has no batch to
// start from (no '# batch_per_gpu:' line and no workload.batch_per_gpu), and
// std::invalid_argument naming scaling.global_batch when it is below the GPU
// count (load_scenario checks that first, for scenarios read from files).
BatchPlan batch_plan(const trace::LayerProfile& profile, const Scenario& scenario);

// The compute model of `scenario` for `profile`: fitted to
// scaling.second_profile when it is given (read here; ssgd::InputError for a
// file that cannot be read, lacks '# batch_per_gpu:' or is not the same
// model), else scaling.fixed_fraction (default 0: proportional).
BatchTimeModel scenario_batch_time_model(const trace::LayerProfile& profile,
                                         const Scenario& scenario, const BatchPlan& plan);

// The workload of one GPU under `plan`: `profile` at the per-GPU batch, and
// the scenario with workload.io_time and workload.h2d_time in proportion to
// it. Both unchanged when the batch is the reference batch.
struct BatchWorkload {
  trace::LayerProfile profile;
  Scenario scenario;
};
BatchWorkload workload_at_batch(const trace::LayerProfile& profile, const Scenario& scenario,
                                const BatchPlan& plan, const BatchTimeModel* model);

// The scenario of the one-GPU baseline: 1 node x 1 GPU on the generic
// platform (one GPU talks to no one, so the platform cannot matter),
// min(iterations, 3) iterations, no straggler, imbalance, jitter or repeats
// (the compute factors that apply to every rank stay), and, when strong, the
// whole global batch of `plan` on that GPU.
Scenario single_gpu_scenario(const Scenario& scenario, const BatchPlan& plan);

struct ScalingFigures {
  double speedup = 0;     // throughput on P GPUs / throughput on one
  double efficiency = 0;  // speedup / P
};
// 0 and 0 when either time is 0.
ScalingFigures scaling_figures(const BatchPlan& plan, Duration iteration_time,
                               Duration single_gpu_iteration_time);

// The checks of the scaling keys that need the whole scenario, made by
// load_scenario once the file and every --set are applied. Throws
// ssgd::InputError at `file` (the scenario file, or "--set") naming the key:
// scaling.global_batch in weak mode or below the GPU count,
// scaling.fixed_fraction together with scaling.second_profile, and strong
// scaling with jobs on a shared fabric.
void check_scaling_keys(const Scenario& scenario, const std::string& file);

}  // namespace ssgd::sim
