#include "simulator/scaling/batch_plan.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"

namespace ssgd::sim {
namespace {

// As scaling.global_batch's bound in scenario_schema.cc.
constexpr std::int64_t kMaxGlobalBatch = 1LL << 30;

}  // namespace

BatchPlan batch_plan(const trace::LayerProfile& profile, const ScalingChoice& scaling,
                     std::int64_t gpus, std::optional<std::int64_t> batch_per_gpu) {
  BatchPlan plan;
  plan.mode = scaling.mode;
  plan.gpus = gpus;
  if (batch_per_gpu) {
    plan.reference_batch = *batch_per_gpu;
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
  if (!scaling.global_batch && plan.reference_batch > kMaxGlobalBatch / plan.gpus) {
    throw std::invalid_argument(fmt::format(
        "scaling.global_batch: the default, a batch of {} on each of {} GPUs, is more than {} "
        "samples; set scaling.global_batch",
        plan.reference_batch, plan.gpus, kMaxGlobalBatch));
  }
  plan.global_batch = scaling.global_batch.value_or(plan.reference_batch * plan.gpus);
  if (plan.global_batch < plan.gpus) {
    throw std::invalid_argument(
        fmt::format("scaling.global_batch: {} samples cannot be split over {} GPUs; every GPU "
                    "needs at least one",
                    plan.global_batch, plan.gpus));
  }
  plan.per_gpu_batch = (plan.global_batch + plan.gpus - 1) / plan.gpus;
  return plan;
}

BatchTimeModel batch_time_model(const trace::LayerProfile& profile, const ScalingChoice& scaling,
                                const BatchPlan& plan, const trace::LayerProfile* second_profile) {
  if (second_profile == nullptr) {
    return fixed_fraction_model(profile, plan.reference_batch, scaling.fixed_fraction.value_or(0.0));
  }
  if (!second_profile->batch_per_gpu) {
    throw std::invalid_argument("scaling.second_profile has no batch_per_gpu");
  }
  return fitted_model(profile, plan.reference_batch, *second_profile,
                      *second_profile->batch_per_gpu);
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

}  // namespace ssgd::sim
