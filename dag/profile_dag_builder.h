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

#include <cstdint>

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

// Throws std::invalid_argument on an empty profile, non-positive workers or
// iterations, a negative prefetch depth, or a plan naming a layer the
// profile does not have. The graph
// is returned finalized.
TaskGraph build_profile_dag(const trace::LayerProfile& profile, const DagShape& shape,
                            const CommPlan& plan);

}  // namespace ssgd::dag
