#pragma once
// The scenario schema: every key a scenario file or --set may name, its
// type, its default as the docs show it, a one-line description, and the
// setter that parses a scalar, checks its range and stores it in a Scenario.
//
// scenario.cc walks YAML and --set flags and looks keys up here; it adds the
// file, line and key path to the reason a setter gives.

#include <span>
#include <string_view>

#include "simulator/scenario/scenario.h"

namespace ssgd::sim {

struct ScenarioKey {
  std::string_view path;          // dotted: "cluster.nodes"
  std::string_view type;          // as the docs and messages name it: "int", "duration", ...
  std::string_view default_text;  // the default as the docs show it
  std::string_view description;   // one line, with the accepted range
  // Parses `value` (a YAML scalar or the text after '=' in --set), checks it
  // and stores it. Throws std::invalid_argument with a reason that does not
  // repeat the key; the caller adds where the value came from.
  void (*set)(Scenario& scenario, std::string_view value);
};

// Every key, grouped by section, in the order the docs list them.
std::span<const ScenarioKey> scenario_keys();

// The key at `path`, or nullptr.
const ScenarioKey* find_scenario_key(std::string_view path);

// The sections that hold keys ("cluster", "network", "policy", "workload",
// "perturb", ...):
// in a file each is a mapping; with --set only their keys can be set.
std::span<const std::string_view> scenario_sections();
bool is_scenario_section(std::string_view path);

// The keys of one entry of `jobs:` (file: a mapping per job; --set:
// jobs.<index>.<key>=value), with the same contract as ScenarioKey.
struct JobKey {
  std::string_view name;          // "nodes"
  std::string_view type;
  std::string_view default_text;
  std::string_view description;
  void (*set)(JobSpec& job, std::string_view value);
};
std::span<const JobKey> job_keys();
const JobKey* find_job_key(std::string_view name);

}  // namespace ssgd::sim
