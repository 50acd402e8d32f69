#include "simulator/replay/graph_replay.h"

// What a graph's replay does and does not take from a scenario: the plan
// stage's rules (replay_stages::plan_graph); replay.cc runs the stages.
#include <string_view>

#include <fmt/format.h>

#include "common/error.h"
#include "common/logging.h"
#include "simulator/scenario/scenario_platform.h"

namespace ssgd::sim {
namespace {

// Keys that shape the S-SGD template, which a graph does not use: the
// scenario a graph was exported under can be given again, and they are
// ignored with a warning. Jobs (other traffic on the fabric) are refused.
constexpr std::string_view kTemplateKeys[] = {"iterations", "policy.", "workload.", "perturb.",
                                              "scaling."};

}  // namespace

std::optional<GraphGap> graph_gap(const Scenario& scenario) {
  for (const auto& [key, origin] : scenario.origins) {
    if (key == "jobs" || key.starts_with("jobs.")) {
      return GraphGap{key, "other jobs sharing the fabric",
                      "leave jobs out, or replay the trace the graph came from"};
    }
  }
  if (scenario.interference.active()) {
    return GraphGap{"interference.model", "interference between compute and communication",
                    "set interference.model: none, or replay the trace the graph came from"};
  }
  // Its nodes' times are replayed as recorded: the what-if to another GPU
  // (simulator/perturb/gpu_change.h) works on profiles, not on graphs.
  if (scenario.platform.gpu_model_from_key && scenario.platform.gpu_model != "capture") {
    return GraphGap{"platform.gpu.model", "moving its times to another GPU",
                    "set platform.gpu.model: capture, or replay the trace the graph came from"};
  }
  return std::nullopt;
}

GraphGap graph_trace_gap() { return {"--trace", "a simulated trace", "use --timeline"}; }

std::string graph_gap_message(const GraphGap& gap) {
  return fmt::format(
      "an execution graph replays its own nodes and their recorded times: {} is not yet "
      "replayed for one; {}",
      gap.what, gap.instead);
}

Scenario graph_scenario(const dag::ExecutionGraph& graph, const Scenario& requested) {
  Scenario s = requested;
  return with_located_errors(s, [&]() -> Scenario {
    if (const auto gap = graph_gap(s)) {
      throw ParameterError(gap->asked_by, graph_gap_message(*gap));
    }
    std::vector<std::string> ignored;
    for (const auto& [key, origin] : s.origins) {
      for (const auto prefix : kTemplateKeys) {
        if (key.starts_with(prefix)) ignored.push_back(key);
      }
    }
    if (!ignored.empty()) {
      logger("sim")->warn("an execution graph replays its own tasks and times: {} ignored",
                          fmt::join(ignored, ", "));
    }
    if (const std::string gpu = scenario_gpu_model(s); !gpu.empty()) {
      logger("sim")->warn("an execution graph replays its nodes' recorded times, not on the "
                          "preset's {} (replay the trace it came from to move it to that GPU)",
                          gpu);
    }
    const std::int64_t ranks = graph.world;
    // The nodes the graph's ranks sat on (its hosts, as `ssgd export chakra`
    // records them), unless the scenario names its own.
    if (graph.gpus_per_node > 0 && !s.gpus_per_node_given) {
      if (s.platform.preset != "generic" && graph.gpus_per_node > s.gpus_per_node) {
        throw ParameterError(
            "platform.preset",
            fmt::format("the graph's ranks sat on nodes of {} GPUs, more than a {} node has ({}): "
                        "set cluster.gpus_per_node to replay them on other nodes",
                        graph.gpus_per_node, s.platform.preset, s.gpus_per_node));
      }
      s.gpus_per_node_given = s.gpus_per_node != graph.gpus_per_node;
      s.gpus_per_node = graph.gpus_per_node;
    } else if (graph.gpus_per_node > 0 && s.gpus_per_node != graph.gpus_per_node) {
      logger("sim")->info("the graph's ranks sat on nodes of {} GPUs; replayed on nodes of {} "
                          "(cluster.gpus_per_node)",
                          graph.gpus_per_node, s.gpus_per_node);
    } else if (graph.gpus_per_node == 0 && ranks > 1 && !s.gpus_per_node_given) {
      logger("sim")->warn("the graph does not record how its {} ranks sat on nodes: replayed on "
                          "nodes of {} GPU{} ({}; set cluster.gpus_per_node to the job's)",
                          ranks, s.gpus_per_node, s.gpus_per_node == 1 ? "" : "s",
                          s.platform.preset == "generic" ? "the default"
                                                         : "a " + s.platform.preset + " node");
    }
    if (s.origins.contains("cluster.nodes")) {
      if (s.workers() != ranks) {
        throw ParameterError("cluster.nodes",
                             fmt::format("the graph has {} ranks, but cluster.nodes x "
                                         "cluster.gpus_per_node is {} x {} = {}",
                                         ranks, s.nodes, s.gpus_per_node, s.workers()));
      }
    } else if (ranks % s.gpus_per_node != 0) {
      throw ParameterError(
          "cluster.gpus_per_node",
          fmt::format("the graph's {} ranks do not fill nodes of {} GPUs", ranks, s.gpus_per_node));
    } else {
      s.nodes = ranks / s.gpus_per_node;
    }
    return s;
  });
}

}  // namespace ssgd::sim
