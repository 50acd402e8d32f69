#include "dag/profile_dag_builder.h"

#include <algorithm>
#include <stdexcept>
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

TaskGraph build_profile_dag(const trace::LayerProfile& profile, const DagShape& shape,
                            const CommPlan& plan) {
  check_inputs(profile, shape, plan);
  const auto L = static_cast<std::int32_t>(profile.layers.size());
  const auto P = static_cast<std::int32_t>(shape.workers);
  const auto N = static_cast<std::int32_t>(shape.iterations);
  const bool communicate = (P > 1 || shape.folded) && !plan.groups.empty();
  const auto G = communicate ? static_cast<std::int32_t>(plan.groups.size()) : 0;
  // Update tasks per worker and iteration: one per group, or one.
  const bool per_group = shape.update_per_group && !plan.groups.empty();
  const auto U = per_group ? static_cast<std::int32_t>(plan.groups.size()) : 1;
  const std::vector<Duration> update_time =
      per_group ? split_update(shape.update, plan) : std::vector<Duration>{shape.update};
  const auto depth = shape.prefetch_depth;

  TaskGraph g;
  const auto tasks =
      static_cast<std::size_t>(profile_dag_task_count(profile.layers.size(), shape,
                                                      static_cast<std::size_t>(U))) +
      std::size_t(N) * G;
  g.reserve(tasks, tasks + 3 * std::size_t(P) * N * std::size_t(G > 0) * std::size_t(U));

  std::vector<std::string> names;
  names.reserve(profile.layers.size());
  for (const auto& row : profile.layers) names.push_back(row.name);
  g.set_layer_names(std::move(names));

  struct RankResources {
    ResourceId compute, io, copy;
  };
  std::vector<RankResources> res(P);
  for (std::int32_t r = 0; r < P; ++r) {
    res[r] = {g.add_resource({ResourceKind::kCompute, r}), g.add_resource({ResourceKind::kIo, r}),
              g.add_resource({ResourceKind::kCopy, r})};
  }
  Resource net{ResourceKind::kNetwork, kAllRanks};
  net.prioritized = plan.prioritized;
  net.credit_bytes = plan.credit_bytes;
  net.dispatch_overhead = plan.round_overhead;
  const ResourceId network = g.add_resource(net);

  // For each group, its layer whose backward finishes last (backward runs
  // L-1 down to 0, so the smallest index), and the layer whose backward
  // releases its collective: that one, or layer 0 when the plan waits for
  // the whole backward pass.
  const auto plan_groups = static_cast<std::int32_t>(plan.groups.size());
  std::vector<std::int32_t> last_layer(plan_groups);
  std::vector<std::int32_t> trigger_layer(plan_groups);
  for (std::int32_t k = 0; k < plan_groups; ++k) {
    const auto& ls = plan.groups[k].layers;
    last_layer[k] = *std::min_element(ls.begin(), ls.end());
    trigger_layer[k] = plan.wait_for_full_backward ? 0 : last_layer[k];
  }
  // The host time each layer's backward takes for the groups it releases.
  std::vector<Duration> release_cost(static_cast<std::size_t>(L));
  for (std::int32_t k = 0; k < plan_groups; ++k) {
    release_cost[static_cast<std::size_t>(trigger_layer[k])] += plan.group_overhead;
  }
  // Per-group update: the groups whose update each layer's next forward waits for.
  std::vector<std::vector<std::int32_t>> groups_of_layer(per_group ? L : 0);
  for (std::int32_t k = 0; per_group && k < plan_groups; ++k) {
    for (auto l : plan.groups[k].layers) groups_of_layer[l].push_back(k);
  }

  // Per rank: the previous iteration's updates and step boundary, and the
  // h2d tasks of earlier iterations (for prefetching).
  std::vector<std::vector<TaskId>> prev_update(P);
  std::vector<TaskId> prev_boundary(P, kNoTask);
  std::vector<std::vector<TaskId>> h2d_of(P);
  std::vector<TaskId> backward(static_cast<std::size_t>(P) * L);
  std::vector<std::vector<TaskId>> update(P, std::vector<TaskId>(U));
  for (std::int32_t i = 0; i < N; ++i) {
    for (std::int32_t r = 0; r < P; ++r) {
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
      const TaskId io = add(TaskKind::kIo, res[r].io, shape.io, -1);
      const TaskId h2d = add(TaskKind::kH2d, res[r].copy, shape.h2d, -1);
      g.add_edge(io, h2d);
      if (depth == 0) {
        if (prev_boundary[r] != kNoTask) g.add_edge(prev_boundary[r], io);
      } else {
        if (i >= depth) g.add_edge(h2d_of[r][static_cast<std::size_t>(i - depth)], io);
        if (prev_boundary[r] != kNoTask) g.add_edge(prev_boundary[r], h2d);
        h2d_of[r].push_back(h2d);
      }
      TaskId prev = h2d;
      for (std::int32_t l = 0; l < L; ++l) {
        const TaskId f = add(TaskKind::kForward, res[r].compute, profile.layers[l].forward, l);
        g.add_edge(prev, f);
        if (per_group && i > 0) {
          for (auto k : groups_of_layer[l]) g.add_edge(prev_update[r][k], f);
        }
        prev = f;
      }
      for (std::int32_t l = L - 1; l >= 0; --l) {
        const TaskId b = add(TaskKind::kBackward, res[r].compute,
                             profile.layers[l].backward + release_cost[static_cast<std::size_t>(l)], l);
        g.add_edge(prev, b);
        backward[static_cast<std::size_t>(r) * L + l] = b;
        prev = b;
      }
      if (per_group) {
        for (std::int32_t k = 0; k < U; ++k) {
          update[r][k] = add(TaskKind::kUpdate, res[r].compute, update_time[k], last_layer[k]);
          // Without communication a group's update follows its gradients.
          if (G == 0) {
            g.add_edge(backward[static_cast<std::size_t>(r) * L + trigger_layer[k]], update[r][k]);
          }
        }
        prev_boundary[r] = prev;  // b(r,i,0)
      } else {
        update[r][0] = add(TaskKind::kUpdate, res[r].compute, update_time[0], -1);
        g.add_edge(prev, update[r][0]);
        prev_boundary[r] = update[r][0];
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
      c.resource = network;
      c.bytes = group.bytes;
      c.duration = group.replayed.value_or(Duration::zero());
      c.duration_modelled = !group.replayed.has_value();
      const TaskId cid = g.add_task(c);
      for (std::int32_t r = 0; r < P; ++r) {
        g.add_edge(backward[static_cast<std::size_t>(r) * L + trigger_layer[k]], cid);
        if (per_group) g.add_edge(cid, update[r][k]);
      }
      if (prev_comm != kNoTask && !plan.prioritized) g.add_edge(prev_comm, cid);
      prev_comm = cid;
      if (!per_group && plan.prioritized) {
        for (std::int32_t r = 0; r < P; ++r) g.add_edge(cid, update[r][0]);
      }
    }
    if (prev_comm != kNoTask && !per_group && !plan.prioritized) {
      for (std::int32_t r = 0; r < P; ++r) g.add_edge(prev_comm, update[r][0]);
    }
    prev_update = update;
  }
  g.finalize();
  return g;
}

}  // namespace ssgd::dag
