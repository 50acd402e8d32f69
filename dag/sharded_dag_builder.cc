#include "dag/sharded_dag_builder.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ssgd::dag {
namespace {

[[noreturn]] void refuse(const std::string& what) { throw std::invalid_argument(what); }

void check_inputs(const trace::LayerProfile& profile, const DagShape& shape,
                  const ShardedPlan& plan) {
  if (profile.layers.empty()) refuse("the layer profile has no layers");
  if (shape.workers < 1) refuse("the number of workers must be at least 1");
  if (shape.iterations < 1) refuse("the number of iterations must be at least 1");
  if (shape.prefetch_depth < 0) refuse("the prefetch depth must be at least 0");
  if (shape.update_per_group) refuse("a sharded step has one update per iteration");
  if (plan.accumulation < 1) refuse("gradient accumulation needs at least 1 micro-batch");
  if (plan.forward_prefetch < 0) refuse("the forward prefetch must be at least 0");
  if (plan.max_gathers_in_flight < 0) refuse("the all-gathers in flight must be at least 0");
  const auto layers = static_cast<std::int32_t>(profile.layers.size());
  const auto collectives = static_cast<std::int32_t>(plan.collectives.size());
  const auto check_collective = [&](std::int32_t c, const char* what) {
    if (c < 0 || c >= collectives) {
      refuse(std::string(what) + " names collective " + std::to_string(c) + " of " +
             std::to_string(collectives));
    }
  };
  for (const auto& g : plan.gradients) {
    check_collective(g.collective, "a gradient collective");
    if (g.then >= 0) check_collective(g.then, "a gradient collective's follower");
    if (g.trigger_layer < 0 || g.trigger_layer >= layers) {
      refuse("a gradient collective is released by layer " + std::to_string(g.trigger_layer) +
             " of " + std::to_string(layers));
    }
  }
  for (const auto& s : plan.step_gathers) check_collective(s.collective, "a step gather");
  if (!plan.units.empty()) {
    std::int32_t next = 0;
    for (const auto& u : plan.units) {
      if (u.first != next || u.last < u.first || u.last >= layers) {
        refuse("sharding units must cover layers 0.." + std::to_string(layers - 1) +
               " in order; a unit spans " + std::to_string(u.first) + ".." +
               std::to_string(u.last));
      }
      check_collective(u.gather, "a unit's gather");
      next = u.last + 1;
    }
    if (next != layers) refuse("sharding units end at layer " + std::to_string(next - 1));
    const auto units = plan.units.size();
    if (plan.gradients.size() != units) {
      refuse("per-unit gathers need one gradient collective per unit");
    }
    for (std::size_t j = 0; j < units; ++j) {
      if (plan.gradients[j].trigger_layer != plan.units[units - 1 - j].first) {
        refuse("gradient collective " + std::to_string(j) + " is not released by its unit");
      }
    }
  }
  const double tasks =
      sharded_dag_task_count(profile.layers.size(), shape, plan.accumulation);
  constexpr double kMaxTasks = 1e9;
  if (tasks > kMaxTasks) {
    refuse("the DAG would hold " + std::to_string(static_cast<long long>(tasks)) + " tasks (" +
           std::to_string(shape.workers) + " workers x " + std::to_string(shape.iterations) +
           " iterations x (" + std::to_string(plan.accumulation) + " micro-batches x (2 x " +
           std::to_string(profile.layers.size()) +
           " layers + 2) + 1)), more than the limit of 1e9; use fewer iterations or workers");
  }
}

}  // namespace

double sharded_dag_task_count(std::size_t layers, const DagShape& shape,
                              std::int64_t accumulation) {
  return static_cast<double>(shape.workers) * static_cast<double>(shape.iterations) *
         (static_cast<double>(accumulation) * (2.0 * static_cast<double>(layers) + 2.0) + 1.0);
}

ShardedDagBuilder::ShardedDagBuilder(const trace::LayerProfile& profile, const DagShape& shape,
                                     const ShardedPlan& plan)
    : profile_(profile), plan_(plan) {
  check_inputs(profile, shape, plan);
  L_ = static_cast<std::int32_t>(profile.layers.size());
  P_ = static_cast<std::int32_t>(shape.workers);
  N_ = static_cast<std::int32_t>(shape.iterations);
  K_ = static_cast<std::int32_t>(plan.accumulation);
  U_ = static_cast<std::int32_t>(plan.units.size());
  depth_ = shape.prefetch_depth;
  reach_ = std::max<std::int64_t>(1, (depth_ + K_ - 1) / K_);
  communicate_ = P_ > 1 || shape.folded;
  io_time_ = shape.io;
  h2d_time_ = shape.h2d;
  update_time_ = shape.update;
  if (communicate_) {
    std::size_t thens = 0;
    for (const auto& g : plan.gradients) thens += g.then >= 0 ? 1 : 0;
    for (std::int32_t m = 0; m < K_; ++m) {
      collectives_ += static_cast<std::size_t>(U_);
      if (plan.reshard_after_forward && U_ > 1) collectives_ += static_cast<std::size_t>(U_ - 1);
      if (synced(m)) collectives_ += plan.gradients.size() + thens;
    }
    collectives_ += plan.step_gathers.size();
  }
  tasks_per_iteration_ = static_cast<std::size_t>(P_) * tasks_per_rank() + collectives_;
  for (std::int32_t r = 0; r < P_; ++r) {
    resources_.push_back({ResourceKind::kCompute, r});
    resources_.push_back({ResourceKind::kIo, r});
    resources_.push_back({ResourceKind::kCopy, r});
  }
  reduce_net_ = static_cast<ResourceId>(resources_.size());
  resources_.push_back({ResourceKind::kNetwork, kAllRanks});
  gather_net_ = reduce_net_;
  if (plan.separate_streams) {
    gather_net_ = static_cast<ResourceId>(resources_.size());
    resources_.push_back({ResourceKind::kNetwork, kAllRanks});
  }
  is_step_gather_.assign(plan.collectives.size(), false);
  for (const auto& s : plan.step_gathers) is_step_gather_[static_cast<std::size_t>(s.collective)] = true;
  const auto per_rank = static_cast<std::size_t>(K_) * static_cast<std::size_t>(L_);
  h2d_.resize(static_cast<std::size_t>(P_) * static_cast<std::size_t>(K_));
  fwd_.resize(static_cast<std::size_t>(P_) * per_rank);
  bwd_.resize(static_cast<std::size_t>(P_) * per_rank);
  update_.assign(static_cast<std::size_t>(P_), kNoTask);
  prev_update_.assign(static_cast<std::size_t>(P_), kNoTask);
  h2d_history_.assign(depth_ > 0 ? static_cast<std::size_t>(P_) : 0,
                      std::vector<TaskId>(static_cast<std::size_t>(depth_), kNoTask));
}

std::vector<std::string> ShardedDagBuilder::layer_names() const {
  return profile_layer_names(profile_);
}

bool ShardedDagBuilder::reaches_forward(const Task& task) const {
  return task.kind == TaskKind::kUpdate || (task.kind == TaskKind::kH2d && depth_ > 0) ||
         (task.kind == TaskKind::kComm && task.group >= 0 &&
          is_step_gather_[static_cast<std::size_t>(task.group)]);
}

template <class Sink>
void ShardedDagBuilder::add_iteration(Sink& g) {
  if (next_ >= N_) throw std::logic_error("ShardedDagBuilder: every iteration is built");
  const std::int32_t i = next_++;
  const auto L = static_cast<std::size_t>(L_);
  const auto K = static_cast<std::size_t>(K_);
  const auto at = [&](std::int32_t r, std::int32_t m, std::int32_t l) {
    return (static_cast<std::size_t>(r) * K + static_cast<std::size_t>(m)) * L +
           static_cast<std::size_t>(l);
  };
  // What a micro-batch starts after: the iteration before's update, or the
  // micro-batch before's last backward.
  const auto boundary = [&](std::int32_t r, std::int32_t m) {
    return m == 0 ? prev_update_[static_cast<std::size_t>(r)] : bwd_[at(r, m - 1, 0)];
  };
  for (std::int32_t r = 0; r < P_; ++r) {
    const auto compute = static_cast<ResourceId>(3 * r);
    Task t;
    t.rank = r;
    t.iteration = i;
    auto add = [&](TaskKind kind, ResourceId resource, Duration d, std::int32_t layer) {
      t.kind = kind;
      t.resource = resource;
      t.duration = d;
      t.layer = layer;
      return g.add_task(t);
    };
    TaskId prev = kNoTask;
    for (std::int32_t m = 0; m < K_; ++m) {
      const std::int64_t j = static_cast<std::int64_t>(i) * K_ + m;  // micro-batch, over the run
      const TaskId io = add(TaskKind::kIo, compute + 1, io_time_, -1);
      const TaskId h2d = add(TaskKind::kH2d, compute + 2, h2d_time_, -1);
      g.add_edge(io, h2d);
      const TaskId start = boundary(r, m);
      if (depth_ == 0) {
        if (start != kNoTask) g.add_edge(start, io);
      } else {
        auto& ring = h2d_history_[static_cast<std::size_t>(r)];
        TaskId& slot = ring[static_cast<std::size_t>(j % depth_)];
        if (j >= depth_) g.add_edge(slot, io);  // h2d of micro-batch j - depth
        if (start != kNoTask) g.add_edge(start, h2d);
        slot = h2d;
      }
      h2d_[static_cast<std::size_t>(r) * K + static_cast<std::size_t>(m)] = h2d;
      prev = h2d;
      for (std::int32_t l = 0; l < L_; ++l) {
        const TaskId f = add(TaskKind::kForward, compute, profile_.layers[l].forward, l);
        g.add_edge(prev, f);
        if (m == 0 && l == 0 && prev_step_gather_ != kNoTask) g.add_edge(prev_step_gather_, f);
        fwd_[at(r, m, l)] = f;
        prev = f;
      }
      for (std::int32_t l = L_ - 1; l >= 0; --l) {
        const TaskId b = add(TaskKind::kBackward, compute, profile_.layers[l].backward, l);
        g.add_edge(prev, b);
        bwd_[at(r, m, l)] = b;
        prev = b;
      }
    }
    const TaskId u = add(TaskKind::kUpdate, compute, update_time_, -1);
    g.add_edge(prev, u);
    update_[static_cast<std::size_t>(r)] = u;
  }

  if (communicate_) {
    const ShardedPlan& plan = plan_;
    TaskId one_stream = kNoTask, gathers = kNoTask, reductions = kNoTask;
    auto add_comm = [&](std::int32_t c, bool gather) {
      const CommGroup& group = plan.collectives[static_cast<std::size_t>(c)];
      Task ct;
      ct.kind = TaskKind::kComm;
      ct.rank = kAllRanks;
      ct.iteration = i;
      ct.group = c;
      ct.layer = group.layers.empty() ? -1 : group.layers.front();
      ct.resource = gather ? gather_net_ : reduce_net_;
      ct.bytes = group.bytes;
      ct.duration = group.replayed.value_or(Duration::zero());
      ct.duration_modelled = !group.replayed.has_value();
      const TaskId id = g.add_task(ct);
      TaskId& chain = !plan.separate_streams ? one_stream : gather ? gathers : reductions;
      if (chain != kNoTask) g.add_edge(chain, id);
      chain = id;
      return id;
    };
    // Every rank's task `of(r)` (none: kNoTask) before `to`.
    auto after_ranks = [&](auto of, TaskId to) {
      for (std::int32_t r = 0; r < P_; ++r) {
        const TaskId from = of(r);
        if (from != kNoTask) g.add_edge(from, to);
      }
    };
    auto before_ranks = [&](TaskId from, auto of) {
      for (std::int32_t r = 0; r < P_; ++r) g.add_edge(from, of(r));
    };
    TaskId last_gradient = kNoTask;
    auto gradient = [&](std::int32_t m, std::size_t k) {
      const GradientCollective& gc = plan.gradients[k];
      const std::int32_t trigger = plan.wait_for_full_backward ? 0 : gc.trigger_layer;
      const TaskId id = add_comm(gc.collective, false);
      after_ranks([&](std::int32_t r) { return bwd_[at(r, m, trigger)]; }, id);
      last_gradient = id;
      if (gc.then >= 0) {
        last_gradient = add_comm(gc.then, false);  // after `id` on its stream
      }
    };
    const auto& units = plan.units;
    for (std::int32_t m = 0; m < K_; ++m) {
      if (U_ == 0) {
        if (synced(m)) {
          for (std::size_t k = 0; k < plan.gradients.size(); ++k) gradient(m, k);
        }
        continue;
      }
      const std::int64_t d = plan.forward_prefetch;
      const std::int64_t limit = plan.max_gathers_in_flight;
      for (std::int32_t u = 0; u < U_; ++u) {
        const TaskId id = add_comm(units[static_cast<std::size_t>(u)].gather, true);
        if (d == 0) {
          after_ranks(
              [&](std::int32_t r) {
                return u == 0 ? h2d_[static_cast<std::size_t>(r) * K + static_cast<std::size_t>(m)]
                              : fwd_[at(r, m, units[static_cast<std::size_t>(u - 1)].last)];
              },
              id);
        } else if (u - d <= 0) {
          after_ranks([&](std::int32_t r) { return boundary(r, m); }, id);
        } else {
          const auto& before = units[static_cast<std::size_t>(u - d - 1)];
          after_ranks([&](std::int32_t r) { return fwd_[at(r, m, before.last)]; }, id);
        }
        if (limit > 0 && plan.reshard_after_forward && u - limit >= 0) {
          const auto& freed = units[static_cast<std::size_t>(u - limit)];
          after_ranks([&](std::int32_t r) { return fwd_[at(r, m, freed.last)]; }, id);
        }
        const std::int32_t first = units[static_cast<std::size_t>(u)].first;
        before_ranks(id, [&](std::int32_t r) { return fwd_[at(r, m, first)]; });
      }
      // Backward, from the last unit: the gather of the unit below and this
      // unit's gradient collective, in the order the prefetch issues them.
      for (std::int32_t u = U_ - 1; u >= 0; --u) {
        const auto& unit = units[static_cast<std::size_t>(u)];
        const bool gather_below = plan.reshard_after_forward && u >= 1;
        auto gather = [&] {
          const auto& below = units[static_cast<std::size_t>(u - 1)];
          const TaskId id = add_comm(below.gather, true);
          if (plan.backward_prefetch == BackwardPrefetch::kPre) {
            // When this unit's backward starts: after the task before it.
            after_ranks(
                [&](std::int32_t r) {
                  return u == U_ - 1 ? fwd_[at(r, m, L_ - 1)]
                                     : bwd_[at(r, m, units[static_cast<std::size_t>(u + 1)].first)];
                },
                id);
          } else {
            after_ranks([&](std::int32_t r) { return bwd_[at(r, m, unit.first)]; }, id);
          }
          before_ranks(id, [&](std::int32_t r) { return bwd_[at(r, m, below.last)]; });
        };
        if (gather_below && plan.backward_prefetch != BackwardPrefetch::kNone) gather();
        if (synced(m)) gradient(m, static_cast<std::size_t>(U_ - 1 - u));
        if (gather_below && plan.backward_prefetch == BackwardPrefetch::kNone) gather();
      }
    }
    if (last_gradient != kNoTask) {
      before_ranks(last_gradient, [&](std::int32_t r) { return update_[static_cast<std::size_t>(r)]; });
    }
    TaskId last_step_gather = kNoTask;
    for (std::size_t s = 0; s < plan.step_gathers.size(); ++s) {
      const TaskId id = add_comm(plan.step_gathers[s].collective, true);
      if (s == 0) after_ranks([&](std::int32_t r) { return update_[static_cast<std::size_t>(r)]; }, id);
      last_step_gather = id;
    }
    prev_step_gather_ = last_step_gather;
  }
  std::swap(prev_update_, update_);
}

template void ShardedDagBuilder::add_iteration<TaskGraph>(TaskGraph&);
template void ShardedDagBuilder::add_iteration<TaskBatch>(TaskBatch&);

TaskGraph build_sharded_dag(const trace::LayerProfile& profile, const DagShape& shape,
                            const ShardedPlan& plan) {
  ShardedDagBuilder builder(profile, shape, plan);
  return build_every_iteration(builder, shape.iterations);
}

}  // namespace ssgd::dag
