#pragma once
// One training job made ready to run on the engine: its S-SGD DAG with the
// collectives' times from its communication model, the executor that runs
// those collectives as flows under the flow model, and the iteration ends
// read off a finished schedule. replay() and the shared-fabric run
// (simulator/replay/shared_fabric.h) both build their jobs here.
//
// Rank folding: when every rank runs the same tasks with the same times (no
// per-rank perturbation), one rank stands for all P. The collectives keep
// the costs of P ranks, so every time the run reports is that of the full
// DAG, for a P-th of the tasks. A timeline needs every rank, so it is
// never folded; nor are ranks made to differ by perturb.stragglers,
// perturb.imbalance or perturb.jitter.
//
// Perturbations (simulator/perturb/): the compute factors that keep ranks
// alike are applied to the profile before the DAG and the closed-form times
// are made from it; per-rank factors and jitter then scale each rank's
// forward and backward tasks in the built graph.

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "dag/comm_plan.h"
#include "dag/task_graph.h"
#include "dag/time_breakdown.h"
#include "simulator/engine/schedule.h"
#include "simulator/network/comm_model.h"
#include "simulator/replay/closed_form.h"
#include "simulator/scenario/scenario.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {

struct JobGraph {
  std::shared_ptr<dag::TaskGraph> graph;
  LayerTimes times;            // per layer, as the closed forms use them
  std::int64_t workers = 1;    // ranks the job has
  std::int64_t ranks_built = 1;  // ranks in the graph: 1 when folded, else workers
  bool ranks_differ = false;   // a per-rank perturbation changed some ranks' times
  double build_seconds = 0;
};

// The job's communication plan under its policy, with the all-reduce times
// of `comm` (which mgwfbp's merge rule needs).
dag::CommPlan job_comm_plan(const trace::LayerProfile& profile, const Scenario& scenario,
                            const CommModel& comm);

// Builds the DAG of `profile` under `scenario`'s policy, iterations,
// workload times and perturbations, for the ranks of `comm`. Throws
// std::invalid_argument when the run would not fit in memory or would
// overflow the simulated clock, and for a perturbation that does not fit the
// job (a layer pattern matching no layer, a straggler rank it does not have).
JobGraph build_job_graph(const trace::LayerProfile& profile, const Scenario& scenario,
                         const CommModel& comm, bool allow_folding);

// Runs a job's modelled collectives on the flow-level network: the S-SGD
// DAG's gradient all-reduces, or, with `op_of`, each task's own operation
// (an execution graph's, simulator/replay/graph_replay.h).
class FlowCommExecutor : public TaskExecutor {
 public:
  using OpOf = std::function<CollectiveOp(const dag::Task&)>;
  FlowCommExecutor(CollectiveRunner& runner, const CommModel& comm, OpOf op_of = {})
      : runner_(runner), comm_(comm), op_of_(std::move(op_of)) {}
  [[nodiscard]] bool handles(const dag::Task& task) const override;
  void start(dag::TaskId id, const dag::Task& task, std::function<void()> finished) override;

 private:
  CollectiveRunner& runner_;
  const CommModel& comm_;
  OpOf op_of_;
};

struct IterationEnds {
  std::vector<Time> end;                       // per iteration: its last update, over all ranks
  std::vector<std::vector<Time>> update_end;   // [iteration][rank built]: its last update
};
IterationEnds iteration_ends(const dag::TaskGraph& graph, const Schedule& schedule,
                             std::int64_t iterations, std::int64_t ranks_built);

// The steady-state iteration time: the mean over iterations after the first
// (which nothing overlaps), or the only one.
Duration steady_iteration_time(const std::vector<Time>& iteration_end);

// What replay() measures of a run's iterations: each iteration's time (its
// last update minus the previous iteration's), the steady iteration time,
// and the breakdown over the steady iterations (the first left out when
// there are more), mean over the ranks built.
struct IterationMeasures {
  std::vector<Duration> times;
  Duration steady;
  dag::TimeBreakdown breakdown;
};
IterationMeasures iteration_measures(const dag::TaskGraph& graph, const Schedule& schedule,
                                     std::int64_t iterations, std::int64_t ranks_built);

}  // namespace ssgd::sim
