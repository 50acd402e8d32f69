#include "simulator/replay/job_graph.h"


#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"
#include "common/logging.h"
#include "dag/profile_dag_builder.h"
#include "dag/sharded_dag_builder.h"
#include "simulator/perturb/compute_perturbation.h"
#include "simulator/perturb/jitter.h"
#include "simulator/platform/partial_node.h"
#include "simulator/policy/overlap_policy.h"
#include "simulator/scenario/scenario_network.h"
#include "simulator/sharding/shard_plan.h"
#include "traces/proto/trace_events.pb.h"
#include "traces/trace_collectives.h"

namespace ssgd::sim {
namespace {

// Refuses, with the numbers, runs whose simulated time would overflow int64
// nanoseconds. (Whether the run fits in memory replay() has checked before:
// simulator/replay/replay_estimate.h.)
void check_size(const dag::DagShape& shape, const trace::LayerProfile& profile,
                const LayerTimes& times) {
  // An upper bound of one iteration: everything one after another.
  double ns = static_cast<double>((times.io + times.h2d + times.update).ns());
  double layers_ns = 0;
  std::size_t largest = 0;  // the layer with the most time
  double largest_ns = -1;
  for (std::size_t l = 0; l < profile.layers.size(); ++l) {
    const double layer = static_cast<double>(times.forward[l].ns()) +
                         static_cast<double>(times.backward[l].ns()) +
                         static_cast<double>(times.comm[l].ns());
    layers_ns += layer;
    if (layer > largest_ns) {
      largest_ns = layer;
      largest = l;
    }
  }
  ns += layers_ns;
  if (ns * static_cast<double>(shape.iterations) <= 4e18) return;
  // One iteration's layers beyond what a profile may hold (2^50 ns, with
  // room for the factors of perturbations): the input's times are the cause,
  // not the number of iterations.
  if (layers_ns > 4.0 * static_cast<double>(trace::kMaxProfileTimeNs)) {
    throw InputError(
        {profile.source_name(), std::nullopt, std::nullopt, "comm_ns"},
        fmt::format("one iteration of the input would take up to {:.3g} s (layer '{}': {:.3g} s "
                    "of forward, backward and communication), which overflows the simulated "
                    "clock (int64 nanoseconds, about 292 years): the input's times are not "
                    "measurements of one clock",
                    ns * 1e-9, profile.layers[largest].name, largest_ns * 1e-9));
  }
  // Located at the iterations key (with_located_errors); the profile's
  // times are bounded where they are read (traces/layer_profile.h).
  throw ParameterError(
      "iterations",
      fmt::format("{} iterations of up to {:.3g} s each would overflow the simulated clock "
                  "(int64 nanoseconds, about 292 years); simulate fewer iterations",
                  shape.iterations, ns * 1e-9));
}

// A policy that merges gradients models every collective from grad_bytes;
// a trace's collectives that grad_bytes do not stand for (without a size,
// or of a kind the replay does not model) would be dropped without a word.
void require_modelled_comm(const trace::LayerProfile& profile, const Scenario& scenario,
                           std::int64_t workers) {
  const trace::MeasuredOnlyCollectives& m = profile.measured_only;
  if (workers < 2 || !m.any() || !merges_gradients(scenario.overlap_policy)) return;
  const std::int64_t more = m.without_size + m.other_kind - 1;
  throw InputError(
      {profile.source_name(), std::nullopt, m.first_record, m.first_field},
      fmt::format("{}{}: policy.overlap {} merges gradients and models every collective from "
                  "its size, and this one can only be replayed at its measured duration. {}; or "
                  "replay the measured times with policy.overlap wfbp or bsp",
                  m.first_what,
                  more > 0 ? fmt::format(" (and {} more like it)", more) : std::string(),
                  to_string(scenario.overlap_policy),
                  m.without_size > 0
                      ? "Supply the sizes: record the trace with tracer/python's ssgd_marks "
                        "(ssgd/collective_bytes or ssgd/grad_bytes marks) or with "
                        "torch.profiler(record_shapes=True)"
                      : "Only all-reduce, reduce-scatter, all-gather, broadcast and reduce are "
                        "modelled as gradient collectives"));
}

}  // namespace

dag::CommPlan job_comm_plan(const trace::LayerProfile& profile, const Scenario& scenario,
                            const CommModel& comm) {
  dag::CommPlan plan = make_comm_plan(
      scenario.overlap_policy, scenario.policy_params, profile, [&comm](std::int64_t bytes) {
        return comm.isolated_time(CollectiveOp::kAllReduce, static_cast<double>(bytes));
      });
  if (comm.workers() == 1) {
    // One GPU communicates with no one: nothing is partitioned or scheduled,
    // so a scheduler's costs are not paid (the one-GPU baseline of a
    // priority run is the same GPU as every other policy's).
    plan.group_overhead = Duration::zero();
    plan.round_overhead = Duration::zero();
  }
  return plan;
}

namespace {

// The times the built tasks take: modelled collectives their time with
// nothing else on the network (the flow model's executor replaces it with
// the time they really take), forward and backward tasks their rank's
// compute factor times the jitter, drawn in task-id order so that one seed
// always gives the same draws, however the tasks are built. With class
// draws, every rank of a class reads the same table.
class TaskTimes {
 public:
  TaskTimes(std::vector<Duration> comm_time, bool ranks_differ, std::vector<double> rank_factor,
            const Perturbation& perturb, std::optional<ClassJitterTable> class_jitter,
            std::vector<std::uint32_t> class_of_rank)
      : comm_time_(std::move(comm_time)),
        ranks_differ_(ranks_differ),
        rank_factor_(std::move(rank_factor)),
        jitter_(perturb.jitter, perturb.seed),
        class_jitter_(std::move(class_jitter)),
        class_of_rank_(std::move(class_of_rank)) {}

  void apply(std::span<dag::Task> tasks) {
    for (auto& task : tasks) {
      if (task.kind == dag::TaskKind::kComm && task.duration_modelled) {
        task.duration = comm_time_[static_cast<std::size_t>(task.group)];
      } else if (ranks_differ_ &&
                 (task.kind == dag::TaskKind::kForward || task.kind == dag::TaskKind::kBackward)) {
        const auto r = static_cast<std::size_t>(task.rank);
        const double draw =
            class_jitter_ ? class_jitter_->factor(class_of_rank_[r],
                                                  static_cast<std::size_t>(task.iteration),
                                                  static_cast<std::size_t>(task.layer),
                                                  task.kind == dag::TaskKind::kBackward)
                          : jitter_.next();
        const double f = rank_factor_[r] * draw;
        if (f != 1) task.duration = scale(task.duration, f);
      }
    }
  }

 private:
  std::vector<Duration> comm_time_;  // per communication group
  bool ranks_differ_;
  std::vector<double> rank_factor_;
  TaskJitter jitter_;
  std::optional<ClassJitterTable> class_jitter_;
  std::vector<std::uint32_t> class_of_rank_;
};

// What a windowed run builds its iterations from: the profile and plan the
// builder reads, the builder, and the times.
struct WindowedDag {
  trace::LayerProfile profile;
  dag::CommPlan plan;
  dag::ShardedPlan sharded_plan;
  std::optional<dag::ProfileDagBuilder> builder;
  std::optional<dag::ShardedDagBuilder> sharded;
  std::optional<TaskTimes> times;
};

// Refuses what a sharded or accumulating step cannot run under.
void check_sharded_policy(const Scenario& scenario, const dag::CommPlan& plan) {
  const ShardSettings& sh = scenario.sharding;
  const char* what = sh.strategy != ShardStrategy::kNone ? "sharding.strategy" : "workload.accumulation";
  if (plan.prioritized ||
      effective_update(scenario.overlap_policy, scenario.policy_params) == UpdateMode::kPerLayer) {
    throw ParameterError(
        "policy.overlap",
        fmt::format("policy {} schedules by priority or updates per layer, which {} {} does not "
                    "model; use wfbp, bsp, mgwfbp, ddp, horovod or single{}",
                    to_string(scenario.overlap_policy), what,
                    sh.strategy != ShardStrategy::kNone ? to_string(sh.strategy)
                                                        : std::to_string(sh.accumulation),
                    // The count a capture's '# micro_batches:' gave, not the user.
                    sh.strategy == ShardStrategy::kNone &&
                            !scenario.origins.contains("workload.accumulation")
                        ? " (the input ran that many micro-batches a step; "
                          "workload.accumulation: 1 replays the step as one)"
                        : ""));
  }
}

// zero3 and hsdp communicate each unit's gradients after the unit's backward
// (wfbp) or after the whole backward (bsp); a policy that buckets gradients
// has no say there. Its plan is replaced by wfbp's, and the run says so.
bool unit_policy_replaced(const Scenario& scenario) {
  return scenario.sharding.per_unit_gathers() && scenario.overlap_policy != OverlapPolicy::kWfbp &&
         scenario.overlap_policy != OverlapPolicy::kBsp;
}

// The node a job's communicator starts on.
std::int64_t first_node_of(const CommModel& comm) {
  return comm.platform().node_of(comm.endpoints().front());
}

// The communicator of an HSDP shard group: the first G ranks' whole nodes,
// on the job's platform (so that the flow model runs its calls on the job's
// network); the job's own otherwise.
std::shared_ptr<const CommModel> shard_group_comm(const Scenario& scenario, const CommModel& comm,
                                                  std::int64_t shards) {
  if (scenario.sharding.strategy != ShardStrategy::kHsdp || shards == comm.workers()) {
    return std::make_shared<const CommModel>(comm);
  }
  const std::int64_t g = scenario.gpus_per_node;
  if (shards % g != 0) {
    throw ParameterError("sharding.group",
                         fmt::format("a shard group of {} ranks is not whole nodes of {} GPUs; "
                                     "ssgd models HSDP groups of whole nodes",
                                     shards, g));
  }
  return std::make_shared<const CommModel>(comm.shared_platform(), comm.settings(),
                                           first_node_of(comm), shards / g);
}

// HSDP's all-reduces across the R = P / G shard groups: G all-reduces of R
// ranks at once, rank i of every group in communicator i, each GPU on its
// own rail. One of them runs on a platform of one rail a node (rail_node:
// the node's NIC bandwidth split over its GPUs), which gives its time alone
// and NCCL's choice for R ranks on R nodes. The traffic of the G rings on
// the job's links is worked out once (rail_ring_link_share; a double binary
// tree's NIC bytes are a ring's within 1 / R on average), the analytical
// model's link bytes; under a model that runs calls on the job's links all G
// run there as flows (sharded_call: CollectiveCall::rails).
std::vector<double> rail_ring_link_share(const CommModel& comm, std::int64_t shards) {
  const Platform& platform = comm.platform();
  const std::vector<VertexId>& ranks = comm.endpoints();
  const auto p = comm.workers();
  const double replicas = static_cast<double>(p / shards);
  // A ring all-reduce sends 2 (R - 1) / R of its bytes from each rank to the
  // next: rank i of group m to rank i of group m + 1.
  const double sent = 2 * (replicas - 1) / replicas;
  std::vector<double> share(platform.links().size(), 0.0);
  for (std::int64_t r = 0; r < p; ++r) {
    const Route route = platform.route(ranks[static_cast<std::size_t>(r)],
                                       ranks[static_cast<std::size_t>((r + shards) % p)]);
    for (const LinkId l : route.links) share[l] += sent;
  }
  return share;
}

void set_replica_comm(JobGraph& job, const CommModel& comm) {
  const std::int64_t replicas = job.shard_groups();
  if (replicas < 2) return;
  // The scenario's algorithm: NCCL's choice for R ranks on R nodes (trees
  // at scale for all but the largest shards).
  PlatformSpec rail = comm.platform().spec();
  rail.node = rail_node(rail.node);
  job.replica_comm = std::make_shared<const CommModel>(
      std::make_shared<const Platform>(std::move(rail), replicas), comm.settings(), 0, replicas);
  auto share = rail_ring_link_share(comm, job.shard_ranks);
  const auto& links = comm.platform().links();
  for (std::size_t l = 0; l < links.size(); ++l) {
    if (share[l] > 0) {
      job.replica_ns_per_byte =
          std::max(job.replica_ns_per_byte, share[l] * 1e9 / links[l].bandwidth_bytes_per_s);
    }
  }
  job.replica_link_share = std::make_shared<const std::vector<double>>(std::move(share));
}

// The closed forms of a sharded or accumulating step (docs/sharding.md),
// where it has one; `t` holds the step's layer times (comm left zero) and the
// update on one shard.
std::optional<Duration> sharded_closed_form(const Scenario& scenario, const dag::ShardedPlan& plan,
                                            const std::vector<Duration>& comm_time, LayerTimes t,
                                            std::int64_t workers) {
  const ShardSettings& sh = scenario.sharding;
  const auto k = plan.accumulation;
  if (scenario.policy_params.prefetch_depth != 0 || (!plan.no_sync && k > 1)) return std::nullopt;
  const Duration io = t.io + t.h2d;
  const Duration pass = sum_of(t.forward) + sum_of(t.backward);
  const Duration earlier = (io + pass) * (k - 1);  // micro-batches before the last
  if (workers < 2) return earlier + io + pass + t.update;
  if (!sh.per_unit_gathers()) {
    for (const auto& g : plan.gradients) {
      t.comm[static_cast<std::size_t>(g.trigger_layer)] +=
          comm_time[static_cast<std::size_t>(g.collective)];
    }
    Duration gathers;
    for (const auto& g : plan.step_gathers) gathers += comm_time[static_cast<std::size_t>(g.collective)];
    t.io = Duration::zero();
    t.h2d = Duration::zero();
    return earlier + max(io, gathers) + closed_form_iteration_time(scenario.overlap_policy, t, 0);
  }
  // ZeRO-3 and HSDP without overlap: one stream, no forward prefetch, the
  // backward gather after the unit's gradient collective.
  if (plan.separate_streams || plan.forward_prefetch != 0 ||
      plan.backward_prefetch != dag::BackwardPrefetch::kNone) {
    return std::nullopt;
  }
  Duration gathers;
  const auto U = plan.units.size();
  for (std::size_t u = 0; u < U; ++u) {
    const Duration g = comm_time[static_cast<std::size_t>(plan.units[u].gather)];
    gathers += g;
    if (plan.reshard_after_forward && u + 1 < U) gathers += g;
  }
  Duration reductions;
  for (const auto& g : plan.gradients) {
    reductions += comm_time[static_cast<std::size_t>(g.collective)];
    if (g.then >= 0) reductions += comm_time[static_cast<std::size_t>(g.then)];
  }
  return (io + pass + gathers) * k + reductions + t.update;
}

}  // namespace

CollectiveOp collective_op(dag::CommOp op) {
  switch (op) {
    case dag::CommOp::kAllReduce: return CollectiveOp::kAllReduce;
    case dag::CommOp::kReduceScatter: return CollectiveOp::kReduceScatter;
    case dag::CommOp::kAllGather: return CollectiveOp::kAllGather;
    case dag::CommOp::kReduce: return CollectiveOp::kReduce;
  }
  return CollectiveOp::kAllReduce;
}

ShardedTarget sharded_target(const JobGraph& job, const CommModel& comm, std::int32_t c) {
  const dag::CommGroup& g = job.collectives[static_cast<std::size_t>(c)];
  const CollectiveOp op = collective_op(g.op);
  const auto bytes = static_cast<double>(g.bytes);
  if (g.op == dag::CommOp::kReduce) {
    const bool group = g.scope == dag::CommScope::kShardGroup;
    const std::int64_t ranks = group ? job.shard_ranks : comm.workers();
    return {group ? job.shard_comm.get() : &comm, op, bytes / static_cast<double>(ranks), ranks,
            ranks};
  }
  switch (g.scope) {
    case dag::CommScope::kJob: return {&comm, op, bytes, comm.workers()};
    case dag::CommScope::kShardGroup: return {job.shard_comm.get(), op, bytes, job.shard_ranks};
    case dag::CommScope::kReplicas: {
      // One rail's all-reduce of R ranks on its shard (set_replica_comm),
      // its traffic on the job's links the share of G rings, or (a model
      // that runs calls on the job's links) G calls there (sharded_call).
      ShardedTarget t{job.replica_comm.get(), op, bytes, job.shard_groups()};
      t.link_share = job.replica_link_share.get();
      return t;
    }
  }
  return {&comm, op, bytes, comm.workers()};
}

CollectiveCall sharded_call(const JobGraph& job, const CommModel& comm, std::int32_t c) {
  const ShardedTarget t = sharded_target(job, comm, c);
  if (t.calls > 1) {
    // build_job_graph refuses this under a model that runs calls.
    throw std::logic_error("sharded_call: a group of several collectives has no one call");
  }
  CollectiveCall call = t.comm->call(t.op, t.bytes);
  if (t.comm == job.replica_comm.get()) {
    // The G rails' all-reduces at once on the job's links: rail i's rank m
    // is rank i + m G.
    call.rails = job.shard_ranks;
    call.endpoints = &comm.endpoints();
  } else if (t.comm == job.shard_comm.get() && job.shard_groups() > 1) {
    // The collective in every shard group at once, each on its own nodes.
    call.groups = job.shard_groups();
    call.group_nodes = job.shard_comm->shape().nodes();
  }
  return call;
}

Duration sharded_time(const JobGraph& job, const CommModel& comm, std::int32_t c) {
  const ShardedTarget t = sharded_target(job, comm, c);
  const Duration alone = t.comm->isolated_time(t.op, t.bytes) * t.calls;
  if (t.comm != job.replica_comm.get()) return alone;
  // The G rails at once: no faster than the busiest of the job's links lets
  // them all (set_replica_comm).
  return max(alone,
             Duration(static_cast<std::int64_t>(std::ceil(t.bytes * job.replica_ns_per_byte))));
}

JobGraph build_job_graph(const trace::LayerProfile& captured, const Scenario& scenario,
                         const CommModel& comm, bool allow_folding, bool allow_class_folding,
                         bool windowed) {
  JobGraph job;
  job.workers = comm.workers();
  require_modelled_comm(captured, scenario, job.workers);
  // Compute factors that keep ranks alike change the profile itself, so the
  // DAG and the closed forms see the same times.
  trace::LayerProfile profile = scenario.perturb.active()
                                    ? perturbed_profile(captured, scenario.perturb)
                                    : captured;
  // Gradients as the step communicates them, and each layer's forward
  // recomputed in its backward under activation checkpointing.
  const ShardSettings& sh = scenario.sharding;
  const StepDtypes dtypes = step_dtypes(sh, captured);
  if (profile.grad_element_bytes() != dtype_bytes(dtypes.reduce)) {
    profile = profile_in_dtype(profile, dtypes.reduce);
  }
  if (sh.activation_checkpointing) {
    for (auto& row : profile.layers) row.backward += row.forward;
  }
  // One factor a rank where ranks differ; else one for all (a million-rank
  // job would otherwise hold a million ones).
  std::vector<double> rank_factor = scenario.perturb.varies_by_rank()
                                        ? rank_compute_factors(scenario.perturb, job.workers)
                                        : std::vector<double>{1.0};
  job.ranks_differ = scenario.perturb.varies_by_rank() && job.workers > 1;
  // Every rank runs the same tasks with the same times unless a per-rank
  // perturbation makes them differ.
  const bool fold = allow_folding && job.workers > 1 && !job.ranks_differ;
  job.ranks_built = fold ? 1 : job.workers;
  // Ranks that differ only by their compute factor (and, with
  // perturb.jitter_draw: class, share their jitter) fold by class: the DAG's
  // rank c is class c, with the class's factor.
  const bool class_draws =
      scenario.perturb.jitter.kind != JitterKind::kNone && scenario.perturb.jitter_per_class;
  std::vector<std::uint32_t> class_of_rank;  // class draws: the class of each built rank
  std::size_t class_count = 0;
  if (job.ranks_differ && scenario.perturb.ranks_fold_by_class()) {
    RankClasses classes = rank_classes(rank_factor);
    class_count = classes.factor.size();
    if (allow_folding && allow_class_folding && classes.factor.size() < rank_factor.size()) {
      job.ranks_built = static_cast<std::int64_t>(classes.factor.size());
      job.rank_weight = std::move(classes.size);
      rank_factor = std::move(classes.factor);
      class_of_rank.resize(class_count);
      for (std::uint32_t c = 0; c < class_of_rank.size(); ++c) class_of_rank[c] = c;
    } else {
      class_of_rank = std::move(classes.of_rank);
    }
  }
  // Folded into one rank or into classes, the collectives stay: a rank that
  // stands for several has someone to talk to.
  dag::DagShape shape{job.ranks_built, scenario.iterations, scenario.io_time,
                      scenario.h2d_time, scenario.update_time,
                      fold || !job.rank_weight.empty()};
  shape.update_per_group =
      effective_update(scenario.overlap_policy, scenario.policy_params) == UpdateMode::kPerLayer;
  shape.prefetch_depth = scenario.policy_params.prefetch_depth;
  dag::CommPlan plan = job_comm_plan(profile, scenario, comm);
  dag::ShardedPlan sharded_plan;
  std::vector<Duration> comm_time;  // of the modelled groups, or of the sharded collectives
  if (sh.needs_sharded_dag()) {
    job.sharded = true;
    check_sharded_policy(scenario, plan);
    if (unit_policy_replaced(scenario)) {
      logger("sim")->warn(
          "policy.overlap {} buckets gradients, but sharding.strategy {} reduces each unit's "
          "gradients after the unit's backward (sharding.units): replayed as wfbp",
          to_string(scenario.overlap_policy), to_string(sh.strategy));
      plan.wait_for_full_backward = false;
    }
    job.shard_ranks = shard_ranks(sh, job.workers, scenario.gpus_per_node);
    job.shard_comm = shard_group_comm(scenario, comm, job.shard_ranks);
    set_replica_comm(job, comm);
    if (sh.gradient_reduction == GradientReduction::kReduce && comm.model().shares_links() &&
        job.workers > 1) {
      throw ParameterError("sharding.gradient_reduction",
                           fmt::format("sharding.gradient_reduction reduce (one reduce per owner) "
                                       "runs under network.model analytical only; network.model "
                                       "{} runs one collective a task",
                                       comm.model().name()));
    }
    sharded_plan = make_sharded_plan(profile, sh, dtypes, plan, job.workers, job.shard_ranks);
    job.collectives = sharded_plan.collectives;
    job.shard_units = static_cast<std::int64_t>(sharded_plan.units.size());
    // The optimizer steps on one shard.
    const std::int64_t n = job.shard_ranks;
    shape.update = Duration((shape.update.ns() + n / 2) / n);
    for (std::size_t c = 0; c < job.collectives.size(); ++c) {
      const auto& g = job.collectives[c];
      comm_time.push_back(g.replayed ? *g.replayed
                          : job.workers > 1
                              ? sharded_time(job, comm, static_cast<std::int32_t>(c))
                              : Duration::zero());
    }
    job.times = layer_times(profile, dag::CommPlan{}, scenario, comm);
    job.times.update = shape.update;
    job.sharded_closed_form =
        sharded_closed_form(scenario, sharded_plan, comm_time, job.times, job.workers);
    // For the overflow check: every collective on its first layer, each
    // micro-batch's layers counted (and its gathers twice).
    for (std::size_t c = 0; c < job.collectives.size(); ++c) {
      const auto& ls = job.collectives[c].layers;
      if (!ls.empty()) job.times.comm[static_cast<std::size_t>(ls.front())] += comm_time[c] * 2;
    }
  } else {
    // The flow model's isolated run of each group's size, on the machine's
    // threads (one size after another below would take as long as all of
    // them: a 16,384-GPU double binary tree is 65,532 flows a run).
    std::vector<double> sizes;
    for (const auto& g : plan.groups) {
      if (!g.replayed) sizes.push_back(static_cast<double>(g.bytes));
    }
    comm.prepare_isolated(CollectiveOp::kAllReduce, sizes, CommModel::isolated_threads());
    job.times = layer_times(profile, plan, scenario, comm);
    for (const auto& g : plan.groups) {
      comm_time.push_back(g.replayed ? Duration::zero()
                                     : comm.isolated_time(CollectiveOp::kAllReduce,
                                                          static_cast<double>(g.bytes)));
    }
  }
  job.updates = !job.sharded && shape.update_per_group && !plan.groups.empty()
                    ? static_cast<std::int64_t>(plan.groups.size())
                    : 1;
  LayerTimes slowest = job.times;  // for the overflow check: the slowest rank's
  const double max_factor = *std::max_element(rank_factor.begin(), rank_factor.end());
  for (auto& d : slowest.forward) d = scale(d, max_factor);
  for (auto& d : slowest.backward) d = scale(d, max_factor);
  dag::DagShape checked = shape;  // micro-batches as iterations, for the bound
  checked.iterations *= sh.accumulation;
  check_size(checked, profile, slowest);
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<ClassJitterTable> class_jitter;
  if (class_draws) {
    class_jitter.emplace(scenario.perturb.jitter, scenario.perturb.seed, class_count,
                         static_cast<std::size_t>(scenario.iterations), profile.layers.size());
  }
  TaskTimes times(std::move(comm_time), job.ranks_differ, std::move(rank_factor), scenario.perturb,
                  std::move(class_jitter), std::move(class_of_rank));
  if (!windowed) {
    job.graph = std::make_shared<dag::TaskGraph>(
        job.sharded ? dag::build_sharded_dag(profile, shape, sharded_plan)
                    : dag::build_profile_dag(profile, shape, plan));
    times.apply(job.graph->mutable_tasks());
    job.tasks = job.graph->task_count();
    job.edges = job.graph->edge_count();
  } else {
    // Iterations are built as the run reaches them (run_windowed): the
    // builder reads the profile and plan the source keeps alive.
    auto state = std::make_shared<WindowedDag>();
    state->profile = std::move(profile);
    state->plan = std::move(plan);
    state->sharded_plan = std::move(sharded_plan);
    state->times.emplace(std::move(times));
    job.source = std::make_shared<IterationSource>();
    const auto describe = [&job](const auto& b) {
      job.source->resources = b.resources();
      job.source->tasks_per_iteration = b.tasks_per_iteration();
      job.source->iterations = b.iterations();
      job.source->reach = b.reach();
      job.source->layer_names = b.layer_names();
      job.source->ranks = static_cast<std::size_t>(b.ranks());
      job.source->tasks_per_rank = b.tasks_per_rank();
      job.source->edges_hint = b.edges_per_iteration_hint();
      job.tasks = b.tasks_per_iteration() * static_cast<std::size_t>(b.iterations());
    };
    if (job.sharded) {
      state->sharded.emplace(state->profile, shape, state->sharded_plan);
      describe(*state->sharded);
      job.source->reaches_forward = [state](const dag::Task& task) {
        return state->sharded->reaches_forward(task);
      };
      job.source->build = [state](dag::TaskBatch& batch) {
        state->sharded->add_iteration(batch);
        state->times->apply(batch.tasks);
      };
    } else {
      state->builder.emplace(state->profile, shape, state->plan);
      describe(*state->builder);
      job.source->reaches_forward = [state](const dag::Task& task) {
        return state->builder->reaches_forward(task);
      };
      job.source->build = [state](dag::TaskBatch& batch) {
        state->builder->add_iteration(batch);
        state->times->apply(batch.tasks);
      };
    }
  }
  job.build_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return job;
}

bool CollectiveExecutor::handles(const dag::Task& task) const {
  return task.kind == dag::TaskKind::kComm && task.duration_modelled;
}

CollectiveCall CollectiveExecutor::call_of(const dag::Task& task) const {
  if (call_of_) return call_of_(task);
  return comm_.call(CollectiveOp::kAllReduce, static_cast<double>(task.bytes));
}

std::unique_ptr<CollectiveExecutor> job_executor(NetworkRun& network, const JobGraph& job,
                                                 const CommModel& comm) {
  if (job.execution) {
    // Only the modelled ones run here (CollectiveExecutor::handles), and a
    // graph's call is modelled only where its op is (build_graph).
    return std::make_unique<CollectiveExecutor>(
        network, comm, [&job, &comm](const dag::Task& task) {
          const auto& call = job.execution->comm[static_cast<std::size_t>(task.group)];
          return comm.call(
              *trace::modelled_op(static_cast<trace::v1::Collective::Op>(call.op)),
              static_cast<double>(task.bytes));
        });
  }
  if (!job.sharded) return std::make_unique<CollectiveExecutor>(network, comm);
  return std::make_unique<CollectiveExecutor>(
      network, comm, [&job, &comm](const dag::Task& task) {
        return sharded_call(job, comm, task.group);
      });
}

void CollectiveExecutor::start(dag::TaskId, const dag::Task& task, std::function<void()> finished) {
  network_.run(call_of(task), std::move(finished));
}

void CollectiveExecutor::start_alone(dag::TaskId, const dag::Task& task,
                                     std::function<void()> finished) {
  network_.run_alone(call_of(task), std::move(finished));
}

IterationEnds iteration_ends(const dag::TaskGraph& graph, const Schedule& schedule,
                             std::int64_t iterations, std::int64_t ranks_built) {
  const auto N = static_cast<std::size_t>(iterations);
  IterationEnds out;
  out.end.assign(N, Time::zero());
  out.update_end.assign(N, std::vector<Time>(static_cast<std::size_t>(ranks_built)));
  for (dag::TaskId t = 0; t < graph.task_count(); ++t) {
    const auto& task = graph.task(t);
    if (task.kind != dag::TaskKind::kUpdate) continue;
    const auto i = static_cast<std::size_t>(task.iteration);
    // A per-group update has several update tasks per rank and iteration.
    auto& rank_end = out.update_end[i][static_cast<std::size_t>(task.rank)];
    rank_end = max(rank_end, schedule.end[t]);
    out.end[i] = max(out.end[i], schedule.end[t]);
  }
  return out;
}

Duration steady_iteration_time(const std::vector<Time>& iteration_end) {
  const std::size_t n = iteration_end.size();
  if (n == 0) return Duration::zero();
  const std::size_t first = n > 1 ? 1 : 0;
  const auto steady = static_cast<std::int64_t>(n - first);
  const Duration span = iteration_end[n - 1] - (first == 0 ? Time::zero() : iteration_end[first - 1]);
  return Duration((span.ns() + steady / 2) / steady);
}

IterationMeasures iteration_measures(const std::vector<Time>& iteration_end,
                                     const dag::TimeBreakdown& breakdown) {
  IterationMeasures m;
  Time prev = Time::zero();
  for (auto e : iteration_end) {
    m.times.push_back(e - prev);
    prev = e;
  }
  m.steady = steady_iteration_time(iteration_end);
  m.breakdown = breakdown;
  return m;
}

IterationMeasures iteration_measures(const dag::TaskGraph& graph, const Schedule& schedule,
                                     std::int64_t iterations, std::int64_t ranks_built,
                                     std::span<const std::int64_t> rank_weight) {
  const auto N = static_cast<std::size_t>(iterations);
  const IterationEnds ends = iteration_ends(graph, schedule, iterations, ranks_built);
  IterationMeasures m = iteration_measures(ends.end, dag::TimeBreakdown{});
  // Steady state: the first iteration may differ (nothing overlaps it), so it
  // is left out whenever there is more than one.
  const std::size_t first = N > 1 ? 1 : 0;
  const auto steady = static_cast<std::int64_t>(N - first);
  std::vector<Time> from(static_cast<std::size_t>(ranks_built), Time::zero());
  if (first == 1) from = ends.update_end[0];
  m.breakdown = dag::average_breakdown(graph, schedule.view(), from, ends.update_end[N - 1], steady,
                                       rank_weight);
  return m;
}

}  // namespace ssgd::sim
