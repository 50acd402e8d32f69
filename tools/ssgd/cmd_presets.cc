// ssgd presets: the link presets, overlap policies and scenario keys.
#include <fmt/format.h>

#include <iostream>

#include "common/units.h"
#include "simulator/network/link_preset.h"
#include "simulator/policy/overlap_policy.h"
#include "simulator/scenario.h"
#include "tools/ssgd/commands.h"

namespace ssgd::tools {

void add_presets_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("presets", "List link presets, overlap policies and scenario keys");
  cmd->callback([] {
    std::cout << "Link presets (network.intra_node, network.inter_node):\n";
    std::cout << fmt::format("  {:<11} {:<11} {:>12} {:>10}  {}\n", "name", "class", "bandwidth",
                             "latency", "description");
    for (const auto& p : sim::link_presets()) {
      std::cout << fmt::format("  {:<11} {:<11} {:>12} {:>10}  {}\n", p.name,
                               sim::to_string(p.link_class), format_rate(p.bandwidth_bytes_per_s),
                               format_duration(p.latency), p.description);
      std::cout << fmt::format("  {:<11} source: {}\n", "", p.source);
    }
    std::cout << "\nOverlap policies (policy.overlap):\n";
    for (const auto& p : sim::overlap_policies()) {
      std::cout << fmt::format("  {:<6} {}\n  {:<6} source: {}\n", p.name, p.description, "", p.source);
    }
    std::cout << "\nScenario keys:\n" << sim::describe_scenario_keys();
  });
}

}  // namespace ssgd::tools
