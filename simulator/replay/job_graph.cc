#include "simulator/replay/job_graph.h"


#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"
#include "dag/profile_dag_builder.h"
#include "simulator/perturb/compute_perturbation.h"
#include "simulator/perturb/jitter.h"
#include "simulator/policy/overlap_policy.h"

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
  if (workers < 2 || !m.any() || !merges_gradients(scenario.overlap)) return;
  const std::int64_t more = m.without_size + m.other_kind - 1;
  throw InputError(
      {profile.source_name(), std::nullopt, m.first_record, m.first_field},
      fmt::format("{}{}: policy.overlap {} merges gradients and models every collective from "
                  "its size, and this one can only be replayed at its measured duration. {}; or "
                  "replay the measured times with policy.overlap wfbp or bsp",
                  m.first_what,
                  more > 0 ? fmt::format(" (and {} more like it)", more) : std::string(),
                  to_string(scenario.overlap),
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
  return make_comm_plan(scenario.overlap, scenario.policy, profile, [&comm](std::int64_t bytes) {
    return comm.isolated_time(CollectiveOp::kAllReduce, static_cast<double>(bytes));
  });
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
  std::optional<dag::ProfileDagBuilder> builder;
  std::optional<TaskTimes> times;
};

}  // namespace

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
      effective_update(scenario.overlap, scenario.policy) == UpdateMode::kPerLayer;
  shape.prefetch_depth = scenario.policy.prefetch_depth;
  dag::CommPlan plan = job_comm_plan(profile, scenario, comm);
  // The flow model's isolated run of each group's size, on the machine's
  // threads (one size after another below would take as long as all of
  // them: a 16,384-GPU double binary tree is 65,532 flows a run).
  std::vector<double> sizes;
  for (const auto& g : plan.groups) {
    if (!g.replayed) sizes.push_back(static_cast<double>(g.bytes));
  }
  comm.prepare_isolated(CollectiveOp::kAllReduce, sizes, CommModel::isolated_threads());
  job.updates = shape.update_per_group && !plan.groups.empty()
                    ? static_cast<std::int64_t>(plan.groups.size())
                    : 1;
  job.times = layer_times(profile, plan, scenario, comm);
  LayerTimes slowest = job.times;  // for the overflow check: the slowest rank's
  const double max_factor = *std::max_element(rank_factor.begin(), rank_factor.end());
  for (auto& d : slowest.forward) d = scale(d, max_factor);
  for (auto& d : slowest.backward) d = scale(d, max_factor);
  check_size(shape, profile, slowest);
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<ClassJitterTable> class_jitter;
  if (class_draws) {
    class_jitter.emplace(scenario.perturb.jitter, scenario.perturb.seed, class_count,
                         static_cast<std::size_t>(scenario.iterations), profile.layers.size());
  }
  std::vector<Duration> comm_time;  // of the modelled groups
  for (const auto& g : plan.groups) {
    comm_time.push_back(g.replayed ? Duration::zero()
                                   : comm.isolated_time(CollectiveOp::kAllReduce,
                                                        static_cast<double>(g.bytes)));
  }
  TaskTimes times(std::move(comm_time), job.ranks_differ, std::move(rank_factor), scenario.perturb,
                  std::move(class_jitter), std::move(class_of_rank));
  if (!windowed) {
    job.graph = std::make_shared<dag::TaskGraph>(dag::build_profile_dag(profile, shape, plan));
    times.apply(job.graph->mutable_tasks());
    job.tasks = job.graph->task_count();
    job.edges = job.graph->edge_count();
  } else {
    // Iterations are built as the run reaches them (run_windowed): the
    // builder reads the profile and plan the source keeps alive.
    auto state = std::make_shared<WindowedDag>();
    state->profile = std::move(profile);
    state->plan = std::move(plan);
    state->builder.emplace(state->profile, shape, state->plan);
    state->times.emplace(std::move(times));
    const dag::ProfileDagBuilder& b = *state->builder;
    job.source = std::make_shared<IterationSource>();
    job.source->resources = b.resources();
    job.source->tasks_per_iteration = b.tasks_per_iteration();
    job.source->iterations = b.iterations();
    job.source->reach = b.reach();
    job.source->layer_names = b.layer_names();
    job.source->ranks = static_cast<std::size_t>(b.ranks());
    job.source->tasks_per_rank = b.tasks_per_rank();
    job.source->edges_hint = b.edges_per_iteration_hint();
    job.source->reaches_forward = [state](const dag::Task& task) {
      return state->builder->reaches_forward(task);
    };
    job.source->build = [state](dag::TaskBatch& batch) {
      state->builder->add_iteration(batch);
      state->times->apply(batch.tasks);
    };
    job.tasks = b.tasks_per_iteration() * static_cast<std::size_t>(b.iterations());
  }
  job.build_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return job;
}

bool CollectiveExecutor::handles(const dag::Task& task) const {
  return task.kind == dag::TaskKind::kComm && task.duration_modelled;
}

CollectiveCall CollectiveExecutor::call_of(const dag::Task& task) const {
  const CollectiveOp op = op_of_ ? op_of_(task) : CollectiveOp::kAllReduce;
  return comm_.call(op, static_cast<double>(task.bytes));
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
