#pragma once
// Jobs sharing one fabric: the scenario's own training job ("main") and the
// jobs under `jobs:` (another training job, or background traffic: one
// collective repeated every period) run together on one platform, one
// engine and one flow-level network, where their flows share links by
// max-min fairness. Each job is also run alone on the same platform, at the
// same place, and the slowdown is shared / alone:
//   training  steady-state iteration time (the mean of iterations after the
//             first), over the job's whole run;
//   traffic   mean time of one collective; it runs from its start until every
//             training job has finished.
// A training job that finishes first leaves the others the fabric to
// themselves for the rest of their run, and its mean includes that part.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/time.h"
#include "simulator/scenario/scenario.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {

struct JobOutcome {
  std::string name;
  JobKind kind = JobKind::kTraining;
  std::int64_t first_node = 0;
  std::int64_t nodes = 0;
  std::int64_t workers = 0;
  std::string measure;       // "iteration" or "collective": what `alone` and `shared` time
  std::string detail;        // training: policy; traffic: op, size, algorithm, period
  Duration alone;
  Duration shared;
  double slowdown = 0;       // shared / alone; 0 when alone is 0
  std::int64_t count = 0;    // iterations, or collectives run in the shared run
};

struct SharedFabricResult {
  std::int64_t platform_nodes = 0;
  std::vector<JobOutcome> jobs;  // main first, then the scenario's jobs in order
  std::uint64_t events = 0;      // of the shared run
  double seconds = 0;            // wall time of every run together
};

// `job_profiles[i]` is jobs[i]'s profile for a training job (ignored for
// traffic). Throws std::invalid_argument for a platform or job that cannot
// run, and DeadlockError if a DAG cannot finish. `progress` (optional) gets
// one line per run. The training jobs together are estimated first
// (replay_estimate.h) and refused, unless `allow_large`, when they cannot fit
// in the available memory: an InputError naming the largest job's key.
SharedFabricResult run_shared_fabric(const trace::LayerProfile& main_profile,
                                     const Scenario& scenario,
                                     const std::vector<trace::LayerProfile>& job_profiles,
                                     const std::function<void(const std::string&)>& progress = {},
                                     bool allow_large = false);

}  // namespace ssgd::sim
