// ssgd presets: the link presets, overlap policies and scenario keys.
#include <fmt/format.h>

#include <iostream>

#include "common/units.h"
#include "simulator/collective/collective.h"
#include "simulator/platform/gpu_preset.h"
#include "simulator/platform/link_preset.h"
#include "simulator/platform/platform_preset.h"
#include "simulator/policy/overlap_policy.h"
#include "simulator/scenario/scenario.h"
#include "tools/ssgd/commands.h"

namespace ssgd::tools {

void add_presets_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("presets", "List link and platform presets, collective algorithms, overlap policies and scenario keys");
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
    std::cout << "\nPlatform presets (platform.preset; generic is built from network.intra_node "
                 "and network.inter_node):\n";
    for (const auto& p : sim::platform_presets()) {
      const sim::PlatformSpec spec = p.make();
      std::cout << fmt::format("  {:<20} {}\n  {:<20} source: {}\n", p.name, spec.description, "",
                               spec.source);
    }
    std::cout << "\nGPUs (platform.gpu.model; dense peak TFLOP/s, memory GB/s, SMs, boost MHz):\n";
    std::cout << fmt::format("  {:<15} {:>6} {:>6} {:>6} {:>6} {:>6} {:>7} {:>4} {:>5}  {}\n", "name",
                             "fp32", "tf32", "fp16", "bf16", "fp8", "memory", "SMs", "MHz",
                             "description");
    const auto rate = [](double v) { return v > 0 ? fmt::format("{:g}", v) : std::string("-"); };
    for (const auto& g : sim::gpu_presets()) {
      std::cout << fmt::format("  {:<15} {:>6} {:>6} {:>6} {:>6} {:>6} {:>7} {:>4} {:>5}  {}\n", g.name,
                               rate(g.fp32_tflops), rate(g.tf32_tflops), rate(g.fp16_tflops),
                               rate(g.bf16_tflops), rate(g.fp8_tflops), rate(g.memory_gb_per_s),
                               g.sm_count, g.boost_mhz > 0 ? std::to_string(g.boost_mhz) : "-",
                               g.description);
    }
    std::cout << "  sources: simulator/platform/gpu_preset.h\n";
    std::cout << "\nCollective algorithms (network.algorithm): " << sim::collective_algorithm_names()
              << "\n";
    std::cout << "\nOverlap policies (policy.overlap):\n";
    for (const auto& p : sim::overlap_policies()) {
      std::cout << fmt::format("  {:<6} {}\n  {:<6} source: {}\n", p.name, p.description, "", p.source);
    }
    std::cout << "\nScenario keys:\n" << sim::describe_scenario_keys();
  });
}

}  // namespace ssgd::tools
