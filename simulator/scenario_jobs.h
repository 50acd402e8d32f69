#pragma once
// The jobs that share the fabric with a scenario's own training job: how an
// entry of `jobs:` is set key by key, and the checks and defaults that need
// the whole scenario (done once the file and every --set are applied).

#include <cstdint>
#include <string_view>

#include "common/error.h"
#include "simulator/scenario.h"

namespace ssgd::sim {

// Sets `key` of `job` from `value`. Throws ssgd::InputError at `where` for an
// unknown key (with the job keys listed or the nearest suggested) or a bad value.
void set_job_key(JobSpec& job, std::string_view key, std::string_view value,
                 const InputLocation& where);

// Fills the defaults (names, first nodes) and checks the jobs together:
// kind and required keys given, no key of the other kind, unique names,
// training jobs on nodes no other training job uses, the flow network
// model. Throws ssgd::InputError naming the job's file, line and key.
void finish_jobs(Scenario& scenario);

// Nodes the platform needs for the scenario's job and every job in `jobs`.
std::int64_t job_platform_nodes(const Scenario& scenario);

}  // namespace ssgd::sim
