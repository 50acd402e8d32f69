// The plan and build stages of a replay (replay_stages.h), for a profile and
// for an execution graph.
#include <chrono>
#include <limits>
#include <memory>
#include <optional>

#include "common/error.h"
#include "common/logging.h"
#include "dag/execution_dag.h"
#include "simulator/policy/overlap_policy.h"
#include "simulator/perturb/gpu_change.h"
#include "simulator/perturb/tracer_overhead.h"
#include "simulator/replay/replay_stages.h"
#include "simulator/scenario/scenario_platform.h"
#include "simulator/scenario/scenario_network.h"
#include "simulator/sharding/gpu_memory.h"
#include "simulator/sharding/shard_plan.h"
#include "traces/proto/trace_events.pb.h"
#include "traces/trace_collectives.h"

namespace ssgd::sim::replay_stages {

Plan plan(const trace::LayerProfile& measured_input, const Scenario& requested,
          const ReplayOptions& options, ReplayResult& out) {
  // The input's compute on the scenario's GPU (the same GPU: as measured).
  // Without the tracing window's own cost, when asked (tracer_overhead.h).
  trace::LayerProfile untraced;
  out.tracer_overhead =
      plan_tracer_overhead(measured_input, requested.remove_tracer_overhead, &untraced);
  const trace::LayerProfile& measured = out.tracer_overhead.removed ? untraced : measured_input;
  out.gpu_change = plan_gpu_change(measured, scenario_gpu_model(requested),
                                   requested.platform.gpu_model_from_key, requested.fp32_matmul);
  out.kernel_classes = measured.kernel_classes;
  out.traced = measured_input.traced;
  if (options.single_worker_baseline) {
    auto log = logger("sim");
    for (const auto& note : out.gpu_change.notes) {
      if (out.gpu_change.applied) {
        log->warn("{}", note);
      } else {
        log->info("{}", note);
      }
    }
  }
  std::optional<trace::LayerProfile> on_gpu;
  if (out.gpu_change.applied) on_gpu = profile_on_gpu(measured, out.gpu_change);
  // Under an interference model, the input's compute without the slowdown
  // its own collectives caused (simulator/perturb/interference.h).
  InterferencePlan interference =
      plan_interference(requested.interference, on_gpu ? *on_gpu : measured);
  std::optional<trace::LayerProfile> alone;
  if (interference.active) {
    alone = profile_without_interference(on_gpu ? *on_gpu : measured, interference);
  }
  const trace::LayerProfile& captured = alone ? *alone : on_gpu ? *on_gpu : measured;
  // The input's measured update, unless the scenario sets workload.update_time.
  Scenario given = scenario_for_profile(requested, captured);
  out.update_time = given.update_time;
  out.workers = given.workers();
  out.iterations = given.iterations;
  // The batch each GPU computes, and what compute and I/O cost at that batch.
  const BatchPlan batch = batch_plan(captured, given);
  std::shared_ptr<const BatchTimeModel> batch_model = options.batch_model;
  if (!batch_model && batch.mode == ScalingMode::kStrong) {
    batch_model =
        std::make_shared<const BatchTimeModel>(scenario_batch_time_model(captured, given, batch));
  }
  BatchWorkload workload = workload_at_batch(captured, given, batch, batch_model.get());
  out.batch_per_gpu = batch.per_gpu_batch * given.sharding.accumulation;
  out.batch_given = batch.batch_known;
  out.scaling_mode = batch.mode;
  // Every micro-batch of a step is a batch of samples.
  out.global_batch = batch.global_batch * given.sharding.accumulation;
  out.reference_batch = batch.reference_batch;
  if (batch_model) out.compute_model = batch_model->description;
  return Plan{std::move(given), batch, std::move(batch_model), std::move(workload),
              std::move(interference)};
}

JobGraph build_job(const Plan& plan, const CommModel& comm, const ReplayOptions& options) {
  return build_job_graph(plan.workload.profile, plan.workload.scenario, comm, options.may_fold(),
                         options.may_fold_classes(), options.windowed());
}

void rebuild_job(Build& build, const Plan& plan, const ReplayOptions& options) {
  build.job = JobGraph{};  // what the first try held, given back first
  build.job = build_job(plan, build.comm, options);
}

Build build(const Plan& plan, const ReplayOptions& options, ReplayResult& out) {
  auto log = logger("sim");
  const trace::LayerProfile& profile = plan.workload.profile;
  const Scenario& scenario = plan.workload.scenario;
  CommModel comm = scenario_comm_model(scenario);
  out.network = comm.describe();
  out.network_model = scenario.network_model;
  out.comm_replayed =
      profile.has_comm() && out.workers > 1 && !merges_gradients(scenario.overlap_policy);
  if (out.comm_replayed) {
    out.unsized_collectives_replayed = profile.measured_only.without_size;
    out.other_kind_collectives_replayed = profile.measured_only.other_kind;
  }
  if (profile.has_comm() && out.workers > 1 && merges_gradients(scenario.overlap_policy) &&
      options.single_worker_baseline) {
    log->warn(
        "policy {} merges gradients: the input's measured per-layer comm_ns cannot be merged, "
        "so every collective is modelled ({})",
        to_string(scenario.overlap_policy), comm.describe());
  }
  if (profile.has_comm() && out.workers == 1 && options.single_worker_baseline) {
    if (out.traced.world > 1) {
      log->warn(
          "one worker, but the trace is of a job of {} ranks: its measured comm_ns are not "
          "replayed (nothing to all-reduce); set cluster.nodes and cluster.gpus_per_node to "
          "replay that job",
          out.traced.world);
    } else {
      log->info(
          "one worker: the profile's measured comm_ns are not replayed (nothing to all-reduce)");
    }
  }

  const bool windowed = options.windowed();
  JobGraph job = build_job(plan, comm, options);
  // The strategy as replayed and one GPU's memory under it.
  const StepDtypes dtypes = step_dtypes(scenario.sharding, profile);
  out.sharding = to_string(scenario.sharding.strategy);
  out.shard_ranks = job.shard_ranks;
  out.accumulation = scenario.sharding.accumulation;
  out.precision = to_string(dtypes.precision);
  out.reduce_dtype = to_string(dtypes.reduce);
  out.gather_dtype = to_string(dtypes.gather);
  out.shard_units = job.shard_units;
  // Activations were recorded at the input's batch (the reference); a GPU
  // computes the planned one.
  const double activation_scale =
      plan.batch.reference_batch > 0 ? static_cast<double>(plan.batch.per_gpu_batch) /
                                           static_cast<double>(plan.batch.reference_batch)
                                     : 1.0;
  out.memory =
      estimate_memory(profile, scenario.sharding, dtypes, job.shard_ranks, activation_scale);
  // gloo's all-gather holds a gathered unit twice (gpu_memory.h).
  if (scenario_library(scenario, scenario.algorithm) == CollectiveLibrary::kGeneric) {
    out.memory.gather_output = generic_gather_output_bytes(profile, scenario.sharding, dtypes);
  }
  // The data-parallel library's own buffers, replicated only.
  if (scenario.sharding.strategy == ShardStrategy::kNone) {
    if (scenario.overlap_policy == OverlapPolicy::kDdp) {
      out.memory.comm_buffers = ddp_bucket_bytes(out.memory, scenario.policy_params.bucket_view);
      out.memory.comm_buffers_kind = CommBuffers::kDdpBuckets;
    } else if (scenario.overlap_policy == OverlapPolicy::kHorovod) {
      out.memory.comm_buffers = horovod_fusion_buffer_bytes(
          profile, scenario.policy_params.fusion_threshold_bytes, out.workers);
      out.memory.comm_buffers_kind = CommBuffers::kHorovodFusion;
    }
  }
  out.gpu_memory = comm.platform().spec().node.gpu_memory;
  if (job.sharded && scenario.sharding.strategy != ShardStrategy::kNone && out.comm_replayed) {
    out.comm_replayed = false;
    if (options.single_worker_baseline) {
      log->warn("sharding.strategy {}: the input's measured comm_ns are all-reduces, not the "
                "strategy's collectives, so every collective is modelled ({})",
                to_string(scenario.sharding.strategy), comm.describe());
    }
  }
  out.ranks_simulated = job.ranks_built;
  out.build_seconds = job.build_seconds;
  out.tasks = job.tasks;
  out.edges = job.edges;
  if (windowed) {
    log->debug("DAG: {} tasks ({} of {} ranks), built an iteration at a time", out.tasks,
               job.ranks_built, out.workers);
  } else {
    log->debug("DAG: {} tasks, {} edges ({} of {} ranks), built in {:.3f} s", out.tasks,
               out.edges, job.ranks_built, out.workers, out.build_seconds);
  }
  if (plan.interference.active && options.single_worker_baseline) {
    for (const auto& note : plan.interference.notes) log->warn("interference: {}", note);
  }
  out.interference = plan.interference;
  InterferencePlan interference = plan.interference;
  if (interference.demand) {
    // Each collective's bytes through a rank, by its group's operation and
    // the ranks one such collective spans (the replicated DAG's are
    // all-reduces over the job: the executor's).
    for (std::size_t c = 0; c < job.collectives.size(); ++c) {
      const dag::CommGroup& g = job.collectives[c];
      const std::int64_t ranks = sharded_target(job, comm, static_cast<std::int32_t>(c)).ranks;
      interference.comm_through.push_back(
          bytes_through_rank(collective_op(g.op), static_cast<double>(g.bytes), ranks));
    }
  }
  return Build{std::move(comm), std::move(job), std::move(interference)};
}

void plan_graph(const GraphPlan& plan, const Scenario& requested, GraphReplayResult& out) {
  const dag::ExecutionGraph& graph = plan.graph;
  out.scenario = graph_scenario(graph, requested);
  ReplayResult& r = out.run;
  r.workers = graph.world;
  r.iterations = 1;
  r.ranks_simulated = graph.world;
  out.nodes = graph.nodes;
  Time first = Time(std::numeric_limits<std::int64_t>::max());
  Time last = Time::zero();
  for (const auto& rank : graph.ranks) {
    for (const auto& n : rank) {
      if (n.start < first) first = n.start;
      last = max(last, n.start + n.duration);
    }
  }
  out.recorded_span = last > first ? last - first : Duration::zero();
}

Build build_graph(const GraphPlan& plan, GraphReplayResult& out) {
  const Scenario& scenario = out.scenario;
  ReplayResult& r = out.run;
  CommModel comm = with_located_errors(scenario, [&] { return scenario_comm_model(scenario); });
  r.network = comm.describe();
  r.network_model = scenario.network_model;
  const auto t0 = std::chrono::steady_clock::now();
  // A collective over the whole world of an op the models know is timed by
  // the comm model (and run on its network: job_executor); any other at its
  // recorded time.
  const dag::GraphCommTime comm_time =
      [&comm](const dag::GraphCommCall& call) -> std::optional<Duration> {
    if (!call.whole_world) return std::nullopt;
    const auto op = trace::modelled_op(static_cast<trace::v1::Collective::Op>(call.op));
    if (!op) return std::nullopt;
    return comm.isolated_time(*op, static_cast<double>(call.bytes));
  };
  auto dag = std::make_shared<dag::ExecutionDag>(
      dag::build_execution_dag(plan.graph, comm_time, plan.file));
  JobGraph job;
  job.build_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.collectives = dag->collectives;
  out.point_to_point = dag->point_to_point;
  out.comm_modelled = dag->comm_modelled;
  out.comm_replayed = dag->comm_replayed;
  if (dag->comm_replayed > 0) {
    logger("sim")->info(
        "{} of {} collective and point-to-point operations replayed at their recorded "
        "times (not modelled: another op, a smaller group, or point-to-point)",
        dag->comm_replayed, dag->comm_replayed + dag->comm_modelled);
  }
  job.tasks = dag->graph.task_count();
  job.edges = dag->graph.edge_count();
  job.workers = plan.graph.world;
  job.ranks_built = plan.graph.world;
  job.graph = std::shared_ptr<dag::TaskGraph>(dag, &dag->graph);
  job.execution = std::move(dag);
  r.build_seconds = job.build_seconds;
  r.tasks = job.tasks;
  r.edges = job.edges;
  return Build{std::move(comm), std::move(job), InterferencePlan{}};
}

}  // namespace ssgd::sim::replay_stages
