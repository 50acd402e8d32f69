#pragma once
// What `ssgd simulate` says of an execution-graph replay
// (simulator/replay/graph_replay.h): the summary on stdout and the --report
// JSON (`"kind": "graph"`, docs/report.md).

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "simulator/replay/graph_replay.h"
#include "simulator/scenario/scenario.h"

namespace ssgd::report {

struct GraphReportContext {
  std::string input;          // the path as given
  std::string provenance;     // the trace's
  std::string scenario_file;  // empty for none
  std::vector<std::string> scenario_sets;  // --set KEY=VALUE over it, as given
};

void print_graph_summary(const sim::GraphReplayResult& result, const sim::Scenario& scenario,
                         const GraphReportContext& ctx, std::ostream& out);

nlohmann::json graph_report_json(const sim::GraphReplayResult& result,
                                 const sim::Scenario& scenario, const GraphReportContext& ctx);

}  // namespace ssgd::report
