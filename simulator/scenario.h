#pragma once
// A what-if scenario: cluster shape, links, overlap policy, workload.
//
// Scenario files are YAML, checked strictly against the schema in
// scenario_schema.cc: an unknown key, a wrong type or a bad unit is an
// ssgd::InputError naming the file, the line and the key's dotted path. Every
// key also works as `--set key.path=value`, applied after the file, in order.
// scenarios/README.md documents every key.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/time.h"

namespace ssgd::sim {

enum class OverlapPolicy { kBsp, kWfbp };
const char* to_string(OverlapPolicy p);

// A link: a preset name plus optional overrides of its numbers.
struct LinkChoice {
  std::string preset;                        // must name a link preset
  std::optional<double> bandwidth_bytes_per_s;  // overrides the preset's, > 0
  std::optional<Duration> latency;              // overrides the preset's, >= 0
};

struct Scenario {
  std::int64_t iterations = 10;              // key: iterations (>= 1)
  std::int64_t nodes = 1;                    // key: cluster.nodes (>= 1)
  std::int64_t gpus_per_node = 1;            // key: cluster.gpus_per_node (>= 1)
  LinkChoice intra_node{"pcie3_x16", {}, {}};  // keys: network.intra_node, network.intra_node_bandwidth,
                                             //       network.intra_node_latency
  LinkChoice inter_node{"10gbe", {}, {}};    // keys: network.inter_node, network.inter_node_bandwidth,
                                             //       network.inter_node_latency
  OverlapPolicy overlap = OverlapPolicy::kWfbp;  // key: policy.overlap (bsp | wfbp)
  std::optional<std::int64_t> batch_per_gpu;    // key: workload.batch_per_gpu (>= 1)
  Duration io_time;                          // key: workload.io_time (>= 0): read one batch
  Duration h2d_time;                         // key: workload.h2d_time (>= 0): copy it to the GPU
  Duration update_time;                      // key: workload.update_time (>= 0): optimizer step

  [[nodiscard]] std::int64_t workers() const { return nodes * gpus_per_node; }
};

// Builds a scenario from the defaults above, then `file` if given, then each
// "key.path=value" in `sets` in order. Throws ssgd::InputError (file, line and
// key path; "--set" as the file for flags) on: a file that cannot be read or
// is not YAML; a top-level document that is not a mapping; an unknown key
// (with the closest known key suggested); a mapping where a scalar belongs or
// the reverse; a value of the wrong type; a missing or unknown unit; a value
// out of range (e.g. zero or negative nodes); an unknown link preset or
// policy; a --set without '='.
Scenario load_scenario(const std::optional<std::filesystem::path>& file,
                       const std::vector<std::string>& sets);

// Every key with its type, default and one-line description, one per line, for
// `ssgd scenario-keys` and for the docs.
std::string describe_scenario_keys();

}  // namespace ssgd::sim
