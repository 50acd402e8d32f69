#pragma once
// One training job made ready to run on the engine: its S-SGD DAG with the
// collectives' times from its communication model (built whole, or given as
// the source of its iterations for a run that builds them as it reaches
// them), or an execution graph's own tasks (replay_stages::build_graph), the
// executor that runs those collectives as flows under the flow model, and
// the iteration ends read off a finished schedule. replay(), replay_graph()
// and the shared-fabric run (simulator/replay/shared_fabric.h) all run their
// jobs from here.
//
// Rank folding: when every rank runs the same tasks with the same times (no
// per-rank perturbation), one rank stands for all P. The collectives keep
// the costs of P ranks, so every time the run reports is that of the full
// DAG, for a P-th of the tasks. A timeline needs every rank, so it is
// never folded.
//
// Folding by class: ranks made to differ by perturb.stragglers or
// perturb.imbalance fall into classes of equal compute factor
// (rank_classes(), compute_perturbation.h); jitter keeps every rank apart,
// unless perturb.jitter_draw is class (the class's ranks share their draws,
// ClassJitterTable in jitter.h);
// with folding allowed, one rank stands for each class, and the breakdown
// weighs it by the class's size. A straggler among 131,072 ranks costs two
// ranks. Every time the run reports is the unfolded DAG's, to the
// nanosecond: ranks of a class finish each task together, and they meet
// only at the collectives, which are shared tasks.
//
// Perturbations (simulator/perturb/): the compute factors that keep ranks
// alike are applied to the profile before the DAG and the closed-form times
// are made from it; per-rank factors and jitter then scale each rank's
// forward and backward tasks in the built graph.

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "dag/comm_plan.h"
#include "dag/execution_dag.h"
#include "dag/task_graph.h"
#include "dag/time_breakdown.h"
#include "simulator/engine/schedule.h"
#include "simulator/engine/windowed_schedule.h"
#include "simulator/network/comm_model.h"
#include "simulator/replay/closed_form.h"
#include "simulator/scenario/scenario.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {

struct JobGraph {
  // The whole graph, or (built windowed) the source of its iterations for
  // run_windowed() (simulator/engine/windowed_schedule.h).
  std::shared_ptr<dag::TaskGraph> graph;
  std::shared_ptr<IterationSource> source;
  std::size_t tasks = 0;
  std::size_t edges = 0;  // windowed: counted by the run
  std::int64_t updates = 1;  // update tasks a rank has each iteration
  LayerTimes times;            // per layer, as the closed forms use them
  std::int64_t workers = 1;    // ranks the job has
  std::int64_t ranks_built = 1;  // ranks in the graph: 1 when folded, the classes when
                                 // folded by class, else workers
  bool ranks_differ = false;   // a per-rank perturbation changed some ranks' times
  // Folded by class: the ranks each built rank stands for (sums to workers);
  // empty otherwise.
  std::vector<std::int64_t> rank_weight;
  double build_seconds = 0;
  // Sharded data parallelism or gradient accumulation
  // (dag/sharded_dag_builder.h, simulator/sharding/): the collectives a step
  // issues, a collective task's `group` indexing them; the shard group's
  // communicator (HSDP; else the job's); the ranks a shard spans; and the
  // closed form where the step has one. Empty and false for the replicated
  // DAG, whose groups are the comm plan's all-reduces.
  bool sharded = false;
  std::vector<dag::CommGroup> collectives;
  std::shared_ptr<const CommModel> shard_comm;
  // HSDP's all-reduces across the groups: one rail's all-reduce of R ranks
  // on a platform of its own (its time alone, NCCL's choice), and what the
  // G rings put on each of the job's links per byte of shard (the
  // analytical model's link bytes; a model that runs calls on the job's
  // links runs the G rails there as flows, sharded_call).
  std::shared_ptr<const CommModel> replica_comm;
  std::shared_ptr<const std::vector<double>> replica_link_share;
  // The least time a byte of shard takes across the groups on the job's
  // links: the busiest link under the G rings' traffic (a node's PCIe or its
  // link between sockets, where the rails share one NIC), which one rail's
  // platform has no part of. sharded_time takes the larger.
  double replica_ns_per_byte = 0;
  std::int64_t shard_ranks = 1;
  std::int64_t shard_units = 0;  // units gathered (zero3, hsdp), else 0
  // The shard groups, R = P / G: HSDP's replicas; 1 when a shard spans the job.
  [[nodiscard]] std::int64_t shard_groups() const { return workers / shard_ranks; }
  std::optional<Duration> sharded_closed_form;
  // An execution graph's job (replay_stages::build_graph): the DAG whose
  // task graph `graph` is, with each collective task's call (by its group);
  // null for an S-SGD job.
  std::shared_ptr<const dag::ExecutionDag> execution;
};

// The simulator's operation for a DAG collective.
CollectiveOp collective_op(dag::CommOp op);

// What a sharded job's collective of group `c` runs: its operation over its
// scope's communicator, on the bytes that put its traffic on the links.
// HSDP's all-reduce across the R = P / G shard groups is G all-reduces of
// one shard (S / G bytes) at once, each over R ranks on R nodes, one on each
// of a node's rails. Its time alone is one of them on a platform of one GPU
// a node whose NIC has the node's NIC bandwidth over its GPUs (partial_node.h,
// rail_node); under the analytical model its link traffic on the job's links
// is `link_share` x bytes, and under a model that runs calls on the job's
// links sharded_call runs all G there at once (CollectiveCall::rails: every
// rail's ring, NCCL's pacing), so that the rails share a node's NICs as
// they do, and a shard group's collective in every group at once, each on
// its own nodes (CollectiveCall::groups; docs/sharding.md). A group reduced
// to its owners
// (dag::CommOp::kReduce) is `calls` reduces of bytes / calls, one to each
// rank of its scope, one after the other.
struct ShardedTarget {
  const CommModel* comm = nullptr;  // the job's, the shard group's or the rings across groups
  CollectiveOp op = CollectiveOp::kAllReduce;
  double bytes = 0;                 // what the call carries (HSDP across groups: see above)
  std::int64_t ranks = 1;           // the ranks one such collective spans, for its bus factor
  std::int64_t calls = 1;           // how many such collectives the group is
  // Non-null: the traffic on each of the job's links per byte, in place of
  // comm's own (comm is not on the job's platform).
  const std::vector<double>* link_share = nullptr;
};
ShardedTarget sharded_target(const JobGraph& job, const CommModel& comm, std::int32_t c);
CollectiveCall sharded_call(const JobGraph& job, const CommModel& comm, std::int32_t c);
Duration sharded_time(const JobGraph& job, const CommModel& comm, std::int32_t c);

// The job's communication plan under its policy, with the all-reduce times
// of `comm` (which mgwfbp's merge rule needs).
dag::CommPlan job_comm_plan(const trace::LayerProfile& profile, const Scenario& scenario,
                            const CommModel& comm);

// Builds the DAG of `profile` under `scenario`'s policy, iterations,
// workload times and perturbations, for the ranks of `comm`. Throws
// std::invalid_argument when the run would not fit in memory or would
// overflow the simulated clock, and for a perturbation that does not fit the
// job (a layer pattern matching no layer, a straggler rank it does not have).
// `allow_class_folding`: ranks that differ may fold by class (above); only
// where nothing reads a rank's own schedule. `windowed`: the graph is not
// built but given as the source of its iterations, each built as the run
// reaches it, with the same tasks, times and draws.
JobGraph build_job_graph(const trace::LayerProfile& profile, const Scenario& scenario,
                         const CommModel& comm, bool allow_folding,
                         bool allow_class_folding = false, bool windowed = false);

// Runs a job's modelled collectives on a network model's network (a model
// whose collectives share links: NetworkModel::open): the S-SGD DAG's
// gradient all-reduces of each task's bytes, or, with `call_of`, each task's
// own call (a sharded job's or an execution graph's, job_executor()).
class CollectiveExecutor : public TaskExecutor {
 public:
  using CallOf = std::function<CollectiveCall(const dag::Task&)>;
  CollectiveExecutor(NetworkRun& network, const CommModel& comm, CallOf call_of = {})
      : network_(network), comm_(comm), call_of_(std::move(call_of)) {}
  [[nodiscard]] bool handles(const dag::Task& task) const override;
  void start(dag::TaskId id, const dag::Task& task, std::function<void()> finished) override;
  // Alone on the engine: the network may stand for it by a cheaper run
  // (NetworkRun::run_alone).
  void start_alone(dag::TaskId id, const dag::Task& task, std::function<void()> finished) override;

 private:
  [[nodiscard]] CollectiveCall call_of(const dag::Task& task) const;

  NetworkRun& network_;
  const CommModel& comm_;
  CallOf call_of_;
};

// The executor of `job`'s collectives on `network`: each a gradient
// all-reduce, a sharded job's own call (sharded_call()), or an execution
// graph's call as recorded (its op and bytes). `job` and `comm` must outlive
// it.
std::unique_ptr<CollectiveExecutor> job_executor(NetworkRun& network, const JobGraph& job,
                                                 const CommModel& comm);

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
// there are more), mean over the ranks built (each counted `rank_weight`
// times when given).
struct IterationMeasures {
  std::vector<Duration> times;
  Duration steady;
  dag::TimeBreakdown breakdown;
};
IterationMeasures iteration_measures(const dag::TaskGraph& graph, const Schedule& schedule,
                                     std::int64_t iterations, std::int64_t ranks_built,
                                     std::span<const std::int64_t> rank_weight = {});
// The same from each iteration's end and the breakdown, measured as the run
// went (IterationObserver).
IterationMeasures iteration_measures(const std::vector<Time>& iteration_end,
                                     const dag::TimeBreakdown& breakdown);

}  // namespace ssgd::sim
