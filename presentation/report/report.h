#pragma once
// The results of a replay, for people (a short table on stdout) and for
// programs (a JSON report). The JSON keys are a contract; docs/report.md lists them.

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "simulator/replay/replay.h"
#include "simulator/replay/shared_fabric.h"
#include "simulator/scenario/scenario.h"

namespace ssgd::report {

struct ReportContext {
  std::string input;        // path of the input
  std::string input_kind;   // "layer-profile-csv", "ssgd-trace", "bcaffe-log"
  std::string model;        // from the profile's metadata, may be empty
  std::string provenance;   // from the profile's metadata, may be empty
  std::string scenario_file;  // empty when none
  std::vector<std::string> scenario_sets;                  // --set KEY=VALUE over it, as given
  const sim::SharedFabricResult* shared_fabric = nullptr;  // when the scenario has jobs
};

nlohmann::json report_json(const sim::ReplayResult& r, const sim::Scenario& s,
                           const ReportContext& ctx);
void print_summary(const sim::ReplayResult& r, const sim::Scenario& s, const ReportContext& ctx,
                   std::ostream& out);

}  // namespace ssgd::report
