#pragma once
// The links' traffic over a run, as a simulate report and a graph report
// both give it (docs/report.md, `links`): per link kind and the busiest
// links, from ReplayResult::link_kinds and busiest_links.

#include <iosfwd>

#include <nlohmann/json.hpp>

#include "simulator/replay/replay.h"

namespace ssgd::report {

// {"by_kind": [...], "busiest": [...]}.
nlohmann::json links_json(const sim::ReplayResult& r);

// "  link utilisation over the run (<model> model):" and a row per kind,
// then the busiest link; nothing when no link carried traffic. A figure
// above 100% is said with why: under the analytical model each collective
// takes its time alone, and collectives that overlapped on a link put more
// bytes on it than it carries (the flow model shares the link instead).
void print_link_utilisation(const sim::ReplayResult& r, std::ostream& out);

}  // namespace ssgd::report
