#include "simulator/replay/shared_fabric.h"

#include <chrono>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>

#include "common/units.h"
#include "common/error.h"
#include "simulator/engine/engine.h"
#include "simulator/network/collective_runner.h"
#include "simulator/network/comm_model.h"
#include "simulator/network/flow_network.h"
#include "simulator/replay/job_graph.h"
#include "simulator/replay/replay_estimate.h"
#include "simulator/scenario/scenario_jobs.h"
#include "simulator/scenario/scenario_network.h"
#include "simulator/scenario/scenario_platform.h"

namespace ssgd::sim {
namespace {

// One collective every period (start to start), back to back when one takes
// longer, from `start` until stop().
class TrafficGenerator {
 public:
  TrafficGenerator(Engine& engine, NetworkRun& network, CollectiveCall call, Duration period,
                   Duration start)
      : engine_(engine), network_(network), call_(call), period_(period) {
    launch_handler_ = engine_.register_handler([this](Engine&, std::uint64_t) { launch(); });
    next_ = engine_.schedule(Time::zero() + start, launch_handler_, 0);
    pending_ = true;
  }

  void stop() {
    stopped_ = true;
    if (pending_) engine_.cancel(next_);
    pending_ = false;
  }

  [[nodiscard]] std::int64_t completed() const { return completed_; }
  [[nodiscard]] Duration mean() const {
    return completed_ == 0 ? Duration::zero()
                           : Duration((total_.ns() + completed_ / 2) / completed_);
  }

 private:
  void launch() {
    pending_ = false;
    if (stopped_) return;
    started_at_ = engine_.now();
    network_.run(call_, [this] { finished(); });
  }

  void finished() {
    ++completed_;
    total_ += engine_.now() - started_at_;
    if (stopped_) return;
    // At least a nanosecond apart, so a collective that takes no time cannot
    // hold the clock still.
    const Time next = max(max(started_at_ + period_, engine_.now()), started_at_ + Duration(1));
    next_ = engine_.schedule(next, launch_handler_, 0);
    pending_ = true;
  }

  Engine& engine_;
  NetworkRun& network_;
  CollectiveCall call_;
  Duration period_;
  HandlerId launch_handler_ = 0;
  EventHandle next_;
  bool pending_ = false;
  bool stopped_ = false;
  Time started_at_;
  Duration total_;
  std::int64_t completed_ = 0;
};

struct TrainingJob {
  std::string name;
  std::int64_t first_node = 0;
  Scenario scenario;  // the job's own: nodes, policy, iterations
  std::unique_ptr<CommModel> comm;
  JobGraph graph;
};

struct TrafficJob {
  const JobSpec* spec = nullptr;
  std::unique_ptr<CommModel> comm;
  CollectiveCall call;
};

struct RunOutcome {
  std::vector<Duration> iteration;  // per training job run
  std::vector<std::pair<Duration, std::int64_t>> traffic;  // mean time and count, per traffic job
  std::uint64_t events = 0;
};

RunOutcome run(const Platform& platform, const std::vector<TrainingJob*>& training,
               const std::vector<TrafficJob*>& traffic) {
  Engine engine;
  // Every job's collectives on one network of the model's (jobs need a
  // model whose collectives share links: check_jobs), planned by a planner
  // of the shared platform.
  CollectivePlanner planner(platform);
  const NetworkModel& model = training.empty() ? traffic.front()->comm->model()
                                               : training.front()->comm->model();
  const std::unique_ptr<NetworkRun> network = model.open(engine, platform, planner, {});
  std::vector<std::unique_ptr<CollectiveExecutor>> executors;
  std::vector<std::unique_ptr<TrafficGenerator>> generators;
  for (TrafficJob* t : traffic) {
    generators.push_back(std::make_unique<TrafficGenerator>(
        engine, *network, t->call, t->spec->period.value_or(Duration::zero()),
        t->spec->start.value_or(Duration::zero())));
  }
  std::vector<const dag::TaskGraph*> graphs;
  std::vector<ScheduleOptions> options;
  auto remaining = std::make_shared<std::size_t>(training.size());
  for (TrainingJob* j : training) {
    executors.push_back(job_executor(*network, j->graph, *j->comm));
    graphs.push_back(j->graph.graph.get());
    ScheduleOptions o;
    o.executor = executors.back().get();
    o.on_complete = [remaining, &generators] {
      if (--*remaining > 0) return;
      for (auto& g : generators) g->stop();
    };
    options.push_back(std::move(o));
  }
  const std::vector<Schedule> schedules = run_schedules(engine, graphs, options);
  RunOutcome out;
  for (std::size_t i = 0; i < training.size(); ++i) {
    const TrainingJob& j = *training[i];
    const IterationEnds ends =
        iteration_ends(*j.graph.graph, schedules[i], j.scenario.iterations, j.graph.ranks_built);
    out.iteration.push_back(steady_iteration_time(ends.end));
    out.events += schedules[i].events;
  }
  for (const auto& g : generators) out.traffic.emplace_back(g->mean(), g->completed());
  return out;
}

double ratio(Duration shared, Duration alone) {
  return alone > Duration::zero()
             ? static_cast<double>(shared.ns()) / static_cast<double>(alone.ns())
             : 0.0;
}


// The training jobs' estimates together (each folded, as run_jobs builds
// them) against the available memory; the key named is the largest job's,
// as jobs.<i>.nodes or jobs.<i>.iterations for a job of the list.
void check_jobs_fit(const trace::LayerProfile& main_profile, const Scenario& scenario,
                    const std::vector<trace::LayerProfile>& job_profiles) {
  if (job_profiles.size() != scenario.jobs.size()) return;  // run_jobs says so
  // Jobs sharing an engine build their whole graphs before the run.
  ReplayOptions whole;
  whole.whole_graph = true;
  ReplayEstimate total = estimate_replay(main_profile, scenario, whole);
  double largest = total.bytes;
  const JobSpec* largest_job = nullptr;
  for (std::size_t i = 0; i < scenario.jobs.size(); ++i) {
    const JobSpec& spec = scenario.jobs[i];
    if (spec.kind != JobKind::kTraining) continue;
    Scenario own = scenario;
    own.jobs.clear();
    own.nodes = spec.nodes;
    own.iterations = spec.iterations.value_or(scenario.iterations);
    own.overlap_policy = spec.overlap.value_or(scenario.overlap_policy);
    own.perturb.stragglers.clear();
    const ReplayEstimate e = estimate_replay(job_profiles[i], own, whole);
    total.tasks += e.tasks;
    total.events += e.events;
    total.bytes += e.bytes;
    total.seconds += e.seconds;
    if (e.bytes > largest) {
      largest = e.bytes;
      total.key = fmt::format("jobs.{}.{}", i, e.key == "iterations" ? "iterations" : "nodes");
      largest_job = &spec;
    }
  }
  total.shape += fmt::format(", and {} other job(s) on the shared fabric", scenario.jobs.size());
  try {
    check_fits(total, false);
  } catch (const ParameterError& e) {
    if (largest_job == nullptr) throw;
    // A job's keys are located where the job was given.
    throw InputError({largest_job->file, largest_job->line, std::nullopt, e.key()}, e.what());
  }
}

SharedFabricResult run_jobs(const trace::LayerProfile& main_profile, const Scenario& scenario,
                            const std::vector<trace::LayerProfile>& job_profiles,
                            const std::function<void(const std::string&)>& progress) {
  if (job_profiles.size() != scenario.jobs.size()) {
    throw std::logic_error("run_shared_fabric: one profile slot per job");
  }
  const auto t0 = std::chrono::steady_clock::now();
  SharedFabricResult result;
  const std::int64_t job_nodes = job_platform_nodes(scenario);
  result.platform_nodes = job_nodes + separate_server_nodes(scenario);
  auto platform =
      std::make_shared<const Platform>(scenario_platform_spec(scenario), result.platform_nodes);
  const CommSettings settings = scenario_comm_settings(scenario, job_nodes);

  std::vector<TrainingJob> training;
  std::vector<TrafficJob> traffic;
  const auto add_training = [&](std::string name, const trace::LayerProfile& profile,
                                Scenario own, std::int64_t first_node) {
    TrainingJob j;
    j.name = std::move(name);
    j.first_node = first_node;
    own.jobs.clear();
    j.scenario = scenario_for_profile(own, profile);
    try {
      j.comm = std::make_unique<CommModel>(platform, settings, first_node, j.scenario.nodes);
      j.graph = build_job_graph(profile, j.scenario, *j.comm, true);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("training job '{}': {}", j.name, e.what()));
    }
    training.push_back(std::move(j));
  };
  add_training("main", main_profile, scenario, 0);
  for (std::size_t i = 0; i < scenario.jobs.size(); ++i) {
    const JobSpec& spec = scenario.jobs[i];
    if (*spec.kind == JobKind::kTraining) {
      Scenario own = scenario;
      own.nodes = spec.nodes;
      own.overlap_policy = spec.overlap.value_or(scenario.overlap_policy);
      own.iterations = spec.iterations.value_or(scenario.iterations);
      // Straggler ranks and layer patterns name the scenario's own job and
      // profile; the other perturbations apply to every training job.
      own.perturb.stragglers.clear();
      own.perturb.layer_factors.clear();
      add_training(spec.name, job_profiles[i], std::move(own), *spec.first_node);
      continue;
    }
    TrafficJob t;
    t.spec = &spec;
    CommSettings own = settings;
    own.algorithm = spec.algorithm.value_or(CollectiveAlgorithm::kAuto);
    own.library = scenario_library(scenario, own.algorithm);
    own.servers_colocated = true;
    own.cpu_servers = 0;
    try {
      t.comm = std::make_unique<CommModel>(platform, own, *spec.first_node, spec.nodes);
      t.call = t.comm->call(spec.op.value_or(CollectiveOp::kAllReduce),
                            static_cast<double>(*spec.bytes));
      // Checks that the algorithm implements the op, before any run.
      if (t.call.nccl == nullptr) (void)ClosedForm(t.call.op, t.call.algorithm, t.call.shape);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("traffic job '{}': {}", spec.name, e.what()));
    }
    traffic.push_back(std::move(t));
  }

  const auto say = [&progress](const std::string& line) {
    if (progress) progress(line);
  };
  std::vector<TrainingJob*> all_training;
  for (auto& j : training) all_training.push_back(&j);
  std::vector<TrafficJob*> all_traffic;
  for (auto& t : traffic) all_traffic.push_back(&t);
  say(fmt::format("shared fabric: {} training and {} traffic job(s) together on {} nodes",
                  training.size(), traffic.size(), result.platform_nodes));
  const RunOutcome shared = run(*platform, all_training, all_traffic);
  result.events = shared.events;

  std::size_t next_training = 0, next_traffic = 0;
  const auto outcome_of_training = [&](std::size_t k) {
    TrainingJob& j = training[k];
    say(fmt::format("shared fabric: job '{}' alone", j.name));
    const Duration alone = run(*platform, {&j}, {}).iteration.front();
    JobOutcome o;
    o.name = j.name;
    o.kind = JobKind::kTraining;
    o.first_node = j.first_node;
    o.nodes = j.scenario.nodes;
    o.workers = j.comm->workers();
    o.measure = "iteration";
    o.detail = fmt::format("{}, {} iterations", to_string(j.scenario.overlap_policy),
                           j.scenario.iterations);
    o.alone = alone;
    o.shared = shared.iteration[k];
    o.slowdown = ratio(o.shared, o.alone);
    o.count = j.scenario.iterations;
    return o;
  };
  result.jobs.push_back(outcome_of_training(next_training++));
  for (const JobSpec& spec : scenario.jobs) {
    if (*spec.kind == JobKind::kTraining) {
      result.jobs.push_back(outcome_of_training(next_training++));
      continue;
    }
    const std::size_t k = next_traffic++;
    const TrafficJob& t = traffic[k];
    JobOutcome o;
    o.name = spec.name;
    o.kind = JobKind::kTraffic;
    o.first_node = *spec.first_node;
    o.nodes = spec.nodes;
    o.workers = t.comm->workers();
    o.measure = "collective";
    o.detail = fmt::format("{} of {}, {}, every {}", to_string(t.call.op),
                           format_bytes(*spec.bytes), to_string(t.call.algorithm),
                           format_duration(spec.period.value_or(Duration::zero())));
    o.alone = t.comm->isolated_time(t.call.op, t.call.bytes);
    o.shared = shared.traffic[k].first;
    o.count = shared.traffic[k].second;
    o.slowdown = o.count > 0 ? ratio(o.shared, o.alone) : 0.0;
    result.jobs.push_back(std::move(o));
  }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace

SharedFabricResult run_shared_fabric(const trace::LayerProfile& main_profile,
                                     const Scenario& scenario,
                                     const std::vector<trace::LayerProfile>& job_profiles,
                                     const std::function<void(const std::string&)>& progress,
                                     bool allow_large) {
  // A model's complaint about a key's value names where the key was set.
  return with_located_errors(scenario, [&] {
    if (scenario.interference.active()) {
      throw ParameterError("interference.model",
                           "interference is not yet modelled for jobs sharing the fabric: "
                           "replay without jobs, or set interference.model: none");
    }
    if (!allow_large) check_jobs_fit(main_profile, scenario, job_profiles);
    return run_jobs(main_profile, scenario, job_profiles, progress);
  });
}

}  // namespace ssgd::sim
