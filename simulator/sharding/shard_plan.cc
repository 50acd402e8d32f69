#include "simulator/sharding/shard_plan.h"

#include <algorithm>
#include <string>

#include "common/error.h"

namespace ssgd::sim {

StepDtypes step_dtypes(const ShardSettings& settings, const trace::LayerProfile& profile) {
  StepDtypes d;
  const std::optional<Dtype> recorded =
      profile.grad_dtype.empty() ? std::nullopt : parse_dtype(profile.grad_dtype);
  d.precision = settings.precision.value_or(recorded.value_or(Dtype::kFp32));
  d.reduce = settings.reduce_dtype.value_or(d.precision);
  d.gather = settings.gather_dtype.value_or(d.precision);
  return d;
}

trace::LayerProfile profile_in_dtype(const trace::LayerProfile& profile, Dtype reduce) {
  const std::int64_t from = profile.grad_element_bytes();
  const std::int64_t to = dtype_bytes(reduce);
  trace::LayerProfile out = profile;
  out.grad_dtype = to_string(reduce);
  if (from == to) return out;
  for (auto& row : out.layers) row.grad_bytes = row.grad_bytes / from * to;
  return out;
}

std::vector<std::int64_t> layer_params(const trace::LayerProfile& profile) {
  const std::int64_t size = profile.grad_element_bytes();
  std::vector<std::int64_t> params;
  params.reserve(profile.layers.size());
  for (const auto& row : profile.layers) params.push_back(row.grad_bytes / size);
  return params;
}

std::vector<dag::ShardUnit> make_units(const trace::LayerProfile& profile,
                                       const UnitsChoice& choice) {
  const auto L = static_cast<std::int32_t>(profile.layers.size());
  const std::vector<std::int64_t> params = layer_params(profile);
  // Where each unit starts, before parameterless units are merged.
  std::vector<std::int32_t> starts;
  if (choice.kind == UnitsChoice::Kind::kAuto && profile.has_units()) {
    for (std::int32_t l = 0; l < L; ++l) {
      if (l == 0 || *profile.layers[l].unit != *profile.layers[l - 1].unit) starts.push_back(l);
    }
  } else if (choice.kind == UnitsChoice::Kind::kMinParams) {
    std::int64_t held = 0;
    starts.push_back(0);
    for (std::int32_t l = 0; l < L; ++l) {
      if (held >= choice.min_params && held > 0) {
        starts.push_back(l);
        held = 0;
      }
      held += params[static_cast<std::size_t>(l)];
    }
  } else {
    for (std::int32_t l = 0; l < L; ++l) starts.push_back(l);
  }
  std::vector<dag::ShardUnit> units;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    dag::ShardUnit u;
    u.first = starts[k];
    u.last = k + 1 < starts.size() ? starts[k + 1] - 1 : L - 1;
    units.push_back(u);
  }
  // Units without parameters join the unit after them (trailing ones the
  // unit before): FSDP issues no collective for them.
  const auto unit_params = [&](const dag::ShardUnit& u) {
    std::int64_t p = 0;
    for (std::int32_t l = u.first; l <= u.last; ++l) p += params[static_cast<std::size_t>(l)];
    return p;
  };
  std::vector<dag::ShardUnit> merged;
  std::int32_t pending = -1;  // first layer of parameterless units waiting for a unit
  for (const auto& u : units) {
    if (unit_params(u) == 0) {
      if (pending < 0) pending = u.first;
      continue;
    }
    dag::ShardUnit m = u;
    if (pending >= 0) m.first = pending;
    pending = -1;
    merged.push_back(m);
  }
  if (merged.empty()) return {dag::ShardUnit{0, L - 1, -1}};
  if (pending >= 0) merged.back().last = L - 1;
  return merged;
}

std::int64_t shard_ranks(const ShardSettings& settings, std::int64_t workers,
                         std::int64_t gpus_per_node) {
  switch (settings.strategy) {
    case ShardStrategy::kNone: return 1;
    case ShardStrategy::kZero1:
    case ShardStrategy::kZero2:
    case ShardStrategy::kZero3: return workers;
    case ShardStrategy::kHsdp: break;
  }
  // One GPU is its own shard group, whatever the group (the one-GPU baseline
  // of a job whose groups are larger).
  if (workers == 1) return 1;
  const std::int64_t g = settings.group.value_or(std::min(gpus_per_node, workers));
  if (g < 1 || workers % g != 0) {
    throw ParameterError("sharding.group",
                         "a shard group of " + std::to_string(g) + " ranks does not divide the " +
                             std::to_string(workers) + " ranks of the job");
  }
  return g;
}

namespace {

// The operation that reduces a sharded step's gradient group.
dag::CommOp gradient_op(GradientReduction reduction) {
  switch (reduction) {
    case GradientReduction::kReduceScatter: return dag::CommOp::kReduceScatter;
    case GradientReduction::kReduce: return dag::CommOp::kReduce;
    case GradientReduction::kAllReduce: return dag::CommOp::kAllReduce;
  }
  return dag::CommOp::kReduceScatter;
}

}  // namespace

dag::ShardedPlan make_sharded_plan(const trace::LayerProfile& profile,
                                   const ShardSettings& settings, const StepDtypes& dtypes,
                                   const dag::CommPlan& replicated, std::int64_t workers,
                                   std::int64_t shards) {
  dag::ShardedPlan plan;
  plan.accumulation = settings.accumulation;
  plan.no_sync = settings.no_sync;
  plan.wait_for_full_backward = replicated.wait_for_full_backward;
  plan.separate_streams = settings.separate_streams;
  plan.forward_prefetch = settings.forward_prefetch;
  plan.backward_prefetch = settings.backward_prefetch;
  plan.reshard_after_forward = settings.reshard_after_forward;
  plan.max_gathers_in_flight = settings.max_gathers_in_flight;
  const std::vector<std::int64_t> params = layer_params(profile);
  const std::int64_t gather_size = dtype_bytes(dtypes.gather);
  const auto add = [&plan](dag::CommGroup g) {
    plan.collectives.push_back(std::move(g));
    return static_cast<std::int32_t>(plan.collectives.size() - 1);
  };
  if (!settings.per_unit_gathers()) {
    const bool sharded = settings.strategy != ShardStrategy::kNone;
    for (const auto& group : replicated.groups) {
      dag::CommGroup g = group;
      if (sharded) {
        g.op = gradient_op(settings.gradient_reduction);
        g.replayed.reset();  // every collective of a sharded step is modelled
      }
      const std::int32_t trigger = *std::min_element(group.layers.begin(), group.layers.end());
      plan.gradients.push_back({add(std::move(g)), trigger, -1});
    }
    if (sharded) {
      for (const auto& group : replicated.groups) {
        dag::CommGroup g;
        g.layers = group.layers;
        g.op = dag::CommOp::kAllGather;
        for (auto l : group.layers) g.bytes += params[static_cast<std::size_t>(l)] * gather_size;
        plan.step_gathers.push_back({add(std::move(g))});
      }
    }
    return plan;
  }
  const bool hsdp = settings.strategy == ShardStrategy::kHsdp;
  const dag::CommScope scope = hsdp ? dag::CommScope::kShardGroup : dag::CommScope::kJob;
  const bool replicas = hsdp && workers / shards > 1;
  plan.units = make_units(profile, settings.units);
  for (auto& unit : plan.units) {
    dag::CommGroup g;
    g.op = dag::CommOp::kAllGather;
    g.scope = scope;
    for (std::int32_t l = unit.first; l <= unit.last; ++l) {
      g.layers.push_back(l);
      g.bytes += params[static_cast<std::size_t>(l)] * gather_size;
    }
    unit.gather = add(std::move(g));
  }
  for (auto it = plan.units.rbegin(); it != plan.units.rend(); ++it) {
    dag::CommGroup g;
    g.op = gradient_op(settings.gradient_reduction);
    g.scope = scope;
    for (std::int32_t l = it->first; l <= it->last; ++l) {
      g.layers.push_back(l);
      g.bytes += profile.layers[static_cast<std::size_t>(l)].grad_bytes;
    }
    dag::GradientCollective gc;
    gc.trigger_layer = it->first;
    if (replicas) {
      dag::CommGroup across;
      across.layers = g.layers;
      across.op = dag::CommOp::kAllReduce;
      across.scope = dag::CommScope::kReplicas;
      across.bytes = (g.bytes + shards - 1) / shards;  // one shard of the unit's gradients
      gc.collective = add(std::move(g));
      gc.then = add(std::move(across));
    } else {
      gc.collective = add(std::move(g));
    }
    plan.gradients.push_back(gc);
  }
  return plan;
}

}  // namespace ssgd::sim
