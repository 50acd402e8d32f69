#include "dag/profile_dag_builder.h"

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <string>

namespace ssgd::dag {
namespace {

void check_inputs(const trace::LayerProfile& profile, const DagShape& shape, const CommPlan& plan) {
  if (profile.layers.empty()) throw std::invalid_argument("the layer profile has no layers");
  if (shape.workers < 1) throw std::invalid_argument("the number of workers must be at least 1");
  if (shape.iterations < 1) throw std::invalid_argument("the number of iterations must be at least 1");
  if (shape.prefetch_depth < 0) throw std::invalid_argument("the prefetch depth must be at least 0");
  // Task ids are 32-bit, and each task costs about 100 bytes with its edges
  // and schedule: refuse early, with the numbers, rather than exhaust memory.
  const std::size_t updates = shape.update_per_group && !plan.groups.empty() ? plan.groups.size() : 1;
  const double tasks = profile_dag_task_count(profile.layers.size(), shape, updates);
  constexpr double kMaxTasks = 1e9;
  if (tasks > kMaxTasks) {
    throw std::invalid_argument(
        "the DAG would hold " + std::to_string(static_cast<long long>(tasks)) + " tasks (" +
        std::to_string(shape.workers) + " workers x " + std::to_string(shape.iterations) +
        " iterations x (2 x " + std::to_string(profile.layers.size()) +
        " layers + 2 + " + std::to_string(updates) + ")), more than the limit of 1e9; use fewer iterations or workers");
  }
  const auto layers = static_cast<std::int32_t>(profile.layers.size());
  for (std::size_t g = 0; g < plan.groups.size(); ++g) {
    if (plan.groups[g].layers.empty()) {
      throw std::invalid_argument("communication group " + std::to_string(g) + " has no layers");
    }
    for (auto l : plan.groups[g].layers) {
      if (l < 0 || l >= layers) {
        throw std::invalid_argument("communication group " + std::to_string(g) + " names layer " +
                                    std::to_string(l) + " of " + std::to_string(layers));
      }
    }
  }
}

}  // namespace

double profile_dag_task_count(std::size_t layers, const DagShape& shape, std::size_t updates) {
  return static_cast<double>(shape.workers) * static_cast<double>(shape.iterations) *
         (2.0 * static_cast<double>(layers) + 2.0 + static_cast<double>(updates));
}

namespace {

__extension__ typedef __int128 Int128;  // GCC and Clang both provide it

// The update time split over the groups in proportion to their bytes (or
// evenly when no group has bytes, as with measured times only), by
// cumulative rounding so that the parts add up to `update` exactly.
std::vector<Duration> split_update(Duration update, const CommPlan& plan) {
  Int128 total = 0;
  for (const auto& g : plan.groups) total += g.bytes;
  const bool even = total == 0;
  if (even) total = static_cast<Int128>(plan.groups.size());
  std::vector<Duration> out;
  Int128 cumulative = 0;
  std::int64_t given = 0;
  for (const auto& g : plan.groups) {
    cumulative += even ? 1 : g.bytes;
    const auto upto =
        static_cast<std::int64_t>((static_cast<Int128>(update.ns()) * cumulative + total / 2) / total);
    out.push_back(Duration(upto - given));
    given = upto;
  }
  return out;
}

}  // namespace

ProfileDagBuilder::ProfileDagBuilder(const trace::LayerProfile& profile, const DagShape& shape,
                                     const CommPlan& plan)
    : profile_(profile), plan_(plan) {
  check_inputs(profile, shape, plan);
  L_ = static_cast<std::int32_t>(profile.layers.size());
  P_ = static_cast<std::int32_t>(shape.workers);
  N_ = static_cast<std::int32_t>(shape.iterations);
  const bool communicate = (P_ > 1 || shape.folded) && !plan.groups.empty();
  G_ = communicate ? static_cast<std::int32_t>(plan.groups.size()) : 0;
  // Update tasks per worker and iteration: one per group, or one.
  per_group_ = shape.update_per_group && !plan.groups.empty();
  U_ = per_group_ ? static_cast<std::int32_t>(plan.groups.size()) : 1;
  update_time_ = per_group_ ? split_update(shape.update, plan) : std::vector<Duration>{shape.update};
  depth_ = shape.prefetch_depth;
  io_ = shape.io;
  h2d_ = shape.h2d;
  tasks_per_iteration_ = static_cast<std::size_t>(P_) * tasks_per_rank() + static_cast<std::size_t>(G_);

  for (std::int32_t r = 0; r < P_; ++r) {
    resources_.push_back({ResourceKind::kCompute, r});
    resources_.push_back({ResourceKind::kIo, r});
    resources_.push_back({ResourceKind::kCopy, r});
  }
  Resource net{ResourceKind::kNetwork, kAllRanks};
  net.prioritized = plan.prioritized;
  net.credit_bytes = plan.credit_bytes;
  net.dispatch_overhead = plan.round_overhead;
  network_ = static_cast<ResourceId>(resources_.size());
  resources_.push_back(net);

  // For each group, its layer whose backward finishes last (backward runs
  // L-1 down to 0, so the smallest index), and the layer whose backward
  // releases its collective: that one, or layer 0 when the plan waits for
  // the whole backward pass.
  const auto plan_groups = static_cast<std::int32_t>(plan.groups.size());
  last_layer_.resize(plan_groups);
  trigger_layer_.resize(plan_groups);
  for (std::int32_t k = 0; k < plan_groups; ++k) {
    const auto& ls = plan.groups[k].layers;
    last_layer_[k] = *std::min_element(ls.begin(), ls.end());
    trigger_layer_[k] = plan.wait_for_full_backward ? 0 : last_layer_[k];
  }
  // The host time each layer's backward takes for the groups it releases.
  release_cost_.resize(static_cast<std::size_t>(L_));
  for (std::int32_t k = 0; k < plan_groups; ++k) {
    release_cost_[static_cast<std::size_t>(trigger_layer_[k])] += plan.group_overhead;
  }
  // Per-group update: the groups whose update each layer's next forward waits for.
  groups_of_layer_.resize(per_group_ ? L_ : 0);
  for (std::int32_t k = 0; per_group_ && k < plan_groups; ++k) {
    for (auto l : plan.groups[k].layers) groups_of_layer_[l].push_back(k);
  }
  // Per rank: the previous iteration's updates and step boundary, and the
  // h2d tasks of earlier iterations (for prefetching).
  prev_update_.assign(P_, std::vector<TaskId>(U_));
  prev_boundary_.assign(P_, kNoTask);
  h2d_of_.resize(depth_ > 0 ? P_ : 0);
  backward_.resize(static_cast<std::size_t>(P_) * L_);
  update_.assign(P_, std::vector<TaskId>(U_));
}

std::vector<std::string> profile_layer_names(const trace::LayerProfile& profile) {
  std::vector<std::string> names;
  names.reserve(profile.layers.size());
  for (const auto& row : profile.layers) names.push_back(row.name);
  return names;
}

std::vector<std::string> ProfileDagBuilder::layer_names() const {
  return profile_layer_names(profile_);
}

template <class Sink>
void ProfileDagBuilder::add_iteration(Sink& g) {
  if (next_ >= N_) throw std::logic_error("ProfileDagBuilder: every iteration is built");
  const std::int32_t i = next_++;
  const auto L = L_;
  const auto P = P_;
  const auto G = G_;
  const auto U = U_;
  const auto depth = depth_;
  const bool per_group = per_group_;
  const CommPlan& plan = plan_;
  const trace::LayerProfile& profile = profile_;
  for (std::int32_t r = 0; r < P; ++r) {
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
    const TaskId io = add(TaskKind::kIo, compute + 1, io_, -1);
    const TaskId h2d = add(TaskKind::kH2d, compute + 2, h2d_, -1);
    g.add_edge(io, h2d);
    if (depth == 0) {
      if (prev_boundary_[r] != kNoTask) g.add_edge(prev_boundary_[r], io);
    } else {
      if (i >= depth) g.add_edge(h2d_of_[r][static_cast<std::size_t>(i - depth)], io);
      if (prev_boundary_[r] != kNoTask) g.add_edge(prev_boundary_[r], h2d);
      h2d_of_[r].push_back(h2d);
    }
    TaskId prev = h2d;
    for (std::int32_t l = 0; l < L; ++l) {
      const TaskId f = add(TaskKind::kForward, compute, profile.layers[l].forward, l);
      g.add_edge(prev, f);
      if (per_group && i > 0) {
        for (auto k : groups_of_layer_[l]) g.add_edge(prev_update_[r][k], f);
      }
      prev = f;
    }
    for (std::int32_t l = L - 1; l >= 0; --l) {
      const TaskId b =
          add(TaskKind::kBackward, compute,
              profile.layers[l].backward + release_cost_[static_cast<std::size_t>(l)], l);
      g.add_edge(prev, b);
      backward_[static_cast<std::size_t>(r) * L + l] = b;
      prev = b;
    }
    if (per_group) {
      for (std::int32_t k = 0; k < U; ++k) {
        update_[r][k] = add(TaskKind::kUpdate, compute, update_time_[k], last_layer_[k]);
        // Without communication a group's update follows its gradients.
        if (G == 0) {
          g.add_edge(backward_[static_cast<std::size_t>(r) * L + trigger_layer_[k]], update_[r][k]);
        }
      }
      prev_boundary_[r] = prev;  // b(r,i,0)
    } else {
      update_[r][0] = add(TaskKind::kUpdate, compute, update_time_[0], -1);
      g.add_edge(prev, update_[r][0]);
      prev_boundary_[r] = update_[r][0];
    }
  }
  TaskId prev_comm = kNoTask;
  for (std::int32_t k = 0; k < G; ++k) {
    const CommGroup& group = plan.groups[k];
    Task c;
    c.kind = TaskKind::kComm;
    c.rank = kAllRanks;
    c.iteration = i;
    c.group = k;
    c.layer = group.layers.front();
    c.resource = network_;
    c.bytes = group.bytes;
    c.duration = group.replayed.value_or(Duration::zero());
    c.duration_modelled = !group.replayed.has_value();
    const TaskId cid = g.add_task(c);
    for (std::int32_t r = 0; r < P; ++r) {
      g.add_edge(backward_[static_cast<std::size_t>(r) * L + trigger_layer_[k]], cid);
      if (per_group) g.add_edge(cid, update_[r][k]);
    }
    if (prev_comm != kNoTask && !plan.prioritized) g.add_edge(prev_comm, cid);
    prev_comm = cid;
    if (!per_group && plan.prioritized) {
      for (std::int32_t r = 0; r < P; ++r) g.add_edge(cid, update_[r][0]);
    }
  }
  if (prev_comm != kNoTask && !per_group && !plan.prioritized) {
    for (std::int32_t r = 0; r < P; ++r) g.add_edge(prev_comm, update_[r][0]);
  }
  std::swap(prev_update_, update_);
}

template void ProfileDagBuilder::add_iteration<TaskGraph>(TaskGraph&);
template void ProfileDagBuilder::add_iteration<TaskBatch>(TaskBatch&);

TaskGraph build_profile_dag(const trace::LayerProfile& profile, const DagShape& shape,
                            const CommPlan& plan) {
  ProfileDagBuilder builder(profile, shape, plan);
  return build_every_iteration(builder, shape.iterations);
}

}  // namespace ssgd::dag
