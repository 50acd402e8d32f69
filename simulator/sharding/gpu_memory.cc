#include "simulator/sharding/gpu_memory.h"

#include <algorithm>
#include <cmath>

namespace ssgd::sim {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Each unit's parameters, in unit order.
std::vector<std::int64_t> unit_params(const std::vector<std::int64_t>& params,
                                      const std::vector<dag::ShardUnit>& units) {
  std::vector<std::int64_t> out;
  for (const auto& u : units) {
    std::int64_t p = 0;
    for (std::int32_t l = u.first; l <= u.last; ++l) p += params[static_cast<std::size_t>(l)];
    out.push_back(p);
  }
  return out;
}

}  // namespace

std::int64_t ddp_bucket_bytes(const MemoryEstimate& estimate, bool bucket_view) {
  return bucket_view ? 0 : estimate.gradients;
}

std::int64_t horovod_fusion_buffer_bytes(const trace::LayerProfile& profile,
                                         std::int64_t fusion_threshold_bytes,
                                         std::int64_t workers) {
  if (workers <= 1) return 0;
  const std::vector<std::int64_t> params = layer_params(profile);
  const auto with_gradients =
      std::count_if(params.begin(), params.end(), [](std::int64_t p) { return p > 0; });
  return with_gradients > 1 ? fusion_threshold_bytes : 0;
}

std::int64_t generic_gather_output_bytes(const trace::LayerProfile& profile,
                                         const ShardSettings& settings, const StepDtypes& dtypes) {
  if (!settings.per_unit_gathers()) return 0;
  const std::vector<std::int64_t> per_unit =
      unit_params(layer_params(profile), make_units(profile, settings.units));
  if (per_unit.empty()) return 0;
  return *std::max_element(per_unit.begin(), per_unit.end()) * dtype_bytes(dtypes.gather);
}

MemoryEstimate estimate_memory(const trace::LayerProfile& profile, const ShardSettings& settings,
                               const StepDtypes& dtypes, std::int64_t shard_ranks,
                               double activation_scale) {
  MemoryEstimate m;
  const std::vector<std::int64_t> params = layer_params(profile);
  std::int64_t psi = 0;
  for (auto p : params) psi += p;
  const std::int64_t s = dtype_bytes(dtypes.precision);
  const std::int64_t n = std::max<std::int64_t>(1, shard_ranks);
  m.shard_ranks = n;
  const ShardStrategy st = settings.strategy;
  // fp32 master weights: the paper's 4 bytes under mixed precision; ZeRO-1
  // and ZeRO-2 in fp32 step on an fp32 copy of the rank's shard beside the
  // full parameters too (DeepSpeed's single_partition_of_fp32_groups is a
  // clone; FSDP SHARD_GRAD_OP keeps the sharded flat parameter beside the
  // unsharded one), where ZeRO-3 and HSDP step on the shard itself.
  const bool master_copy = dtypes.precision != Dtype::kFp32 || st == ShardStrategy::kZero1 ||
                           st == ShardStrategy::kZero2;
  std::int64_t k = master_copy ? 4 : 0;
  const Optimizer optimizer = settings.optimizer_or_assumed();
  if (optimizer == Optimizer::kMomentum) k += 4;
  if (optimizer == Optimizer::kAdam) k += 8;
  m.optimizer_bytes_per_param = k;
  m.master_weights = master_copy;
  const bool shard_optimizer = st != ShardStrategy::kNone;
  const bool shard_grads = st == ShardStrategy::kZero2 || settings.per_unit_gathers();
  const bool shard_params = settings.per_unit_gathers();
  m.parameters = shard_params ? ceil_div(s * psi, n) : s * psi;
  m.gradients = shard_grads ? ceil_div(s * psi, n) : s * psi;
  m.optimizer_state = shard_optimizer ? ceil_div(k * psi, n) : k * psi;

  const std::vector<dag::ShardUnit> units = make_units(profile, settings.units);
  const std::vector<std::int64_t> per_unit = unit_params(params, units);
  const std::int64_t largest_unit = *std::max_element(per_unit.begin(), per_unit.end());
  if (shard_grads) {
    // Autograd computes a layer's gradients into tensors of their own and
    // then adds them into the unit's flat gradient buffer (FSDP's flat
    // parameters; FSDP2 copies them into its reduce-scatter input instead):
    // the largest layer's, once, beside the buffers.
    m.gradient_temporary = *std::max_element(params.begin(), params.end()) * s;
    // One unit's (or, ZeRO-2, one bucket's) gradients before their
    // reduction: the least there is; the replay puts its schedule's peak in
    // its place (simulator/replay/gradient_buffers.h).
    std::int64_t bucket = 0;  // in parameters
    if (settings.per_unit_gathers()) {
      bucket = largest_unit;
    } else {
      for (auto p : params) bucket = std::max(bucket, p);
    }
    m.waiting_gradients = bucket * dtype_bytes(dtypes.reduce);
  }
  if (shard_params) {
    const std::int64_t g = dtype_bytes(dtypes.gather);
    if (!settings.reshard_after_forward) {
      m.gathered += psi * g;
    } else {
      std::int64_t w = 1 + settings.forward_prefetch;
      if (settings.backward_prefetch != dag::BackwardPrefetch::kNone) w = std::max<std::int64_t>(w, 2);
      if (settings.max_gathers_in_flight > 0) w = std::min(w, settings.max_gathers_in_flight);
      const auto U = static_cast<std::int64_t>(per_unit.size());
      w = std::min(w, U);
      std::int64_t window = 0, best = 0;
      for (std::int64_t u = 0; u < U; ++u) {
        window += per_unit[static_cast<std::size_t>(u)];
        if (u >= w) window -= per_unit[static_cast<std::size_t>(u - w)];
        // The last unit stays gathered into its backward: count it beside
        // any window that does not hold it.
        const std::int64_t last = u == U - 1 ? 0 : per_unit.back();
        best = std::max(best, window + last);
      }
      m.gathered += best * g;
    }
  }
  if (shard_grads && settings.accumulation > 1 && settings.no_sync) {
    m.accumulation = s * psi;
    // The gradients waiting for their reductions are those same buffers
    // (reduced after the last micro-batch), unless they are cast to another
    // dtype to be reduced.
    if (dtypes.reduce == dtypes.precision) {
      m.waiting_gradients = 0;
      m.waiting_in_accumulation = true;
    }
  }
  if (profile.has_activations()) {
    double kept = 0;
    if (!settings.activation_checkpointing) {
      for (const auto& row : profile.layers) kept += static_cast<double>(*row.activation_bytes);
    } else {
      double largest = 0;
      for (const auto& u : units) {
        kept += static_cast<double>(*profile.layers[static_cast<std::size_t>(u.first)].activation_bytes);
        double inside = 0;
        for (std::int32_t l = u.first; l <= u.last; ++l) {
          inside += static_cast<double>(*profile.layers[static_cast<std::size_t>(l)].activation_bytes);
        }
        largest = std::max(largest, inside);
      }
      kept += largest;
    }
    m.activations = static_cast<std::int64_t>(std::llround(kept * activation_scale));
  }
  return m;
}

}  // namespace ssgd::sim
