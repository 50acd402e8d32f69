#pragma once
// The layer profile: the smallest input ssgd replays.
//
// CSV, one row per layer in forward order, with a header row:
//   layer,name,forward_ns,backward_ns,grad_bytes[,comm_ns]
// Columns may come in any order; every one of the five is required, comm_ns is
// optional and, when present, must be filled on every row. It is each layer's
// measured gradient communication time, replayed as given instead of being
// modelled. Lines starting with '#' are comments; four of them are read as
// metadata when written "# key: value":
//   # model: ResNet-50
//   # batch_per_gpu: 64
//   # provenance: analytical (FLOPs at 10 TFLOP/s on V100), not measured
//   # update_ns: 1200000
// update_ns is the measured time of one optimizer step (the update: the
// work after the backward pass, e.g. from a trace, walk/trace_profile.h);
// `ssgd simulate` replays it as workload.update_time unless the scenario
// sets that key.
//
// Sharded data parallelism (docs/sharding.md). Four more metadata keys:
//   # grad_dtype: bf16       the dtype grad_bytes counts (fp32, bf16 or fp16;
//                            default fp32): a layer has grad_bytes / size
//                            parameters
//   # sharding: zero3        the strategy the profile was captured under
//                            (none, zero1, zero2, zero3, hsdp), from a trace
//   # shard_group: 8         the ranks one shard spans (hsdp), from a trace
//   # gradient_reduction: reduce   how the sharded step reduced its gradients
//                            (reduce_scatter, reduce: one per owner, all_reduce),
//                            from a trace
//   # micro_batches: 2       the micro-batches a step of the capture ran
//                            (gradient accumulation), from a trace: the rows
//                            hold one micro-batch's times (1 to 1024)
// and two optional columns, each set on every row or on none:
//   unit                     the sharding unit (FSDP's wrapped module) the
//                            layer belongs to: non-decreasing from 0, no gaps
//   activation_bytes         the bytes of activations the layer keeps for its
//                            backward pass, per micro-batch
// `ssgd simulate` takes sharding, shard_group and gradient_reduction as the
// scenario's sharding.strategy, sharding.group and sharding.gradient_reduction,
// micro_batches as workload.accumulation,
// and unit as sharding.units, unless the scenario sets those keys.
//
// Another GPU (simulator/perturb/gpu_change.h). Two more metadata keys:
//   # gpu: NVIDIA H200       the GPU the times were measured on, as the
//                            driver names it (from a trace's device record)
//   # update_split: memory=1200;host=30   the update's time by rate
// and two optional columns, each set on every row or on none:
//   forward_split            forward_ns by the rate that bounds it
//   backward_split           backward_ns likewise (traces/rate_split.h):
//                            "tf32=1200;memory=3400;host=50", adding up to
//                            the row's time

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "common/time.h"
#include "traces/kernel_class.h"
#include "traces/rate_split.h"

namespace ssgd::trace {

// One layer's time is at most 2^42 ns (73 minutes) and a profile's forward,
// backward and communication together at most 2^50 ns (13 days): replays
// multiply and add these over iterations, ranks and what-if factors, and the
// bounds leave that arithmetic room in int64 nanoseconds. Every reader of a
// profile (CSV, B-Caffe log) refuses more, naming the line.
inline constexpr std::int64_t kMaxLayerTimeNs = std::int64_t{1} << 42;
inline constexpr std::int64_t kMaxProfileTimeNs = std::int64_t{1} << 50;
// The most micro-batches a step may run: "# micro_batches:" and
// workload.accumulation.
inline constexpr std::int64_t kMaxMicroBatches = 1024;

struct LayerRow {
  std::int64_t layer = 0;      // the 'layer' column: strictly increasing, forward order
  std::string name;            // free text, unique in the profile
  Duration forward;            // >= 0
  Duration backward;           // >= 0
  std::int64_t grad_bytes = 0; // >= 0; 0 means the layer has no parameters
  std::optional<Duration> comm;  // set on every row or on none
  std::optional<std::int64_t> unit;              // sharding unit; every row or none
  std::optional<std::int64_t> activation_bytes;  // kept for backward; every row or none
  std::optional<RateSplit> forward_split{};   // forward by rate; every row or none
  std::optional<RateSplit> backward_split{};  // backward by rate; set with forward_split
  // From a trace (not in the CSV form): the share of forward_ns and
  // backward_ns that ran beside a collective of the same rank, 0 to 1, so
  // that a replay under an interference model can take out the slowdown the
  // capture already holds (simulator/perturb/interference.h).
  double forward_beside_comm = 0;
  double backward_beside_comm = 0;
  // From a trace, the same way: the bytes a ns the rank's collectives moved
  // through its network stack while that time ran (each collective's bytes
  // through the rank, ssgd::bytes_through_rank, over its measured time, times
  // its overlap), averaged over forward_ns and backward_ns: the CPU the
  // capture's collectives took from its compute under the model demand.
  double forward_beside_comm_rate = 0;
  double backward_beside_comm_rate = 0;
};

// The dtypes a profile's gradient bytes may be counted in, and their sizes.
// nullopt for a name that is none of fp32, bf16, fp16.
std::optional<std::int64_t> dtype_size(std::string_view name);
// The strategies '# sharding:' may name.
bool is_sharding_name(std::string_view name);
// The reductions '# gradient_reduction:' may name.
bool is_gradient_reduction_name(std::string_view name);

// A trace's collectives whose measured times are in comm_ns but that
// grad_bytes do not stand for (walk/trace_profile.h): without a size, or of a
// kind the S-SGD replay does not model as a gradient collective (send,
// receive, all-to-all, unknown). Replayed at their measured times; a replay
// that models collectives from grad_bytes instead (a policy that merges
// gradients) refuses, naming the first of them (simulator/replay/job_graph.h).
struct MeasuredOnlyCollectives {
  std::int64_t without_size = 0;
  std::int64_t other_kind = 0;
  std::int64_t first_record = -1;  // the trace record of the first of them
  std::string first_field;         // "collective.size_bytes" or "collective.op"
  std::string first_what;          // what it lacks, in words
  [[nodiscard]] bool any() const { return without_size + other_kind > 0; }
};

// A trace's kernels by class (traces/kernel_class.h), per steady iteration
// and rank: what the what-if to another GPU scales, for the report. Only a
// profile built from a trace has it (not the CSV form).
struct KernelClassTable {
  std::array<std::int64_t, kKernelClassCount> ns{};       // kernels' own time
  std::array<std::int64_t, kKernelClassCount> kernels{};  // their count
  std::int64_t math_unknown_ns = 0;  // matrix or convolution kernels whose names state no math
  std::int64_t latency_ns = 0;       // memory-bound kernels of one wave (rate 'latency')
  // The kernels in no class, the longest first (at most 10), by short name.
  std::vector<std::pair<std::string, std::int64_t>> unclassified;
  [[nodiscard]] bool empty() const;
};

// A trace captured with a tracing window (ssgd trace --window,
// tracer/core/trace_window.h): the steps it recorded in full and those it
// recorded only the boundaries of, with their median times. Not in the CSV
// form.
struct TracingWindowSteps {
  std::int64_t traced = 0;
  std::int64_t untraced = 0;
  Duration traced_median;
  Duration untraced_median;
};

// The run a trace recorded, as far as a replay sets itself beside it: the
// iterations the profile averages as the trace timed them (their marks'
// spans, or the spans the walker split unmarked work into), their mean
// (none when one has no span) and count; the job's world size (0: not
// recorded); the hosts the trace records and the most GPUs one of them
// shows the traced process (0: none recorded), how its ranks sat on nodes.
struct TracedRun {
  std::optional<Duration> step;
  std::int64_t steps = 0;
  std::int64_t world = 0;
  std::int64_t hosts = 0;
  std::int64_t gpus_per_host = 0;
};

struct LayerProfile {
  std::string source;                    // file the profile came from, for messages
  std::string model;                     // "# model:" metadata, may be empty
  std::optional<std::int64_t> batch_per_gpu;  // "# batch_per_gpu:" metadata
  std::string provenance;                // "# provenance:" metadata, may be empty
  std::optional<Duration> update;        // "# update_ns:" metadata: one optimizer step, measured
  std::string grad_dtype;                // "# grad_dtype:" metadata; empty: fp32
  std::string sharding;                  // "# sharding:" metadata; empty: not recorded
  std::optional<std::int64_t> shard_group;  // "# shard_group:" metadata
  // "# micro_batches:" metadata: the forward and backward passes a step of
  // the capture ran (gradient accumulation); the rows are one's.
  std::optional<std::int64_t> micro_batches;
  std::string gradient_reduction;        // "# gradient_reduction:" metadata; empty: not recorded
  std::string gpu;                       // "# gpu:" metadata: the GPU measured on; empty: unknown
  std::optional<RateSplit> update_split;  // "# update_split:" metadata
  KernelClassTable kernel_classes;       // from a trace; not in the CSV form
  // From a trace whose compute ran on the host alone (CPU operators, no GPU
  // kernel); not in the CSV form. Which interference factors apply
  // (simulator/perturb/interference.h).
  bool host_compute = false;
  double update_beside_comm = 0;  // the update's share beside a collective (LayerRow's)
  double update_beside_comm_rate = 0;  // bytes a ns through the rank meanwhile (LayerRow's)
  std::optional<TracingWindowSteps> tracing_window;  // from a trace with a window
  TracedRun traced;                                  // from a trace; not in the CSV form
  std::vector<LayerRow> layers;
  MeasuredOnlyCollectives measured_only;  // from a trace; not in the CSV form

  [[nodiscard]] bool has_comm() const { return !layers.empty() && layers.front().comm.has_value(); }
  [[nodiscard]] bool has_units() const { return !layers.empty() && layers.front().unit.has_value(); }
  [[nodiscard]] bool has_splits() const {
    return !layers.empty() && layers.front().forward_split.has_value();
  }
  [[nodiscard]] bool has_activations() const {
    return !layers.empty() && layers.front().activation_bytes.has_value();
  }
  // The size of one gradient element in bytes (grad_dtype; 4 when unset).
  [[nodiscard]] std::int64_t grad_element_bytes() const;
  [[nodiscard]] Duration total_forward() const;
  [[nodiscard]] Duration total_backward() const;
  [[nodiscard]] std::int64_t total_grad_bytes() const;

  // `source`, or "the profile" for one made in memory: the file a message
  // about the profile names.
  [[nodiscard]] std::string source_name() const {
    return source.empty() ? std::string("the profile") : source;
  }
};

// Parses CSV text; `source` names it in error messages. Throws
// ssgd::InputError naming the source, line and column on: an empty input, a
// missing or unknown or duplicate column, a row with the wrong number of
// fields, a non-integer, negative or out-of-range number, comm_ns on some rows
// only, a layer index that does not increase, a duplicate name, no rows.
LayerProfile parse_layer_profile_csv(std::string_view text, const std::string& source);

// Reads a file (throws ssgd::InputError if it cannot be read).
LayerProfile read_layer_profile_csv(const std::filesystem::path& path);

// True when `head` (the first bytes of a file) looks like a layer profile: the
// first line that is not blank or a '#' comment is a header holding the
// layer, forward_ns and backward_ns columns.
bool looks_like_layer_profile_csv(std::string_view head);

// Writes the CSV form, metadata comments first; read back it gives an equal profile.
void write_layer_profile_csv(const LayerProfile& profile, std::ostream& out);

}  // namespace ssgd::trace
