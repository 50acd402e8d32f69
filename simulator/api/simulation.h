#pragma once
// One simulation as a program asks for it: the input read once
// (load_simulation_input), a scenario, and the run with everything its report
// needs (run_simulation; the report: presentation/report/simulation_report.h). `ssgd simulate` writes its
// outputs from a Simulation; `ssgd sweep` and the Python module run many
// scenarios over one loaded input and keep the report.

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "simulator/input/replay_input.h"
#include "simulator/replay/graph_replay.h"
#include "simulator/replay/replay.h"
#include "simulator/replay/shared_fabric.h"
#include "simulator/scenario/scenario.h"

namespace ssgd::sim {

// An input of `simulate`, read and checked once.
struct SimulationInput {
  std::string path;  // as given, for reports and messages
  ReplayInput content;
};

// Reads INPUT (an ssgd trace, a layer-profile CSV, a B-Caffe log, or a trace of
// an execution graph), recognised by content. Throws InputError naming it.
// Warnings go to input.warnings, for the caller to show.
SimulationInput load_simulation_input(const std::string& path, bool allow_truncated = false);

// Throws the InputError load_replay_input gives an execution graph where a
// profile is needed (`scale`, `optimize`: every use but simulate's).
void require_profile_input(const SimulationInput& input);

// Throws InputError (field `jobs`) when `scenario` has jobs, for a caller that
// replays the scenario's own job alone: "<who> replays the scenario's own job
// alone; leave jobs out (<simulate> runs them on a shared fabric)", named at
// "--set" when a set adds jobs or no file was given, else at `file`.
void refuse_scenario_jobs(const Scenario& scenario, const std::string& file,
                          const std::vector<std::string>& sets, std::string_view who,
                          std::string_view simulate);

struct SimulationOptions {
  std::string scenario_file;  // where the scenario came from, for the report; may be empty
  std::vector<std::string> scenario_sets;  // --set KEY=VALUE over it, as given, for the report
  // Folding, --allow-large, progress and what to keep for a timeline or a
  // simulated trace, as replay() takes them (simulator/replay/replay.h).
  ReplayOptions replay;
  bool allow_truncated = false;  // for the inputs of the scenario's jobs
  // Called with each warning (a job input's, a missing batch size).
  std::function<void(const std::string&)> warn;
  std::function<void(const std::string&)> info;  // progress lines of shared fabrics
};

// A finished simulation: the replay of a profile (with the shared fabric of
// the scenario's jobs, when it has any) or of an execution graph.
struct Simulation {
  const SimulationInput* input = nullptr;
  Scenario scenario;  // as run (for a graph: with the nodes its ranks need)
  std::string scenario_file;
  std::vector<std::string> scenario_sets;
  std::optional<ReplayResult> result;            // a profile's replay
  std::optional<SharedFabricResult> shared;      // with jobs
  std::optional<GraphReplayResult> graph_replay;  // an execution graph's replay

  // The replay's result, whichever kind of input was run: the profile's, or
  // the graph's run (its iterations, breakdown, schedule). Throws
  // std::logic_error before run_simulation.
  [[nodiscard]] const ReplayResult& replayed() const;
};

// Runs `input` under `scenario`. Throws InputError (a located one for a bad
// scenario value), DeadlockError, std::bad_alloc.
Simulation run_simulation(const SimulationInput& input, const Scenario& scenario,
                          const SimulationOptions& options);


}  // namespace ssgd::sim
