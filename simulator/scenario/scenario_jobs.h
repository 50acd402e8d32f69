#pragma once
// The jobs that share the fabric with a scenario's own training job: the
// checks and defaults that need the whole scenario, done once the file and
// every --set are applied. scenario.cc reads the entries key by key
// (scenario_schema.h, job_keys()).

#include <cstdint>
#include <string_view>

#include "common/error.h"
#include "simulator/scenario/scenario.h"

namespace ssgd::sim {

// Fills the defaults (names, first nodes) and checks the jobs together:
// kind and required keys given, no key of the other kind, unique names,
// training jobs on nodes no other training job uses, the flow network
// model. Throws ssgd::InputError naming the job's file, line and key.
void finish_jobs(Scenario& scenario);

// Nodes the platform needs for the scenario's job and every job in `jobs`.
std::int64_t job_platform_nodes(const Scenario& scenario);

}  // namespace ssgd::sim
