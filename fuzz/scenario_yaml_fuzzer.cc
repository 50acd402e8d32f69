// Fuzz target: scenario files and `--set` (simulator/scenario/scenario.h).
//
// Input: the scenario's YAML; from the first line that is exactly "#--set"
// (a YAML comment) on, each line is one `--set key.path=value`. An input
// with no YAML before that line is a scenario from defaults and --set only.
//
// Promise: load_scenario returns a scenario within the ranges its keys
// allow (iterations, nodes, GPUs per node, servers >= 1), or throws an
// InputError naming a file (the scenario, "--set", or a file it names).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "simulator/input/scenario_inputs.h"
#include "simulator/scenario/scenario.h"

using ssgd::fuzz::finding;

namespace {
constexpr std::string_view kSetLine = "#--set\n";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ssgd::fuzz::clear_scratch();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto [yaml, set_lines] = ssgd::fuzz::split_at_marker_line(text, kSetLine);
  std::vector<std::string> sets;
  if (set_lines) {
    std::string_view rest = *set_lines;
    while (!rest.empty()) {
      const std::size_t end = rest.find('\n');
      sets.emplace_back(rest.substr(0, end));
      if (end == std::string_view::npos) break;
      rest.remove_prefix(end + 1);
    }
  }
  std::optional<std::filesystem::path> file;
  if (!yaml.empty()) file = ssgd::fuzz::write_scratch("in.yaml", yaml);

  ssgd::sim::Scenario scenario;
  if (!ssgd::fuzz::accepts("load_scenario", {},
                           [&] { scenario = ssgd::sim::load_scenario(file, sets); })) {
    return 0;
  }
  if (scenario.iterations < 1 || scenario.nodes < 1 || scenario.gpus_per_node < 1 ||
      scenario.servers < 1) {
    finding("load_scenario accepted iterations " + std::to_string(scenario.iterations) +
            ", nodes " + std::to_string(scenario.nodes) + ", gpus_per_node " +
            std::to_string(scenario.gpus_per_node) + ", servers " +
            std::to_string(scenario.servers));
  }
  for (const auto& [key, origin] : scenario.origins) {
    if (origin.where.file.empty()) finding("load_scenario: key " + key + " has no origin file");
  }
  return 0;
}
