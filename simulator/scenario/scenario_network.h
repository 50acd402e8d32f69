#pragma once
// A scenario's communication: the comm model of its training job
// (simulator/network/comm_model.h) on the platform it describes.

#include <cstdint>

#include "simulator/network/comm_model.h"
#include "simulator/scenario/scenario.h"

namespace ssgd::sim {

// The communication of a scenario's training job: its platform (with room for
// parameter servers on nodes of their own), its settings and its calibration
// (read by load_scenario). Throws std::invalid_argument for an unusable
// platform.
CommModel scenario_comm_model(const Scenario& scenario);

// The scenario's network settings, with parameter servers of their own (if
// any) from `first_server_node`, and its calibration.
CommSettings scenario_comm_settings(const Scenario& scenario, std::int64_t first_server_node);
// The collective library `algorithm` runs under: network.library when given,
// else NCCL unless the algorithm is one NCCL does not have.
CollectiveLibrary scenario_library(const Scenario& scenario, CollectiveAlgorithm algorithm);
// Nodes of their own the scenario's parameter servers need (0 when colocated).
std::int64_t separate_server_nodes(const Scenario& scenario);

}  // namespace ssgd::sim
