#pragma once
// A ProfileDagBuilder's iterations as the source of a windowed run
// (simulator/engine/windowed_schedule.h), for the tests of that run.
#include <functional>
#include <utility>

#include "dag/profile_dag_builder.h"
#include "simulator/engine/windowed_schedule.h"

namespace ssgd::sim::testing {

// Each iteration passed through `times` (when given), with the builder's
// layout hint unless `in_order`.
inline IterationSource source_of(dag::ProfileDagBuilder& builder,
                                 std::function<void(dag::TaskBatch&)> times = {},
                                 bool in_order = false) {
  IterationSource source;
  if (!in_order) {
    source.ranks = static_cast<std::size_t>(builder.ranks());
    source.tasks_per_rank = builder.tasks_per_rank();
  }
  source.resources = builder.resources();
  source.tasks_per_iteration = builder.tasks_per_iteration();
  source.iterations = builder.iterations();
  source.reach = builder.reach();
  source.build = [&builder, times = std::move(times)](dag::TaskBatch& batch) {
    builder.add_iteration(batch);
    if (times) times(batch);
  };
  source.reaches_forward = [&builder](const dag::Task& t) { return builder.reaches_forward(t); };
  return source;
}

}  // namespace ssgd::sim::testing
