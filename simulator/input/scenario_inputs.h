#pragma once
// A scenario as a command loads it: parsed (simulator/scenario/scenario.h,
// parse_scenario), then the files its keys name read, each by the reader of
// its format, in this room of readers, so that the scenario's own room reads
// none:
//   network.calibration     read_network_calibration (simulator/calibration)
//   scaling.second_profile  load_replay_input (replay_input.h), the loader of
//                           the main input
//   jobs[].profile          read_named_input, by the command that runs jobs
//                           (simulator/api/simulation.cc), with the same loader

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "simulator/input/replay_input.h"
#include "simulator/scenario/scenario.h"

namespace ssgd::sim {

// parse_scenario, then read_scenario_files. Throws what each throws.
Scenario load_scenario(const std::optional<std::filesystem::path>& file,
                       const std::vector<std::string>& sets);

// Reads the files the scenario names for its models (network.calibration,
// scaling.second_profile) into `scenario.files`, each once: load_scenario
// calls it; a scenario built in code that names such a file calls it before
// a replay. Throws ssgd::InputError for a file that cannot be read or used
// (a calibration that does not parse; a second profile without
// '# batch_per_gpu:').
void read_scenario_files(Scenario& scenario);

// An input a scenario's key names (`file`: scaling.second_profile,
// jobs.<i>.profile), read by the main input's loader; its errors name the
// key and where it was given (read_named_file).
ReplayInput read_named_input(const Scenario& scenario, const ScenarioFile& file,
                             const ReplayInputOptions& options = {});

}  // namespace ssgd::sim
