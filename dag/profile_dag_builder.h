#pragma once
// Builds the S-SGD DAG from a layer profile, for P workers and N iterations.
//
// Per worker r and iteration i, on r's resources (compute, io, h2d):
//   io(r,i) -> h2d(r,i) -> f(r,i,0) -> ... -> f(r,i,L-1)
//           -> b(r,i,L-1) -> ... -> b(r,i,0) -> u(r,i)
// and per communication group g of the plan, on the shared network resource:
//   b(r,i,min layer of g) for every r -> c(i,g)   (WFBP), or b(r,i,0) -> c(i,g) (BSP)
//   c(i,g-1) -> c(i,g)                            (in plan order, unless the plan is
//                                                  prioritized: then the network's
//                                                  priority order decides)
//   c(i,last) -> u(r,i) for every r               (the update needs every gradient)
//
// Update (DagShape::update_per_group): global, as above, or one update task
// per communication group, u(r,i,g) after c(i,g), taking the update time in
// proportion to the group's bytes; the next iteration's forward of layer l
// then waits only for the updates of l's groups, f(r,i+1,l) after u(r,i,g).
//
// I/O prefetch (DagShape::prefetch_depth = d). The step boundary s(r,i) is
// u(r,i) (global update) or b(r,i,0) (per-group update: the host has issued
// the whole step). With d = 0, io(r,i) waits for s(r,i-1): nothing is
// prefetched, and t_io' = t_io + t_h2d in the closed forms. With d >= 1 a
// loader keeps up to d batches ready: io(r,i) waits only for h2d(r,i-d), the
// batch whose slot it reuses (and, on the io resource, for io(r,i-1)), while
// h2d(r,i) waits for io(r,i) and s(r,i-1).
//
// With one worker there is no communication, unless the worker stands for
// many (DagShape::folded).

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dag/comm_plan.h"
#include "dag/task_graph.h"
#include "traces/layer_profile.h"

namespace ssgd::dag {

struct DagShape {
  std::int64_t workers = 1;
  std::int64_t iterations = 1;
  Duration io;      // per iteration and worker
  Duration h2d;
  Duration update;
  // One worker standing for many identical ones (a folded run): its
  // collectives are kept although it has no one to talk to.
  bool folded = false;
  bool update_per_group = false;   // one update per communication group, else one per iteration
  std::int64_t prefetch_depth = 0;  // batches the loader reads ahead (0: none)
};

// Tasks the DAG for `layers` layers under `shape` holds, leaving out the
// collectives: workers x iterations x (2 x layers + 2 + updates), with
// `updates` update tasks per worker and iteration (1 for a global update, the
// plan's group count for a per-group one). A double, so that shapes too
// large to build are still counted without overflow.
double profile_dag_task_count(std::size_t layers, const DagShape& shape, std::size_t updates = 1);

// The names of a profile's layers, in order: a graph's, for its messages.
std::vector<std::string> profile_layer_names(const trace::LayerProfile& profile);

// Every iteration of `builder` (a ProfileDagBuilder or a ShardedDagBuilder)
// in one graph, finalized.
template <class Builder>
TaskGraph build_every_iteration(Builder& builder, std::int64_t iterations) {
  TaskGraph g;
  g.reserve(builder.tasks_per_iteration() * static_cast<std::size_t>(iterations),
            builder.edges_per_iteration_hint() * static_cast<std::size_t>(iterations));
  g.set_layer_names(builder.layer_names());
  for (const Resource& r : builder.resources()) g.add_resource(r);
  for (std::int64_t i = 0; i < iterations; ++i) builder.add_iteration(g);
  g.finalize();
  return g;
}

// Throws std::invalid_argument on an empty profile, non-positive workers or
// iterations, a negative prefetch depth, or a plan naming a layer the
// profile does not have. The graph
// is returned finalized.
TaskGraph build_profile_dag(const trace::LayerProfile& profile, const DagShape& shape,
                            const CommPlan& plan);

// Tasks and edges of one or more iterations, numbered from `first` on: the
// unit a DAG built an iteration at a time is made of. Edges may come from
// tasks before `first` (an earlier iteration's).
struct TaskBatch {
  TaskId first = 0;
  std::vector<Task> tasks;
  std::vector<std::pair<TaskId, TaskId>> edges;
  TaskId add_task(const Task& task) {
    tasks.push_back(task);
    return first + static_cast<TaskId>(tasks.size() - 1);
  }
  void add_edge(TaskId from, TaskId to) { edges.emplace_back(from, to); }
};

// The builder behind build_profile_dag(), an iteration at a time. Task ids
// are iteration-major: iteration i holds ids [i x T, (i + 1) x T) with T =
// tasks_per_iteration(), its ranks' tasks in rank order, then its
// collectives; the same ids, edges (in the same order) and tasks as the
// whole graph. An edge reaches at most reach() iterations forward (the
// update to the next iteration, or an h2d to the io `prefetch_depth`
// iterations on), and only iterations before max(1, prefetch_depth) hold
// tasks with no predecessor. Only the tasks reaches_forward() says so have
// successors in later iterations.
class ProfileDagBuilder {
 public:
  // Checks its inputs as build_profile_dag() does.
  ProfileDagBuilder(const trace::LayerProfile& profile, const DagShape& shape,
                    const CommPlan& plan);
  ProfileDagBuilder(const ProfileDagBuilder&) = delete;
  ProfileDagBuilder& operator=(const ProfileDagBuilder&) = delete;

  [[nodiscard]] const std::vector<Resource>& resources() const { return resources_; }
  [[nodiscard]] std::size_t tasks_per_iteration() const { return tasks_per_iteration_; }
  // An iteration's first ranks() x tasks_per_rank() tasks are its ranks'
  // own, tasks_per_rank() each in rank order; its collectives follow.
  [[nodiscard]] std::int64_t ranks() const { return P_; }
  [[nodiscard]] std::size_t tasks_per_rank() const {
    return 2 * static_cast<std::size_t>(L_) + 2 + static_cast<std::size_t>(U_);
  }
  // About the edges an iteration has, to reserve room for them.
  [[nodiscard]] std::size_t edges_per_iteration_hint() const {
    return tasks_per_iteration_ + 3 * static_cast<std::size_t>(P_) * (G_ > 0 ? 1 : 0) *
                                      static_cast<std::size_t>(U_);
  }
  [[nodiscard]] std::int64_t iterations() const { return N_; }
  [[nodiscard]] std::int64_t iterations_built() const { return next_; }
  [[nodiscard]] std::int64_t reach() const { return std::max<std::int64_t>(1, depth_); }
  [[nodiscard]] std::vector<std::string> layer_names() const;
  // Whether a task of this DAG may have successors in a later iteration: the
  // step boundary (the update, or the backward of layer 0 with per-group
  // updates), the per-group updates, and with prefetching the h2d.
  [[nodiscard]] bool reaches_forward(const Task& task) const {
    return task.kind == TaskKind::kUpdate || (task.kind == TaskKind::kH2d && depth_ > 0) ||
           (per_group_ && task.kind == TaskKind::kBackward && task.layer == 0);
  }

  // Adds the next iteration's tasks and edges to `sink` (a TaskGraph, whose
  // resources are resources(), or a TaskBatch whose `first` is the next
  // iteration's first id). Throws std::logic_error past the last iteration.
  template <class Sink>
  void add_iteration(Sink& sink);

 private:
  const trace::LayerProfile& profile_;
  std::int32_t L_, P_, N_, G_, U_;
  std::int64_t depth_;
  bool per_group_;
  Duration io_, h2d_;
  std::vector<Duration> update_time_;
  const CommPlan& plan_;
  std::vector<Resource> resources_;
  ResourceId network_ = 0;
  std::size_t tasks_per_iteration_ = 0;
  std::vector<std::int32_t> last_layer_, trigger_layer_;
  std::vector<Duration> release_cost_;
  std::vector<std::vector<std::int32_t>> groups_of_layer_;
  std::vector<std::vector<TaskId>> prev_update_;
  std::vector<TaskId> prev_boundary_;
  std::vector<std::vector<TaskId>> h2d_of_;
  std::vector<TaskId> backward_;
  std::vector<std::vector<TaskId>> update_;
  std::int32_t next_ = 0;
};

}  // namespace ssgd::dag
