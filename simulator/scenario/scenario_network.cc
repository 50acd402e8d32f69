#include "simulator/scenario/scenario_network.h"

#include <memory>

#include "simulator/scenario/scenario_jobs.h"
#include "simulator/scenario/scenario_platform.h"

namespace ssgd::sim {

CollectiveLibrary scenario_library(const Scenario& scenario, CollectiveAlgorithm algorithm) {
  if (scenario.library) return *scenario.library;
  return library_runs(CollectiveLibrary::kNccl, algorithm) ? CollectiveLibrary::kNccl
                                                           : CollectiveLibrary::kGeneric;
}

CommSettings scenario_comm_settings(const Scenario& scenario, std::int64_t first_server_node) {
  CommSettings settings;
  settings.model = find_network_model(scenario.network_model);
  settings.algorithm = scenario.algorithm;
  settings.library = scenario_library(scenario, scenario.algorithm);
  settings.nccl.algorithms = scenario.nccl_algo;
  settings.nccl.protocols = scenario.nccl_proto;
  settings.nccl.channels = scenario.channels;
  settings.servers = scenario.servers;
  settings.servers_colocated = scenario.servers_colocated;
  settings.cpu_servers = scenario.cpu_servers;
  settings.first_server_node = first_server_node;
  settings.calibration = scenario_calibration(scenario);
  return settings;
}

std::int64_t separate_server_nodes(const Scenario& scenario) {
  if (scenario.algorithm == CollectiveAlgorithm::kBytePS) return scenario.cpu_servers;
  const bool separate =
      scenario.algorithm == CollectiveAlgorithm::kParameterServer && !scenario.servers_colocated;
  return separate ? scenario.servers : 0;
}

CommModel scenario_comm_model(const Scenario& scenario) {
  const PlatformSpec spec = scenario_platform_spec(scenario);
  // The fabric of the scenario's jobs too (jobs:), as run_shared_fabric
  // builds it: the job's own replay runs on the same nodes and switches as
  // its "alone" on the shared fabric, so that the two agree.
  const std::int64_t nodes = job_platform_nodes(scenario);
  auto platform = std::make_shared<const Platform>(spec, nodes + separate_server_nodes(scenario));
  return CommModel(std::move(platform), scenario_comm_settings(scenario, nodes), 0, scenario.nodes);
}

}  // namespace ssgd::sim
