#pragma once
// A scenario's GPU-count scaling (simulator/scaling/, docs/scaling.md): its
// batch plan and compute model, one GPU's workload at the planned batch, the
// one-GPU baseline scenario, and the checks of the scaling keys.

#include <string>

#include "simulator/scaling/batch_plan.h"
#include "simulator/scaling/batch_time_model.h"
#include "simulator/scenario/scenario.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {

// The batches of `scenario` for `profile` (batch_plan in batch_plan.h, with
// the scenario's GPU count and workload.batch_per_gpu).
BatchPlan batch_plan(const trace::LayerProfile& profile, const Scenario& scenario);

// The compute model of `scenario` for `profile`: fitted to
// scaling.second_profile (read by load_scenario) when it is given, else
// scaling.fixed_fraction (default 0: proportional).
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

// The checks of the scaling keys that need the whole scenario, made by
// load_scenario once the file and every --set are applied. Throws
// ssgd::InputError at `file` (the scenario file, or "--set") naming the key:
// scaling.global_batch in weak mode or below the GPU count,
// scaling.fixed_fraction together with scaling.second_profile, and strong
// scaling with jobs on a shared fabric.
void check_scaling_keys(const Scenario& scenario, const std::string& file);

}  // namespace ssgd::sim
