#include "simulator/scaling/batch_plan.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"
#include "simulator/replay_input.h"

namespace ssgd::sim {
namespace {

// As scaling.global_batch's bound in scenario_schema.cc.
constexpr std::int64_t kMaxGlobalBatch = 1LL << 30;

}  // namespace

BatchPlan batch_plan(const trace::LayerProfile& profile, const Scenario& scenario) {
  BatchPlan plan;
  plan.mode = scenario.scaling.mode;
  plan.gpus = scenario.workers();
  if (scenario.batch_per_gpu) {
    plan.reference_batch = *scenario.batch_per_gpu;
    plan.batch_known = true;
  } else if (profile.batch_per_gpu) {
    plan.reference_batch = *profile.batch_per_gpu;
    plan.batch_known = true;
  }
  // A batch line of an input is any positive integer: keep batch x GPUs in range.
  if (plan.mode == ScalingMode::kWeak) {
    if (plan.reference_batch > std::numeric_limits<std::int64_t>::max() / plan.gpus) {
      throw std::invalid_argument(
          fmt::format("a batch of {} on each of {} GPUs overflows the sample count; check the "
                      "input's batch_per_gpu and workload.batch_per_gpu",
                      plan.reference_batch, plan.gpus));
    }
    plan.per_gpu_batch = plan.reference_batch;
    plan.global_batch = plan.gpus * plan.reference_batch;
    return plan;
  }
  if (!plan.batch_known) {
    throw InputError(
        {profile.source.empty() ? std::string("the input") : profile.source, std::nullopt,
         std::nullopt, "batch_per_gpu"},
        "scaling.mode strong needs the per-GPU batch this input's times were measured at, and the "
        "input does not say: add a '# batch_per_gpu: N' line to the profile, or set "
        "workload.batch_per_gpu");
  }
  if (!scenario.scaling.global_batch && plan.reference_batch > kMaxGlobalBatch / plan.gpus) {
    throw std::invalid_argument(fmt::format(
        "scaling.global_batch: the default, a batch of {} on each of {} GPUs, is more than {} "
        "samples; set scaling.global_batch",
        plan.reference_batch, plan.gpus, kMaxGlobalBatch));
  }
  plan.global_batch = scenario.scaling.global_batch.value_or(plan.reference_batch * plan.gpus);
  if (plan.global_batch < plan.gpus) {
    throw std::invalid_argument(
        fmt::format("scaling.global_batch: {} samples cannot be split over {} GPUs; every GPU "
                    "needs at least one",
                    plan.global_batch, plan.gpus));
  }
  plan.per_gpu_batch = (plan.global_batch + plan.gpus - 1) / plan.gpus;
  return plan;
}

BatchTimeModel scenario_batch_time_model(const trace::LayerProfile& profile,
                                         const Scenario& scenario, const BatchPlan& plan) {
  if (!scenario.scaling.second_profile) {
    return fixed_fraction_model(profile, plan.reference_batch,
                                scenario.scaling.fixed_fraction.value_or(0.0));
  }
  const std::filesystem::path& path = *scenario.scaling.second_profile;
  ReplayInput second = load_replay_input(path);
  if (second.profile.source.empty()) second.profile.source = path.string();
  if (!second.profile.batch_per_gpu) {
    throw InputError({path.string(), std::nullopt, std::nullopt, "batch_per_gpu"},
                     "scaling.second_profile needs the batch this profile was measured at: add a "
                     "'# batch_per_gpu: N' line");
  }
  return fitted_model(profile, plan.reference_batch, second.profile, *second.profile.batch_per_gpu);
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
  // One worker communicates with no one: the platform does not matter.
  one.platform = PlatformChoice{};
  one.intra_node_given = one.inter_node_given = false;
  one.gpus_per_node_given = false;
  one.calibration.reset();
  one.algorithm = CollectiveAlgorithm::kAuto;
  one.network_model = NetworkModelKind::kAnalytical;
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

ScalingFigures scaling_figures(const BatchPlan& plan, Duration iteration_time,
                               Duration single_gpu_iteration_time) {
  ScalingFigures f;
  if (iteration_time <= Duration::zero() || single_gpu_iteration_time <= Duration::zero()) return f;
  const double ratio = static_cast<double>(single_gpu_iteration_time.ns()) /
                       static_cast<double>(iteration_time.ns());
  const auto p = static_cast<double>(plan.gpus);
  if (plan.mode == ScalingMode::kWeak) {
    // P GPUs process P times the samples of one in each iteration.
    f.efficiency = ratio;
    f.speedup = ratio * p;
  } else {
    // The same samples per iteration on P GPUs as on one.
    f.speedup = ratio;
    f.efficiency = ratio / p;
  }
  return f;
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
