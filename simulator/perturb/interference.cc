#include "simulator/perturb/interference.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "common/enum_names.h"
#include "common/error.h"

namespace ssgd::sim {
namespace {

using trace::WorkRate;

bool any_gpu_rate(const trace::RateSplit& s) {
  for (int k = 0; k < trace::kWorkRateCount; ++k) {
    if (static_cast<WorkRate>(k) != WorkRate::kHost && s.ns[static_cast<std::size_t>(k)] > 0) {
      return true;
    }
  }
  return false;
}

// The class that applies, and why.
std::pair<InterferenceResource, std::string> resource_of(const InterferenceSpec& spec,
                                                         const trace::LayerProfile& profile) {
  if (spec.resource != InterferenceResource::kAuto) {
    return {spec.resource, "interference.resource"};
  }
  if (!profile.gpu.empty()) return {InterferenceResource::kGpu, "the input computes on " + profile.gpu};
  if (profile.host_compute) {
    return {InterferenceResource::kHost, "the input's compute ran on the host (no GPU kernel)"};
  }
  if (!profile.has_splits()) {
    return {InterferenceResource::kGpu,
            "the input has no rate split and names no device: taken as a GPU's"};
  }
  for (const auto& row : profile.layers) {
    if (any_gpu_rate(*row.forward_split) || any_gpu_rate(*row.backward_split)) {
      return {InterferenceResource::kGpu, "the input's compute holds GPU kernels"};
    }
  }
  return {InterferenceResource::kHost, "the input's compute ran on the host (no GPU kernel)"};
}

}  // namespace

namespace {

constexpr EnumNames<InterferenceModel, 3> kModelNames{{{
    {InterferenceModel::kNone, "none"},
    {InterferenceModel::kContention, "contention"},
    {InterferenceModel::kDemand, "demand"},
}}};
constexpr EnumNames<InterferenceResource, 3> kResourceNames{{{
    {InterferenceResource::kAuto, "auto"},
    {InterferenceResource::kGpu, "gpu"},
    {InterferenceResource::kHost, "host"},
}}};

}  // namespace

const char* to_string(InterferenceModel m) { return kModelNames.name(m); }
const char* to_string(InterferenceResource r) { return kResourceNames.name(r); }

std::optional<InterferenceModel> parse_interference_model(std::string_view name) {
  return kModelNames.parse(name);
}

std::optional<InterferenceResource> parse_interference_resource(std::string_view name) {
  return kResourceNames.parse(name);
}

double split_factor(const trace::RateSplit& split, double compute, double memory) {
  const std::int64_t total = split.total();
  if (total <= 0) return compute;
  double weighted = 0;
  for (int k = 0; k < trace::kWorkRateCount; ++k) {
    const auto r = static_cast<WorkRate>(k);
    const auto v = static_cast<double>(split[r]);
    if (r == WorkRate::kHost) continue;
    weighted += v * (r == WorkRate::kMemory ? memory : compute);
  }
  return weighted / static_cast<double>(total);
}

trace::LayerProfile profile_without_interference(const trace::LayerProfile& captured,
                                                 InterferencePlan& plan) {
  trace::LayerProfile p = captured;
  if (!plan.active) return p;
  std::int64_t before = 0;
  std::int64_t after = 0;
  const auto strip = [&](Duration& t, std::optional<trace::RateSplit>& split, double share,
                         double f, double rate) {
    before += t.ns();
    const double lost = plan.demand ? std::min(plan.cpu_per_byte * rate, share / 2)
                                    : (f > 0 ? share * f / (1 + f) : 0.0);
    if (share > 0 && lost > 0) {
      const double keep = 1 - lost;
      t = Duration(std::llround(static_cast<double>(t.ns()) * keep));
      if (split) {
        // Scaled alike, the parts adding up to the new time again.
        for (auto& v : split->ns) v = std::llround(static_cast<double>(v) * keep);
        *split = trace::averaged_split(*split, 1, t.ns());
      }
    }
    after += t.ns();
  };
  for (std::size_t l = 0; l < p.layers.size(); ++l) {
    auto& row = p.layers[l];
    strip(row.forward, row.forward_split, row.forward_beside_comm,
          l < plan.forward.size() ? plan.forward[l] : plan.compute, row.forward_beside_comm_rate);
    strip(row.backward, row.backward_split, row.backward_beside_comm,
          l < plan.backward.size() ? plan.backward[l] : plan.compute,
          row.backward_beside_comm_rate);
    row.forward_beside_comm = row.backward_beside_comm = 0;
    row.forward_beside_comm_rate = row.backward_beside_comm_rate = 0;
  }
  if (p.update) {
    Duration u = *p.update;
    strip(u, p.update_split, p.update_beside_comm, plan.update, p.update_beside_comm_rate);
    p.update = u;
    p.update_beside_comm = 0;
    p.update_beside_comm_rate = 0;
  }
  if (after < before) {
    plan.notes.push_back(fmt::format(
        "the input ran its own collectives beside its compute: the slowdown that holds, {:.1f}% "
        "of its compute time, taken out before the replay adds this run's",
        100.0 * static_cast<double>(before - after) / static_cast<double>(before)));
  }
  return p;
}

double hbm_contention_factor(double wire_bytes_per_s, double hbm_bytes_per_s,
                             double hbm_bytes_per_byte) {
  if (!(hbm_bytes_per_s > 0) || !(wire_bytes_per_s >= 0) || !(hbm_bytes_per_byte >= 0)) {
    throw std::invalid_argument(
        fmt::format("hbm_contention_factor: bandwidths must be positive (wire {}, HBM {}, {} "
                    "bytes a byte)",
                    wire_bytes_per_s, hbm_bytes_per_s, hbm_bytes_per_byte));
  }
  const double share = std::min(0.9, wire_bytes_per_s * hbm_bytes_per_byte / hbm_bytes_per_s);
  return 1 / (1 - share) - 1;
}

InterferencePlan plan_interference(const InterferenceSpec& spec,
                                   const trace::LayerProfile& profile) {
  InterferencePlan plan;
  if (!spec.active()) return plan;
  const auto [resource, why] = resource_of(spec, profile);
  plan.resource = resource;
  plan.why = why;
  const bool gpu = resource == InterferenceResource::kGpu;
  if (spec.model == InterferenceModel::kDemand) {
    if (gpu) {
      throw ParameterError(
          "interference.model",
          fmt::format("demand models the CPU a host-side library's collectives take from the "
                      "rank's operators, and the class here is gpu ({}): use contention with "
                      "interference.gpu.*, or interference.resource: host",
                      why));
    }
    if (!spec.host_cpu_per_byte) {
      throw ParameterError("interference.host.cpu_per_byte",
                           "the model demand needs the CPU time a byte through the rank takes "
                           "(ssgd calibrate --interference fits it)");
    }
    plan.active = true;
    plan.demand = true;
    plan.cpu_per_byte = *spec.host_cpu_per_byte;
    plan.concurrent = spec.host_concurrent.value_or(0);
    if (spec.host_compute || spec.host_comm) {
      plan.notes.push_back(
          "interference.host.compute and .comm set but not applied: the model "
          "demand derives each collective's share of the CPU from its bytes");
    }
    if (spec.gpu_compute || spec.gpu_memory || spec.gpu_comm) {
      plan.notes.push_back(fmt::format("interference.gpu.* set but not applied: {}", why));
    }
    return plan;
  }
  const bool own_set = gpu ? (spec.gpu_compute || spec.gpu_memory || spec.gpu_comm)
                           : (spec.host_compute || spec.host_comm || spec.host_concurrent);
  if (!own_set) {
    const bool other_set = gpu ? (spec.host_compute || spec.host_comm || spec.host_concurrent)
                               : (spec.gpu_compute || spec.gpu_memory || spec.gpu_comm);
    throw ParameterError(
        "interference.model",
        fmt::format("contention applies the {} factors here ({}), and none of "
                    "interference.{}.* is set{}: set them (ssgd calibrate --interference fits "
                    "them), or interference.resource",
                    to_string(resource), why, to_string(resource),
                    other_set ? fmt::format(" (only interference.{}.* is)",
                                            gpu ? "host" : "gpu")
                              : ""));
  }
  plan.active = true;
  if (gpu) {
    plan.compute = spec.gpu_compute.value_or(0);
    plan.memory = spec.gpu_memory.value_or(plan.compute);
    plan.comm = spec.gpu_comm.value_or(0);
    if (!spec.gpu_memory && spec.gpu_compute) {
      plan.notes.push_back("interference.gpu.memory not set: memory-bound kernels slowed as "
                           "compute-bound ones");
    }
    if (spec.host_compute || spec.host_comm || spec.host_concurrent) {
      plan.notes.push_back(fmt::format("interference.host.* set but not applied: {}", why));
    }
  } else {
    plan.compute = spec.host_compute.value_or(0);
    plan.memory = plan.compute;
    plan.comm = spec.host_comm.value_or(0);
    plan.concurrent = spec.host_concurrent.value_or(0);
    if (spec.gpu_compute || spec.gpu_memory || spec.gpu_comm) {
      plan.notes.push_back(fmt::format("interference.gpu.* set but not applied: {}", why));
    }
  }
  if (spec.host_cpu_per_byte) {
    plan.notes.push_back(
        "interference.host.cpu_per_byte set but not applied: it is the model "
        "demand's (interference.model: demand)");
  }
  const bool splits = gpu && profile.has_splits();
  if (gpu && !splits && plan.memory != plan.compute) {
    plan.notes.push_back("the input has no rate split: interference.gpu.compute slows every "
                         "compute task whole, interference.gpu.memory is not used");
  }
  const auto factor = [&](const std::optional<trace::RateSplit>& split) {
    if (!gpu) return plan.compute;
    if (!split) return plan.compute;
    return split_factor(*split, plan.compute, plan.memory);
  };
  for (const auto& row : profile.layers) {
    plan.forward.push_back(factor(splits ? row.forward_split : std::nullopt));
    plan.backward.push_back(factor(splits ? row.backward_split : std::nullopt));
  }
  plan.update = factor(splits ? profile.update_split : std::nullopt);
  return plan;
}

}  // namespace ssgd::sim
