#pragma once
// What a replay will cost, known before anything is built: its tasks, engine
// events, memory and time, from the scenario's shape alone. replay() refuses
// a run whose memory estimate exceeds what the machine has available (unless
// ReplayOptions::allow_large), naming the estimate and the key that drives
// it, and the commands check every run they will make before the first
// (ssgd scale, every GPU count). The constants are measured, not guessed:
// docs/performance.md ("Estimating a run") says how.

#include <cstdint>
#include <optional>
#include <string>

#include "dag/execution_graph.h"
#include "simulator/replay/replay.h"
#include "simulator/scenario/scenario.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {

struct ReplayEstimate {
  std::int64_t workers = 0;      // ranks the job has
  std::int64_t nodes = 0;        // nodes of the platform (separate servers included)
  std::int64_t ranks_built = 0;  // ranks in the DAG: 1 when identical ranks fold
  bool folded = false;           // ranks_built < workers
  double tasks = 0;              // DAG tasks (an upper bound: one group per layer)
  double events = 0;             // engine events (the flow model's flows included)
  double bytes = 0;              // peak memory of the run
  double seconds = 0;            // wall time on the machine it was measured on
  // The scenario key whose value drives the size the most (cluster.nodes,
  // cluster.gpus_per_node or iterations), for messages.
  std::string key;
  std::string shape;  // "1048576 nodes x 1024 GPUs, 10 iterations, 1 rank built (folded)"
};

// The estimate for `profile` replayed under `scenario` (as replay_stages'
// plan makes it: one GPU's workload at the planned batch) with `options`.
// Builds nothing; cheap.
ReplayEstimate estimate_replay(const trace::LayerProfile& profile, const Scenario& scenario,
                               const ReplayOptions& options);

// The estimate for an execution graph replayed under `scenario` (as
// graph_scenario() makes it): its nodes are the tasks, every rank built.
// `key` is empty: no scenario key drives a graph's size, its input does.
ReplayEstimate estimate_graph_replay(const dag::ExecutionGraph& graph, const Scenario& scenario);

// The memory this machine has available now: MemAvailable in /proc/meminfo,
// else the physical memory; 0 when neither can be read.
std::int64_t available_memory_bytes();

// "this run needs about 900.6 GiB (3240 tasks, ...; 1048576 node(s) x 1024
// GPU(s), ...), more than the 21.7 GiB this machine has available
// (MemAvailable, ...)": the refusal's words, without what to do about it.
// `bytes` as format_bytes writes it ("900.6 GiB").
std::string bytes_text(double bytes);
std::string describe_too_large(const ReplayEstimate& estimate, std::int64_t available);

// Why the run cannot fit (describe_too_large's words), or nothing when its
// memory estimate is within the available memory (or that is unknown).
std::optional<std::string> too_large(const ReplayEstimate& estimate);

// Throws ParameterError(estimate.key, ...) when too_large and `allow_large`
// is false: the estimate, the key that drives it and what to do. An
// estimate with no key (a graph's, whose input drives its size) is refused
// as an InputError naming `input`.
void check_fits(const ReplayEstimate& estimate, bool allow_large, const std::string& input = {});

}  // namespace ssgd::sim
