#include "simulator/scenario_schema.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "common/units.h"
#include "simulator/network/link_preset.h"

namespace ssgd::sim {
namespace {

// Upper bounds are far above any real cluster; they are there so a typo such
// as an extra zero or two fails at load time rather than as an allocation
// failure halfway through a simulation.
constexpr std::int64_t kMaxIterations = 1'000'000;
constexpr std::int64_t kMaxNodes = 1'048'576;
constexpr std::int64_t kMaxGpusPerNode = 1'024;
constexpr std::int64_t kMaxBatchPerGpu = 1'048'576;

std::int64_t parse_int(std::string_view value, std::int64_t lo, std::int64_t hi) {
  std::int64_t v = 0;
  const char* begin = value.data();
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(begin, end, v);
  if (ec == std::errc::result_out_of_range) {
    throw std::invalid_argument(
        fmt::format("must be between {} and {}, got {}", lo, hi, value));
  }
  if (ec != std::errc() || ptr != end || value.empty()) {
    throw std::invalid_argument(fmt::format("expected an integer, got '{}'", value));
  }
  if (v < lo || v > hi) {
    throw std::invalid_argument(fmt::format("must be between {} and {}, got {}", lo, hi, v));
  }
  return v;
}

Duration parse_nonnegative_duration(std::string_view value) {
  const Duration d = parse_duration(value);  // rejects negative values itself
  if (d < Duration::zero()) throw std::invalid_argument("must not be negative");
  // A bound far above any real step keeps simulated time clear of int64 overflow.
  constexpr Duration kMax(1'000'000LL * 1'000'000'000LL);  // 1e6 s
  if (d > kMax) {
    throw std::invalid_argument(fmt::format("must be at most 1000000s, got '{}'", value));
  }
  return d;
}

double parse_positive_rate(std::string_view value) {
  const double r = parse_rate_bytes_per_s(value);
  if (!(r > 0) || !std::isfinite(r)) {
    throw std::invalid_argument(fmt::format("must be greater than zero, got '{}'", value));
  }
  return r;
}

std::string parse_preset(std::string_view value) {
  if (find_link_preset(value) == nullptr) {
    throw std::invalid_argument(
        fmt::format("unknown link preset '{}'; known presets: {}", value, link_preset_names()));
  }
  return std::string(value);
}

OverlapPolicy parse_overlap(std::string_view value) {
  if (value == "bsp") return OverlapPolicy::kBsp;
  if (value == "wfbp") return OverlapPolicy::kWfbp;
  throw std::invalid_argument(
      fmt::format("unknown overlap policy '{}'; expected bsp or wfbp", value));
}

void set_iterations(Scenario& s, std::string_view v) {
  s.iterations = parse_int(v, 1, kMaxIterations);
}
void set_nodes(Scenario& s, std::string_view v) { s.nodes = parse_int(v, 1, kMaxNodes); }
void set_gpus_per_node(Scenario& s, std::string_view v) {
  s.gpus_per_node = parse_int(v, 1, kMaxGpusPerNode);
}
void set_intra_node(Scenario& s, std::string_view v) { s.intra_node.preset = parse_preset(v); }
void set_intra_node_bandwidth(Scenario& s, std::string_view v) {
  s.intra_node.bandwidth_bytes_per_s = parse_positive_rate(v);
}
void set_intra_node_latency(Scenario& s, std::string_view v) {
  s.intra_node.latency = parse_nonnegative_duration(v);
}
void set_inter_node(Scenario& s, std::string_view v) { s.inter_node.preset = parse_preset(v); }
void set_inter_node_bandwidth(Scenario& s, std::string_view v) {
  s.inter_node.bandwidth_bytes_per_s = parse_positive_rate(v);
}
void set_inter_node_latency(Scenario& s, std::string_view v) {
  s.inter_node.latency = parse_nonnegative_duration(v);
}
void set_overlap(Scenario& s, std::string_view v) { s.overlap = parse_overlap(v); }
void set_batch_per_gpu(Scenario& s, std::string_view v) {
  s.batch_per_gpu = parse_int(v, 1, kMaxBatchPerGpu);
}
void set_io_time(Scenario& s, std::string_view v) { s.io_time = parse_nonnegative_duration(v); }
void set_h2d_time(Scenario& s, std::string_view v) { s.h2d_time = parse_nonnegative_duration(v); }
void set_update_time(Scenario& s, std::string_view v) {
  s.update_time = parse_nonnegative_duration(v);
}

// The defaults shown here must match the initialisers in scenario.h;
// scenario_test checks that they do.
constexpr std::array kKeys = {
    ScenarioKey{"iterations", "int", "10", "iterations to simulate (1..1000000)", set_iterations},
    ScenarioKey{"cluster.nodes", "int", "1", "number of nodes (1..1048576)", set_nodes},
    ScenarioKey{"cluster.gpus_per_node", "int", "1", "GPUs in each node, one worker each (1..1024)",
                set_gpus_per_node},
    ScenarioKey{"network.intra_node", "link preset", "pcie3_x16",
                "link between GPUs of one node (see `ssgd presets`)", set_intra_node},
    ScenarioKey{"network.intra_node_bandwidth", "rate", "(preset)",
                "overrides the intra-node preset's bandwidth (> 0)", set_intra_node_bandwidth},
    ScenarioKey{"network.intra_node_latency", "duration", "(preset)",
                "overrides the intra-node preset's latency (>= 0)", set_intra_node_latency},
    ScenarioKey{"network.inter_node", "link preset", "10gbe",
                "link between nodes (see `ssgd presets`)", set_inter_node},
    ScenarioKey{"network.inter_node_bandwidth", "rate", "(preset)",
                "overrides the inter-node preset's bandwidth (> 0)", set_inter_node_bandwidth},
    ScenarioKey{"network.inter_node_latency", "duration", "(preset)",
                "overrides the inter-node preset's latency (>= 0)", set_inter_node_latency},
    ScenarioKey{"policy.overlap", "bsp|wfbp", "wfbp",
                "bsp: communicate after backward; wfbp: each layer's as soon as it is ready",
                set_overlap},
    ScenarioKey{"workload.batch_per_gpu", "int", "(input)",
                "samples per GPU per iteration (1..1048576); default: as captured",
                set_batch_per_gpu},
    ScenarioKey{"workload.io_time", "duration", "0ns", "time to read one batch (>= 0)",
                set_io_time},
    ScenarioKey{"workload.h2d_time", "duration", "0ns",
                "time to copy one batch to the GPU (>= 0)", set_h2d_time},
    ScenarioKey{"workload.update_time", "duration", "0ns",
                "time of one optimizer step (>= 0)", set_update_time},
};

constexpr std::array<std::string_view, 4> kSections = {"cluster", "network", "policy",
                                                       "workload"};

}  // namespace

std::span<const ScenarioKey> scenario_keys() { return kKeys; }

const ScenarioKey* find_scenario_key(std::string_view path) {
  for (const auto& k : kKeys) {
    if (k.path == path) return &k;
  }
  return nullptr;
}

std::span<const std::string_view> scenario_sections() { return kSections; }

bool is_scenario_section(std::string_view path) {
  for (std::string_view s : kSections) {
    if (s == path) return true;
  }
  return false;
}

}  // namespace ssgd::sim
