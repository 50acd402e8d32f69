#include "simulator/scenario/scenario_scaling.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"
#include "simulator/scenario/scenario_platform.h"

namespace ssgd::sim {

BatchPlan batch_plan(const trace::LayerProfile& profile, const Scenario& scenario) {
  return batch_plan(profile, scenario.scaling, scenario.workers(), scenario.batch_per_gpu);
}

BatchTimeModel scenario_batch_time_model(const trace::LayerProfile& profile,
                                         const Scenario& scenario, const BatchPlan& plan) {
  return batch_time_model(profile, scenario.scaling, plan, scenario_second_profile(scenario).get());
}

BatchWorkload workload_at_batch(const trace::LayerProfile& profile, const Scenario& scenario,
                                const BatchPlan& plan, const BatchTimeModel* model) {
  BatchWorkload out{profile, scenario};
  if (!plan.rescaled()) return out;
  if (model == nullptr) {
    throw std::invalid_argument(
        fmt::format("batch {} differs from the input's {} but no compute model was given",
                    plan.per_gpu_batch, plan.reference_batch));
  }
  out.profile = profile_at_batch(profile, *model, plan.per_gpu_batch);
  const auto at_batch = [&plan](Duration d, const char* key) {
    try {
      return batch_proportional_time(d, plan.per_gpu_batch, plan.reference_batch);
    } catch (const std::out_of_range&) {
      throw std::invalid_argument(
          fmt::format("{} at batch {} (x {} / {}) does not fit the simulated clock", key,
                      plan.per_gpu_batch, plan.per_gpu_batch, plan.reference_batch));
    }
  };
  out.scenario.io_time = at_batch(scenario.io_time, "workload.io_time");
  out.scenario.h2d_time = at_batch(scenario.h2d_time, "workload.h2d_time");
  return out;
}

Scenario single_gpu_scenario(const Scenario& scenario, const BatchPlan& plan) {
  Scenario one = scenario;
  one.nodes = 1;
  one.gpus_per_node = 1;
  // One worker communicates with no one: the platform does not matter, but
  // its GPU does (simulator/perturb/gpu_change.h), as the run's.
  const std::string gpu = scenario_gpu_model(scenario);
  one.platform = PlatformChoice{};
  one.platform.gpu_model = gpu.empty() ? std::string("capture") : gpu;
  one.platform.gpu_model_from_key = scenario.platform.gpu_model_from_key;
  one.intra_node_given = one.inter_node_given = false;
  one.gpus_per_node_given = false;
  one.calibration.reset();
  one.files.calibration.reset();
  one.files.calibration_path.clear();
  one.algorithm = CollectiveAlgorithm::kAuto;
  one.network_model = "analytical";
  one.iterations = std::min<std::int64_t>(scenario.iterations, 3);
  // The baseline is one unperturbed rank: the compute factors that apply
  // to every rank stay, those that make ranks differ go.
  one.perturb.stragglers.clear();
  one.perturb.imbalance = 0;
  one.perturb.jitter = JitterSpec{};
  one.perturb.repeats = 1;
  one.jobs.clear();
  if (plan.mode == ScalingMode::kStrong) one.scaling.global_batch = plan.global_batch;
  return one;
}

void check_scaling_keys(const Scenario& scenario, const std::string& file) {
  const auto fail = [&file](const char* key, const std::string& reason) {
    return InputError({file, std::nullopt, std::nullopt, key}, reason);
  };
  const ScalingChoice& s = scenario.scaling;
  if (s.fixed_fraction && s.second_profile) {
    throw fail("scaling.fixed_fraction",
               "give scaling.fixed_fraction or scaling.second_profile, not both: the fit to the "
               "second profile finds each layer's fixed part itself");
  }
  if (s.mode == ScalingMode::kWeak) {
    if (s.global_batch) {
      throw fail(
          "scaling.global_batch",
          fmt::format("is {} but scaling.mode is weak, where each GPU keeps the input's batch; "
                      "set scaling.mode: strong to fix the global batch",
                      *s.global_batch));
    }
    return;
  }
  if (!scenario.jobs.empty()) {
    throw fail(
        "scaling.mode",
        "strong scaling changes the scenario's own job only, and is not combined with jobs on a "
        "shared fabric; leave jobs out or use scaling.mode: weak");
  }
  if (s.global_batch && *s.global_batch < scenario.workers()) {
    throw fail(
        "scaling.global_batch",
        fmt::format("{} samples cannot be split over {} GPUs ({} node(s) x {}); every GPU needs "
                    "at least one",
                    *s.global_batch, scenario.workers(), scenario.nodes, scenario.gpus_per_node));
  }
}

}  // namespace ssgd::sim
