#pragma once
// The report of one simulation (simulator/api/simulation.h): the JSON of
// `simulate --report` (docs/report.md) and the summary `simulate` prints,
// for a profile's replay (report.h) or an execution graph's
// (graph_report.h).

#include <iosfwd>

#include <nlohmann/json.hpp>

#include "simulator/api/simulation.h"

namespace ssgd::report {

nlohmann::json simulation_report(const sim::Simulation& simulation);

void print_simulation_summary(const sim::Simulation& simulation, std::ostream& out);

}  // namespace ssgd::report
