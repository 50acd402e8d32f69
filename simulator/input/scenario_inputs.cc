#include "simulator/input/scenario_inputs.h"

#include <memory>
#include <utility>

#include "common/error.h"
#include "common/input_file.h"
#include "simulator/calibration/network_calibration.h"

namespace ssgd::sim {

Scenario load_scenario(const std::optional<std::filesystem::path>& file,
                       const std::vector<std::string>& sets) {
  Scenario scenario = parse_scenario(file, sets);
  read_scenario_files(scenario);
  return scenario;
}

ReplayInput read_named_input(const Scenario& scenario, const ScenarioFile& file,
                             const ReplayInputOptions& options) {
  return read_named_file(scenario, file, [&] { return load_replay_input(file.path, options); });
}

void read_scenario_files(Scenario& scenario) {
  ScenarioInputs& files = scenario.files;
  // A FIFO or a device named by any key would block or never end: refused
  // first, naming the key. A missing file is refused when it is read
  // (read_named_file): a job's profile only by the command that runs jobs.
  for (const ScenarioFile& f : scenario_files(scenario)) {
    try {
      require_regular_file(f.path, f.key);
    } catch (const InputError& e) {
      throw named_file_error(scenario, f, e);
    }
  }
  if (needs_reading(scenario.calibration, files.calibration, files.calibration_path)) {
    const ScenarioFile named{"network.calibration", *scenario.calibration};
    files.calibration = read_named_file(scenario, named, [&] {
      return std::make_shared<const NetworkCalibration>(read_network_calibration(named.path));
    });
    files.calibration_path = *scenario.calibration;
  }
  const auto& second_profile = scenario.scaling.second_profile;
  if (needs_reading(second_profile, files.second_profile, files.second_profile_path)) {
    const std::filesystem::path& path = *second_profile;
    const ScenarioFile named{"scaling.second_profile", path};
    ReplayInput second = read_named_input(scenario, named);
    if (second.profile.source.empty()) second.profile.source = path.string();
    if (!second.profile.batch_per_gpu) {
      throw named_file_error(
          scenario, named,
          InputError({path.string(), std::nullopt, std::nullopt, "batch_per_gpu"},
                     "scaling.second_profile needs the batch this profile was measured at: add "
                     "a '# batch_per_gpu: N' line"));
    }
    files.second_profile = std::make_shared<const trace::LayerProfile>(std::move(second.profile));
    files.second_profile_path = path;
  }
}

}  // namespace ssgd::sim
