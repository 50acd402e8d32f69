#pragma once
// GPU-count sweeps (`ssgd scale`, docs/scaling.md) as a program asks for
// them: the counts and the scaling mode checked, the scenario at each count
// and the one-GPU baseline planned, every count replayed, and the result the
// scale report is made of (simulator/api/scale_result.h; the report: presentation/report/scale_report.h). `ssgd scale` and
// the Python module run this code; each parses its own flags or arguments.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "simulator/api/simulation.h"
#include "simulator/api/scale_result.h"
#include "simulator/scenario/scenario.h"

namespace ssgd::sim {

// The sweep's own values, as `ssgd scale` takes them; errors name those
// flags (--gpus, --mode, --global-batch).
struct ScaleRequest {
  std::string gpus;          // GPU counts, comma-separated: "1,2,4,8"
  std::string mode;          // "weak", "strong", or empty: the scenario's scaling.mode
  std::string global_batch;  // strong scaling: the global batch; empty: the scenario's
};

// A request checked: the counts in order and the global batch.
struct ScaleFlags {
  ScaleRequest given;
  std::vector<std::int64_t> counts;
  std::optional<std::int64_t> global_batch;
};

// Checks the request before the scenario is read. Throws InputError naming
// the flag: an empty list, a count that is not from 1 to 2^30, a count listed
// twice, an unknown mode, a global batch that is not from 1 to 2^30.
ScaleFlags check_scale_request(const ScaleRequest& request);

struct ScaleOptions {
  std::string scenario_file;  // for the report; may be empty
  std::vector<std::string> scenario_sets;  // --set KEY=VALUE, as given, for the report
  bool allow_large = false;   // run counts the estimate says will not fit
  std::function<void(const std::string&)> warn;
  std::function<void(const std::string&)> info;  // progress of long sweeps
};

// The scenario as the sweep runs it: `loaded` with the request's mode, which
// overrides scaling.mode (weak sets the scenario's global batch aside, with an
// info line). Throws InputError (--global-batch) when a global batch is given
// and the mode is weak.
Scenario scale_base_scenario(const Scenario& loaded, const ScaleFlags& flags,
                             const ScaleOptions& options);

// A finished sweep and its wall time (the counts' replays, not the baseline's).
struct ScaleRun {
  ScaleResult result;
  double seconds = 0;
};

// Replays `base` (from scale_base_scenario) at every count and on one GPU.
// Throws InputError: an execution graph as input; a count that nodes of the
// scenario cannot make (--gpus); a strong global batch smaller than a count; a
// count the estimate says will not fit (unless allow_large); and what replay
// throws.
ScaleRun run_scale(const SimulationInput& input, const Scenario& base, const ScaleFlags& flags,
                   const ScaleOptions& options);

}  // namespace ssgd::sim
