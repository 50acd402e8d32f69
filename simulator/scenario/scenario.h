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
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/time.h"
#include "simulator/calibration/network_calibration.h"
#include "simulator/collective/collective.h"
#include "simulator/perturb/gpu_change.h"
#include "simulator/perturb/interference.h"
#include "simulator/perturb/perturbation.h"
#include "simulator/platform/link_preset.h"
#include "simulator/platform/platform_choice.h"
#include "simulator/policy/policy_params.h"
#include "simulator/scaling/scaling_choice.h"
#include "simulator/sharding/shard_settings.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {

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

// The files a scenario names that models use, read once, by load_scenario
// (read_scenario_files): no model reads a file during a replay. Each is kept
// with the path it was read from, so a key that names another file since is
// read again.
struct ScenarioInputs {
  std::shared_ptr<const NetworkCalibration> calibration;      // network.calibration
  std::filesystem::path calibration_path;
  std::shared_ptr<const trace::LayerProfile> second_profile;  // scaling.second_profile
  std::filesystem::path second_profile_path;
};

// Where a key got its value: the file and line (or "--set"), and the value
// as written. Models' ParameterErrors are reported there (located_error).
struct KeyOrigin {
  InputLocation where;  // field: the key's dotted path
  std::string value;
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
  std::string network_model = "analytical";  // key: network.model (network_models())
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kAuto;      // key: network.algorithm
  // key: network.library; unset: nccl, or generic when network.algorithm
  // names an algorithm NCCL does not have (scenario_library).
  std::optional<CollectiveLibrary> library;
  std::string nccl_algo;                     // key: network.nccl_algo (NCCL_ALGO's syntax)
  std::string nccl_proto;                    // key: network.nccl_proto (NCCL_PROTO's syntax)
  std::optional<int> channels;               // key: network.channels (1..64)
  std::int64_t servers = 1;                  // key: network.servers
  bool servers_colocated = true;             // key: network.servers_colocated
  std::int64_t cpu_servers = 0;              // key: network.cpu_servers
  std::optional<std::filesystem::path> calibration;  // key: network.calibration
  OverlapPolicy overlap_policy = OverlapPolicy::kWfbp;  // key: policy.overlap
  PolicyParams policy_params;                           // keys: policy.*
  std::optional<std::int64_t> batch_per_gpu;    // key: workload.batch_per_gpu (>= 1)
  Duration io_time;                          // key: workload.io_time (>= 0): read one batch
  Duration h2d_time;                         // key: workload.h2d_time (>= 0): copy it to the GPU
  Duration update_time;                      // key: workload.update_time (>= 0): optimizer step
  bool update_time_given = false;            // workload.update_time was set (else the input's)
  bool remove_tracer_overhead = false;       // key: workload.tracer_overhead (keep | remove)
  Fp32Matmul fp32_matmul = Fp32Matmul::kCapture;  // key: workload.fp32_matmul
  std::vector<JobSpec> jobs;                 // key: jobs (a sequence; file or --set jobs.<i>.<key>)
  ShardSettings sharding;                     // keys: sharding.* and the step's workload.*
  Perturbation perturb;                      // keys: perturb.* (simulator/perturb/perturbation.h)
  InterferenceSpec interference;             // keys: interference.* (simulator/perturb/interference.h)
  ScalingChoice scaling;                     // keys: scaling.*
  ScenarioInputs files;                      // network.calibration, scaling.second_profile, read
  std::map<std::string, KeyOrigin, std::less<>> origins;  // every key given, by dotted path
  std::optional<std::filesystem::path> file;  // the scenario file load_scenario read, if any

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
// It reads no file the keys name: load_scenario
// (simulator/input/scenario_inputs.h) parses and then reads them, so that
// the scenario's room reads no input format.
Scenario parse_scenario(const std::optional<std::filesystem::path>& file,
                        const std::vector<std::string>& sets);

// Whether the file `named` by a key still has to be read into `data`:
// nothing was read, or what was read came from another path
// (read_scenario_files, simulator/input/scenario_inputs.h).
template <typename T>
bool needs_reading(const std::optional<std::filesystem::path>& named,
                   const std::shared_ptr<const T>& data, const std::filesystem::path& read_from) {
  return named && (!data || read_from != *named);
}

// What the models get of the scenario's files: the calibration and second
// profile read for the paths its keys name now, null when a key names none.
// Throws std::logic_error when a key names a file that was not read (a
// scenario built or changed in code that skipped read_scenario_files).
std::shared_ptr<const NetworkCalibration> scenario_calibration(const Scenario& scenario);
std::shared_ptr<const trace::LayerProfile> scenario_second_profile(const Scenario& scenario);

// A model's ParameterError as the user sees it: an InputError at the file
// and line, or the --set, where the scenario gave the key, naming the key and
// the value given; for a key the scenario did not set (a preset's or a
// default value), at the scenario file (`file`, or "the scenario") naming the
// key.
InputError located_error(const Scenario& scenario, const ParameterError& error);

// Runs `f`, turning a model's ParameterError into located_error's InputError.
template <typename F>
decltype(auto) with_located_errors(const Scenario& scenario, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const ParameterError& e) {
    throw located_error(scenario, e);
  }
}

// The scenario a replay of `profile` runs: workload.update_time is the
// profile's measured update (trace::LayerProfile::update: a trace's work
// after the backward pass, or a CSV's "# update_ns:") unless the scenario
// sets that key; sharding.strategy and sharding.group are the profile's
// "# sharding:" and "# shard_group:" unless the scenario sets them; everything
// else as given.
Scenario scenario_for_profile(const Scenario& scenario, const trace::LayerProfile& profile);

// `ssgd simulate` of a trace of a job of several ranks, whose scenario sets
// neither cluster.nodes nor cluster.gpus_per_node: the cluster becomes the
// trace's job, its world size W on nodes of G GPUs: the platform preset's
// node, or on the generic platform the most GPUs a host of the trace shows
// the traced process, else W over the hosts it records (when they divide
// it), else W. W / G nodes when G divides W; one node of W GPUs when W < G.
// Returns what was done, in words, or why not (a world that does not fill
// whole nodes stays on the scenario's cluster); nothing when the scenario
// or the trace leaves nothing to do. Only simulate's own run: scale,
// optimize and the one-GPU baseline set their clusters themselves.
// The bounds of cluster.nodes and cluster.gpus_per_node.
inline constexpr std::int64_t kMaxClusterNodes = 1'048'576;
inline constexpr std::int64_t kMaxClusterGpusPerNode = 1'024;

struct TracedJob {
  bool applied = false;
  std::string said;
};
TracedJob scenario_for_traced_job(Scenario& scenario, const trace::LayerProfile& profile);

// A file that a scenario names, with the key that names it, as load_scenario
// resolved it (relative to the scenario file).
struct ScenarioFile {
  std::string key;                 // network.calibration, scaling.second_profile, jobs.<i>.profile
  std::filesystem::path path;
};
// Every file the scenario names, in the order above.
std::vector<ScenarioFile> scenario_files(const Scenario& scenario);

// Where the scenario gave `key` (e.g. network.calibration, jobs.0.profile):
// the file and line, or "--set", with the key as the field; the scenario
// file (or "the scenario") when the key was not set.
InputLocation key_location(const Scenario& scenario, std::string_view key);

// Checks that `file` can be read before a reader opens it: a path that does
// not exist (or is too long, or not searchable) is an InputError at the key
// that names it, e.g. "s.yaml:3: field 'network.calibration': cannot read
// 'cal.json': No such file or directory"; so is a FIFO, a folder or a
// device (which would block or never end).
void check_named_file(const Scenario& scenario, const ScenarioFile& file);

// An InputError that a reader threw about `file`, with the key that names
// the file and where it was given added to its reason: "... (the file
// network.calibration names, at s.yaml:3)".
InputError named_file_error(const Scenario& scenario, const ScenarioFile& file,
                            const InputError& error);

// Reads `file` with `read`: check_named_file first, then `read`'s
// InputErrors through named_file_error.
template <typename F>
decltype(auto) read_named_file(const Scenario& scenario, const ScenarioFile& file, F&& read) {
  check_named_file(scenario, file);
  try {
    return std::forward<F>(read)();
  } catch (const InputError& e) {
    throw named_file_error(scenario, file, e);
  }
}

// Every key with its type, default and one-line description, one per line, for
// `ssgd presets` and for the docs.
std::string describe_scenario_keys();

}  // namespace ssgd::sim
