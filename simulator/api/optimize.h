#pragma once
// Searches of one scenario key (`ssgd optimize`) as a program asks for them:
// the candidate values listed or spaced from one end to the other, each
// candidate's scenario loaded and checked before anything runs, every one
// replayed, and the result the optimize report is made of
// (simulator/api/optimize_result.h; the report: presentation/report/optimize_report.h). `ssgd optimize` and the Python module
// run this code; each parses its own flags or arguments.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "simulator/api/simulation.h"
#include "simulator/api/optimize_result.h"
#include "simulator/scenario/scenario.h"
#include "simulator/scenario/scenario_schema.h"

namespace ssgd::sim {

// The search as `ssgd optimize` takes it; errors name those flags (--param,
// --values, --from, --to, --points).
struct OptimizeRequest {
  std::string param;   // the scenario key, e.g. policy.bucket_cap
  std::string values;  // comma-separated values to try; or else from and to
  std::string from, to;
  std::int64_t points = 20;  // values from `from` to `to`
  bool linear = false;       // spaced evenly (default: geometrically, when from > 0)
  // More keys searched with it (--also KEY=V1,V2,...): every combination of
  // their values with each of `param`'s is a candidate.
  std::vector<std::string> also;
};

// The scenario as given with `more_sets` ("key=value") added after its own
// --set: the caller's scenario file and sets, loaded as it loads them.
using ScenarioLoader = std::function<Scenario(const std::vector<std::string>& more_sets)>;

// What the search replays, every scenario loaded and checked.
struct OptimizePlan {
  OptimizeRequest request;
  const ScenarioKey* key = nullptr;
  std::vector<std::string> values;  // the candidates, as the report names them
  std::vector<std::vector<std::string>> sets;  // each candidate's `--set` values (KEY=value)
  Scenario base;                    // the scenario as given
  std::vector<Scenario> scenarios;  // one per value
};

// Checks the request and loads the scenario as given, then every candidate,
// before the input is read. Throws InputError: an unknown key (--param, --also,
// or an --also without '=' or values); both
// or neither of the value lists; a bad count of points; an end that is not of
// the key's type, or ends the wrong way round; a bad scenario (as `load` throws
// it); a candidate the key refuses (named by --values, --from or --to).
OptimizePlan plan_optimize(const OptimizeRequest& request, const ScenarioLoader& load);

struct OptimizeOptions {
  std::string scenario_file;                     // for the report; may be empty
  std::vector<std::string> scenario_sets;        // --set KEY=VALUE, as given, for the report
  bool allow_large = false;                      // run settings the estimate says will not fit
  std::function<void(const std::string&)> info;  // progress of long searches
};

// A finished search and its wall time (the candidates' replays).
struct OptimizeRun {
  OptimizeResult result;
  double seconds = 0;
};

// Replays every candidate and the scenario as given, with one GPU's memory
// (simulator/sharding/gpu_memory.h): the best is the shortest iteration of
// the candidates that fit platform.gpu.memory (every one when the GPU's
// memory is unknown; the shortest of all, marked none_fit, when none fits).
// Throws InputError: an
// execution graph as input; a run the estimate says will not fit (unless
// allow_large); and what replay throws.
OptimizeRun run_optimize(const SimulationInput& input, const OptimizePlan& plan,
                         const OptimizeOptions& options);

}  // namespace ssgd::sim
