#pragma once
// Interference between collectives and compute as simulate, scale and
// optimize print it and write it to their JSON reports
// (simulator/perturb/interference.h): the model, the class of factors that
// applied and why, the factors, and what they added to the run.

#include <ostream>

#include <nlohmann/json.hpp>

#include "simulator/perturb/interference.h"
#include "simulator/replay/interference_executor.h"

namespace ssgd::sim {

// {"model": "none"} when off. Without `stats` (scale, optimize: many runs)
// the plan alone.
nlohmann::json interference_json(const InterferencePlan& plan, const InterferenceStats* stats);

// "  interference: ..." lines; nothing when off.
void print_interference(const InterferencePlan& plan, const InterferenceStats* stats,
                        std::ostream& out);

}  // namespace ssgd::sim
