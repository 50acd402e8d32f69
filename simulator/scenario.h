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
#include "simulator/collective/collective.h"
#include "simulator/perturb/perturbation.h"
#include "simulator/platform/platform_spec.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {

enum class NetworkModelKind { kAnalytical, kFlow };
const char* to_string(NetworkModelKind kind);

enum class OverlapPolicy { kBsp, kWfbp, kMgWfbp, kDdp, kHorovod, kSingle, kPriority };
const char* to_string(OverlapPolicy p);

// A link: a preset name plus optional overrides of its numbers.
struct LinkChoice {
  std::string preset;                        // must name a link preset
  std::optional<double> bandwidth_bytes_per_s;  // overrides the preset's, > 0
  std::optional<Duration> latency;              // overrides the preset's, >= 0
};

// The platform: a preset (or "generic", built from network.intra_node and
// network.inter_node), then any key given under platform.* on top.
struct PlatformChoice {
  std::string preset = "generic";            // key: platform.preset
  std::optional<std::string> pcie_link;      // platform.pcie.link (link preset)
  std::optional<double> pcie_bandwidth;      // platform.pcie.bandwidth
  std::optional<Duration> pcie_latency;      // platform.pcie.latency
  std::optional<std::int64_t> pcie_switches; // platform.pcie.switches
  std::optional<std::int64_t> sockets;       // platform.pcie.sockets
  std::optional<std::vector<std::int64_t>> gpu_attach;  // platform.pcie.gpu_attach
  std::optional<NvlinkTopology> nvlink;      // platform.nvlink.topology
  std::optional<double> nvlink_bandwidth;    // platform.nvlink.bandwidth (one link or one port)
  std::optional<Duration> nvlink_latency;    // platform.nvlink.latency
  std::optional<std::vector<NvlinkPair>> nvlink_pairs;  // platform.nvlink.pairs
  std::optional<std::vector<std::int64_t>> ring_order;  // platform.nvlink.ring_order
  std::optional<std::string> nic_link;       // platform.nic.link (link preset)
  std::optional<std::int64_t> nic_count;     // platform.nic.count
  std::optional<double> nic_bandwidth;       // platform.nic.bandwidth
  std::optional<Duration> nic_latency;       // platform.nic.latency
  Transport transport = Transport::kNative;  // platform.nic.transport
  std::optional<FabricKind> fabric;          // platform.fabric.kind
  std::optional<std::int64_t> nodes_per_leaf;     // platform.fabric.nodes_per_leaf
  std::optional<double> oversubscription;         // platform.fabric.oversubscription
  std::optional<bool> rail_optimized;             // platform.fabric.rail_optimized
  std::optional<Duration> switch_latency;         // platform.fabric.switch_latency

  friend bool operator==(const PlatformChoice&, const PlatformChoice&) = default;
};

enum class JobKind { kTraining, kTraffic };
const char* to_string(JobKind kind);

// Another job on the same fabric as the scenario's own training job (which
// is "main", on nodes 0..cluster.nodes-1). Given as a YAML sequence under
// `jobs:`, one mapping per job; keys in scenario_schema.cc (job_keys()).
struct JobSpec {
  std::string name;                          // jobs[].name, default job<index+1>
  std::optional<JobKind> kind;               // jobs[].kind: training | traffic (required)
  std::int64_t nodes = 0;                    // jobs[].nodes (required, >= 1)
  std::optional<std::int64_t> first_node;    // jobs[].first_node
  // training
  std::optional<std::filesystem::path> profile;  // jobs[].profile: what `ssgd simulate` reads
  std::optional<OverlapPolicy> overlap;      // jobs[].policy, default policy.overlap
  std::optional<std::int64_t> iterations;    // jobs[].iterations, default iterations
  // traffic: one collective every `period` (start to start; back to back when
  // it takes longer), from `start` until every training job has finished
  std::optional<CollectiveOp> op;            // jobs[].op, default all_reduce
  std::optional<std::int64_t> bytes;         // jobs[].bytes (required, > 0)
  std::optional<Duration> period;            // jobs[].period, default 0 (back to back)
  std::optional<Duration> start;             // jobs[].start, default 0
  std::optional<CollectiveAlgorithm> algorithm;  // jobs[].algorithm, default auto
  // Where the job was given, for messages: the file (or "--set") and line.
  std::string file;
  std::optional<std::int64_t> line;
};

// The optimizer step: once per iteration after every gradient has arrived
// (global), or per communication group as soon as its gradients have
// (per_layer), so that the next forward of a layer waits only for its own.
enum class UpdateMode { kGlobal, kPerLayer };
const char* to_string(UpdateMode mode);

// The parameters of the overlap policies (simulator/policy/overlap_policy.h).
struct PolicyParams {
  std::int64_t bucket_cap_bytes = 25LL << 20;       // policy.bucket_cap (ddp)
  std::int64_t first_bucket_bytes = 1LL << 20;      // policy.first_bucket (ddp)
  std::int64_t fusion_threshold_bytes = 128LL << 20;  // policy.fusion_threshold (horovod)
  Duration cycle_time = Duration(1'000'000);        // policy.cycle_time (horovod)
  std::optional<Duration> merge_startup;            // policy.merge_startup (mgwfbp's a)
  std::int64_t partition_bytes = 4'000'000;         // policy.partition_size (priority)
  std::int64_t credit_bytes = 16'000'000;           // policy.credit_size (priority)
  std::optional<UpdateMode> update;                 // policy.update; default per policy
  std::int64_t prefetch_depth = 0;                  // policy.prefetch_depth (batches, >= 0)
};

// The update mode a scenario runs with: policy.update, or per_layer under
// priority scheduling (which exists to let the next forward start early) and
// global under every other policy.
UpdateMode effective_update(OverlapPolicy overlap, const PolicyParams& params);

enum class ScalingMode { kWeak, kStrong };
const char* to_string(ScalingMode mode);

// How the per-GPU batch follows the GPU count, and how compute follows the
// per-GPU batch (simulator/scaling/, docs/scaling.md). Keys: scaling.*.
struct ScalingChoice {
  ScalingMode mode = ScalingMode::kWeak;           // scaling.mode
  std::optional<std::int64_t> global_batch;        // scaling.global_batch (strong only)
  std::optional<double> fixed_fraction;            // scaling.fixed_fraction, in [0, 1); default 0
  std::optional<std::filesystem::path> second_profile;  // scaling.second_profile
};

struct Scenario {
  std::int64_t iterations = 10;              // key: iterations (>= 1)
  std::int64_t nodes = 1;                    // key: cluster.nodes (>= 1)
  std::int64_t gpus_per_node = 1;            // key: cluster.gpus_per_node (>= 1)
  LinkChoice intra_node{"pcie3_x16", {}, {}};  // keys: network.intra_node, network.intra_node_bandwidth,
                                             //       network.intra_node_latency
  LinkChoice inter_node{"10gbe", {}, {}};    // keys: network.inter_node, network.inter_node_bandwidth,
                                             //       network.inter_node_latency
  bool gpus_per_node_given = false;          // cluster.gpus_per_node was set
  bool intra_node_given = false;             // a network.intra_node* key was set
  bool inter_node_given = false;             // a network.inter_node* key was set
  PlatformChoice platform;
  NetworkModelKind network_model = NetworkModelKind::kAnalytical;  // key: network.model
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kAuto;      // key: network.algorithm
  std::int64_t servers = 1;                  // key: network.servers
  bool servers_colocated = true;             // key: network.servers_colocated
  std::optional<std::filesystem::path> calibration;  // key: network.calibration
  OverlapPolicy overlap = OverlapPolicy::kWfbp;  // key: policy.overlap
  PolicyParams policy;                       // keys: policy.*
  std::optional<std::int64_t> batch_per_gpu;    // key: workload.batch_per_gpu (>= 1)
  Duration io_time;                          // key: workload.io_time (>= 0): read one batch
  Duration h2d_time;                         // key: workload.h2d_time (>= 0): copy it to the GPU
  Duration update_time;                      // key: workload.update_time (>= 0): optimizer step
  bool update_time_given = false;            // workload.update_time was set (else the input's)
  std::vector<JobSpec> jobs;                 // key: jobs (a sequence; file or --set jobs.<i>.<key>)
  Perturbation perturb;                      // keys: perturb.* (simulator/perturb/perturbation.h)
  ScalingChoice scaling;                     // keys: scaling.*

  [[nodiscard]] std::int64_t workers() const { return nodes * gpus_per_node; }
};

// Builds a scenario from the defaults above, then `file` if given, then each
// "key.path=value" in `sets` in order. Throws ssgd::InputError (file, line and
// key path; "--set" as the file for flags) on: a file that cannot be read or
// is not YAML; a top-level document that is not a mapping; an unknown key
// (with the closest known key suggested); a mapping where a scalar belongs or
// the reverse; a value of the wrong type; a missing or unknown unit; a value
// out of range (e.g. zero or negative nodes); an unknown link preset or
// policy; a --set without '='; jobs that do not fit together (see JobSpec and
// scenarios/README.md); scaling keys that contradict each other or the GPU
// count (simulator/scaling/batch_plan.h, check_scaling_keys).
Scenario load_scenario(const std::optional<std::filesystem::path>& file,
                       const std::vector<std::string>& sets);

// The scenario a replay of `profile` runs: workload.update_time is the
// profile's measured update (trace::LayerProfile::update: a trace's work
// after the backward pass, or a CSV's "# update_ns:") unless the scenario
// sets that key; everything else as given.
Scenario scenario_for_profile(const Scenario& scenario, const trace::LayerProfile& profile);

// A file that a scenario names, with the key that names it, as load_scenario
// resolved it (relative to the scenario file).
struct ScenarioFile {
  std::string key;                 // network.calibration, scaling.second_profile, jobs.<i>.profile
  std::filesystem::path path;
};
// Every file the scenario names, in the order above.
std::vector<ScenarioFile> scenario_files(const Scenario& scenario);

// Every key with its type, default and one-line description, one per line, for
// `ssgd presets` and for the docs.
std::string describe_scenario_keys();

}  // namespace ssgd::sim
