#include "simulator/api/simulation.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "common/error.h"
#include "common/work_context.h"
#include "simulator/input/scenario_inputs.h"

namespace ssgd::sim {
namespace {

void tell(const std::function<void(const std::string&)>& f, const std::string& line) {
  if (f) f(line);
}

}  // namespace

SimulationInput load_simulation_input(const std::string& path, bool allow_truncated) {
  return {path, load_replay_input(path, {allow_truncated, true})};
}

void require_profile_input(const SimulationInput& input) {
  if (input.content.kind != InputKind::kGraphTrace) return;
  throw InputError({input.path, std::nullopt, std::nullopt, ""},
                   "is an execution graph (a trace of graph_node events, from ssgd import "
                   "chakra): only `ssgd simulate` replays one; give the profile or trace it "
                   "came from here");
}

void refuse_scenario_jobs(const Scenario& scenario, const std::string& file,
                          const std::vector<std::string>& sets, std::string_view who,
                          std::string_view simulate) {
  if (scenario.jobs.empty()) return;
  // Named where the jobs came from: a --set that adds one, else the file.
  const bool set_jobs = std::any_of(sets.begin(), sets.end(), [](const std::string& s) {
    return s.starts_with("jobs.") || s.starts_with("jobs=");
  });
  throw InputError(
      {set_jobs || file.empty() ? std::string("--set") : file, std::nullopt, std::nullopt, "jobs"},
      fmt::format("{} replays the scenario's own job alone; leave jobs out ({} runs "
                  "them on a shared fabric)",
                  who, simulate));
}

const ReplayResult& Simulation::replayed() const {
  if (graph_replay) return graph_replay->run;
  if (result) return *result;
  throw std::logic_error("Simulation::replayed: nothing was run");
}

Simulation run_simulation(const SimulationInput& input, const Scenario& scenario,
                          const SimulationOptions& options) {
  Simulation s;
  s.input = &input;
  s.scenario_file = options.scenario_file;
  s.scenario_sets = options.scenario_sets;
  const WorkContext context("replaying", input.path);

  if (input.content.kind == InputKind::kGraphTrace) {
    s.graph_replay =
        replay_graph(*input.content.execution_graph, scenario, options.replay, input.path);
    s.scenario = s.graph_replay->scenario;
    return s;
  }
  s.scenario = scenario;
  // A trace of a job of several ranks replays that job unless the scenario
  // names a cluster.
  if (const TracedJob job = scenario_for_traced_job(s.scenario, input.content.profile);
      !job.said.empty()) {
    tell(job.applied ? options.info : options.warn, job.said);
  }
  // The other jobs' inputs are read before anything runs, so a bad one fails fast.
  std::vector<trace::LayerProfile> job_profiles(scenario.jobs.size());
  for (std::size_t i = 0; i < scenario.jobs.size(); ++i) {
    const JobSpec& job = scenario.jobs[i];
    if (!job.profile) continue;
    const ScenarioFile named{fmt::format("jobs.{}.profile", i), *job.profile};
    ReplayInput in = read_named_input(scenario, named, {options.allow_truncated});
    for (const auto& w : in.warnings) tell(options.warn, "job '" + job.name + "': " + w);
    job_profiles[i] = std::move(in.profile);
  }
  s.result = replay(input.content.profile, s.scenario, options.replay);
  if (!scenario.jobs.empty()) {
    const WorkContext jobs("running the scenario's jobs on a shared fabric");
    s.shared = run_shared_fabric(
        input.content.profile, s.scenario, job_profiles,
        [&options](const std::string& line) { tell(options.info, line); },
        options.replay.allow_large);
  }
  if (!s.result->batch_given) {
    tell(options.warn,
         "no batch size in the input or scenario: throughput counts batches "
         "(set workload.batch_per_gpu)");
  }
  return s;
}

}  // namespace ssgd::sim
