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
  // Task ids are 32-bit, and each task costs about 100 bytes with its edges
  // and schedule: refuse early, with the numbers, rather than exhaust memory.
  const double tasks = profile_dag_task_count(profile.layers.size(), shape);
  constexpr double kMaxTasks = 1e9;
  if (tasks > kMaxTasks) {
    throw std::invalid_argument(
        "the DAG would hold " + std::to_string(static_cast<long long>(tasks)) + " tasks (" +
        std::to_string(shape.workers) + " workers x " + std::to_string(shape.iterations) +
        " iterations x (2 x " + std::to_string(profile.layers.size()) +
        " layers + 3)), more than the limit of 1e9; use fewer iterations or workers");
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

double profile_dag_task_count(std::size_t layers, const DagShape& shape) {
  return static_cast<double>(shape.workers) * static_cast<double>(shape.iterations) *
         (2.0 * static_cast<double>(layers) + 3.0);
}

TaskGraph build_profile_dag(const trace::LayerProfile& profile, const DagShape& shape,
                            const CommPlan& plan) {
  check_inputs(profile, shape, plan);
  const auto L = static_cast<std::int32_t>(profile.layers.size());
  const auto P = static_cast<std::int32_t>(shape.workers);
  const auto N = static_cast<std::int32_t>(shape.iterations);
  const bool communicate = (P > 1 || shape.folded) && !plan.groups.empty();
  const auto G = communicate ? static_cast<std::int32_t>(plan.groups.size()) : 0;

  TaskGraph g;
  const auto tasks = static_cast<std::size_t>(profile_dag_task_count(profile.layers.size(), shape)) +
                     std::size_t(N) * G;
  g.reserve(tasks, tasks + 3 * std::size_t(P) * N * std::size_t(G > 0));

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
  const ResourceId network = g.add_resource({ResourceKind::kNetwork, kAllRanks});

  // For each group, the layer whose backward finishes last (backward runs L-1
  // down to 0, so the smallest index).
  std::vector<std::int32_t> trigger_layer(G);
  for (std::int32_t k = 0; k < G; ++k) {
    const auto& ls = plan.groups[k].layers;
    trigger_layer[k] = plan.wait_for_full_backward ? 0 : *std::min_element(ls.begin(), ls.end());
  }

  // Ids of the previous iteration's updates, and of this iteration's backward tasks.
  std::vector<TaskId> prev_update(P, kNoTask);
  std::vector<TaskId> backward(static_cast<std::size_t>(P) * L);
  for (std::int32_t i = 0; i < N; ++i) {
    std::vector<TaskId> update(P);
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
      if (prev_update[r] != kNoTask) g.add_edge(prev_update[r], io);
      TaskId prev = add(TaskKind::kH2d, res[r].copy, shape.h2d, -1);
      g.add_edge(io, prev);
      for (std::int32_t l = 0; l < L; ++l) {
        const TaskId f = add(TaskKind::kForward, res[r].compute, profile.layers[l].forward, l);
        g.add_edge(prev, f);
        prev = f;
      }
      for (std::int32_t l = L - 1; l >= 0; --l) {
        const TaskId b = add(TaskKind::kBackward, res[r].compute, profile.layers[l].backward, l);
        g.add_edge(prev, b);
        backward[static_cast<std::size_t>(r) * L + l] = b;
        prev = b;
      }
      update[r] = add(TaskKind::kUpdate, res[r].compute, shape.update, -1);
      g.add_edge(prev, update[r]);
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
      }
      if (prev_comm != kNoTask) g.add_edge(prev_comm, cid);
      prev_comm = cid;
    }
    if (prev_comm != kNoTask) {
      for (std::int32_t r = 0; r < P; ++r) g.add_edge(prev_comm, update[r]);
    }
    prev_update = update;
  }
  g.finalize();
  return g;
}

}  // namespace ssgd::dag
