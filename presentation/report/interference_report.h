#pragma once
// Interference between collectives and compute as simulate, scale and
// optimize print it and write it to their JSON reports
// (simulator/perturb/interference.h): the model, the class of factors that
// applied and why, the factors, and what they added to the run.

#include <ostream>

#include <nlohmann/json.hpp>

#include "simulator/perturb/interference.h"
#include "simulator/replay/interference_executor.h"

namespace ssgd::report {

// {"model": "none"} when off. Without `stats` (scale, optimize: many runs)
// the plan alone.
nlohmann::json interference_json(const sim::InterferencePlan& plan,
                                 const sim::InterferenceStats* stats);

// "  interference: ..." lines; nothing when off.
void print_interference(const sim::InterferencePlan& plan, const sim::InterferenceStats* stats,
                        std::ostream& out);

}  // namespace ssgd::report
