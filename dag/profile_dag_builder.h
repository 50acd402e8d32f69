#pragma once
// Builds the S-SGD DAG from a layer profile, for P workers and N iterations.
//
// Per worker r and iteration i, on r's resources (compute, io, h2d):
//   u(r,i-1) -> io(r,i) -> h2d(r,i) -> f(r,i,0) -> ... -> f(r,i,L-1)
//            -> b(r,i,L-1) -> ... -> b(r,i,0) -> u(r,i)
// and per communication group g of the plan, on the shared network resource:
//   b(r,i,min layer of g) for every r -> c(i,g)   (WFBP), or b(r,i,0) -> c(i,g) (BSP)
//   c(i,g-1) -> c(i,g)                            (one collective at a time, plan order)
//   c(i,last) -> u(r,i) for every r               (the update needs every gradient)
// I/O is not prefetched: io(r,i) waits for u(r,i-1), so t_io' = t_io + t_h2d
// in the closed forms. With one worker there is no communication, unless the
// worker stands for many (DagShape::folded).

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
};

// Tasks the DAG for `layers` layers under `shape` holds, leaving out the few
// collectives: workers x iterations x (2 x layers + 3). A double, so that
// shapes too large to build are still counted without overflow.
double profile_dag_task_count(std::size_t layers, const DagShape& shape);

// Throws std::invalid_argument on an empty profile, non-positive workers or
// iterations, or a plan naming a layer the profile does not have. The graph
// is returned finalized.
TaskGraph build_profile_dag(const trace::LayerProfile& profile, const DagShape& shape,
                            const CommPlan& plan);

}  // namespace ssgd::dag
