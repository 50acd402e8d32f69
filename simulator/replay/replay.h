#pragma once
// Replays a layer profile under a scenario: builds the S-SGD DAG for P
// workers and N iterations, runs it on the event engine, and measures it.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dag/critical_path.h"
#include "dag/task_graph.h"
#include "dag/time_breakdown.h"
#include "simulator/engine/schedule.h"
#include "simulator/perturb/gpu_change.h"
#include "simulator/perturb/interference.h"
#include "simulator/perturb/tracer_overhead.h"
#include "simulator/replay/interference_executor.h"
#include "simulator/perturb/repeat_stats.h"
#include "simulator/scaling/batch_time_model.h"
#include "simulator/scenario/scenario.h"
#include "simulator/sharding/gpu_memory.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {

struct ReplayOptions {
  bool keep_schedule = false;    // keep the graph and schedule, for a timeline
  // Build the whole graph before the run even without keep_schedule (else
  // it is built and released an iteration window at a time, with the same
  // results: simulator/engine/windowed_schedule.h).
  bool whole_graph = false;
  bool single_worker_baseline = true;  // also replay on one worker, for scaling efficiency
  bool progress = false;         // log progress on long runs
  // Fold identical ranks into one (see simulator/replay/job_graph.h); not with
  // keep_schedule unless keep_folded_schedule.
  bool fold_ranks = true;
  // With keep_schedule, the kept graph may be folded (one rank standing for
  // all, ReplayResult::ranks_simulated == 1), as the simulated trace allows
  // (presentation/report/simulated_trace.h); a timeline needs every rank.
  bool keep_folded_schedule = false;
  // Identical ranks may fold into one.
  [[nodiscard]] bool may_fold() const {
    return fold_ranks && (!keep_schedule || keep_folded_schedule);
  }
  // Ranks of equal compute factor may fold into one a class (not in a kept
  // schedule, whose ranks stand for themselves).
  [[nodiscard]] bool may_fold_classes() const { return fold_ranks && !keep_schedule; }
  // The graph is built and released an iteration window at a time.
  [[nodiscard]] bool windowed() const { return !keep_schedule && !whole_graph; }
  // A windowed run is computed task by task without the event engine (the
  // flow model's collectives alone on it) where the graph allows it
  // (run_windowed_list(), simulator/engine/windowed_schedule.h: the same
  // figures, to the nanosecond), else run as events; false: always as events.
  bool list_schedule = true;
  std::int64_t link_track_ranks = 16;  // with keep_schedule: link tracks for these ranks' nodes
  // Run even when the estimate (replay_estimate.h) says the run needs more
  // memory than the machine has available; else such a run is refused.
  bool allow_large = false;
  // The batch compute model (simulator/scaling/batch_time_model.h) for
  // strong scaling; made from the scenario (its scaling.second_profile as read)
  // when not given. Callers that replay one input many times make it once.
  std::shared_ptr<const BatchTimeModel> batch_model;
};

// One collective of a steady-state iteration, as nccl-tests would report it:
// algbw = bytes / time, busbw = algbw x the op's bus factor.
struct CollectiveRecord {
  std::int32_t group = 0;            // index in the iteration's comm plan (sharded: its collectives)
  std::string op;                    // sharded: all_reduce, reduce_scatter, all_gather or reduce (one per owner); else empty
  std::string scope;                 // sharded: job, shard_group or replicas; else empty
  std::int64_t bytes = 0;
  std::string algorithm;              // or "measured" (replayed), "none" (nothing to send)
  std::string protocol;              // NCCL's (LL, LL128, Simple); empty when NCCL does not run it
  int channels = 0;                  // NCCL's channels for it; 0 when NCCL does not run it
  Duration time;                     // as simulated (contention included)
  double algbw_bytes_per_s = 0;
  double busbw_bytes_per_s = 0;
  bool replayed = false;             // measured time replayed, not modelled
};

// Traffic on one directed link over the whole run.
struct LinkRecord {
  std::string name;
  std::string kind;                  // pcie, socket, nvlink, nic, fabric
  double capacity_bytes_per_s = 0;
  double bytes = 0;
  double utilisation = 0;            // bytes / (capacity x simulated time)
};

struct LinkKindSummary {
  std::string kind;
  std::int64_t links = 0;            // links of this kind that carried traffic
  double bytes = 0;
  double mean_utilisation = 0;       // over those links
  double max_utilisation = 0;
};

// Intervals in which a link carried traffic, for the timeline's link tracks.
struct LinkTrack {
  std::string name;
  std::vector<std::pair<Time, Time>> busy;
};

struct ReplayResult {
  std::int64_t workers = 0;
  std::int64_t iterations = 0;
  std::int64_t batch_per_gpu = 0;             // each GPU's batch (strong: the largest share)
  bool batch_given = false;                   // false: batch 1 assumed, samples are batches
  // GPU-count scaling (simulator/scaling/batch_plan.h, docs/scaling.md).
  ScalingMode scaling_mode = ScalingMode::kWeak;
  std::int64_t global_batch = 0;              // samples per iteration over all GPUs
  std::int64_t reference_batch = 0;           // the batch the input's times were measured at
  std::string compute_model;                  // strong: how compute follows the batch, in words
  Duration update_time;                       // workload.update_time as replayed: the scenario's,
                                              // else the input's measured update (LayerProfile::update)
  std::vector<Duration> iteration_times;      // per iteration: end of its last update minus the previous
  Duration iteration_time;                    // steady state: mean of iterations after the first
  double throughput_samples_per_s = 0;        // global_batch / iteration_time
  std::optional<Duration> single_worker_iteration_time;
  std::int64_t single_worker_batch = 0;       // the baseline's: weak b, strong the global batch
  double single_worker_throughput_samples_per_s = 0;
  double speedup = 0;                         // weak: P x t(1) / t(P); strong: t(1) / t(P)
  double scaling_efficiency = 0;              // speedup / P
  dag::TimeBreakdown breakdown;               // per iteration, steady state, mean over ranks
  dag::CriticalPath critical_path;            // of the whole run, as scheduled
  std::optional<Duration> closed_form;        // the DESIGN.md closed form; none when ranks differ
  bool ranks_differ = false;                  // stragglers, imbalance or jitter made ranks differ
  // perturb.repeats > 1: each repeat's steady iteration time (repeat k with
  // seed + k; the first is this run's) and their mean and 95% CI.
  std::vector<Duration> repeat_iteration_times;
  std::optional<RepeatStats> repeats;
  Duration comm_per_iteration;                // sum of the collectives' times in one iteration
  std::int64_t collectives_per_iteration = 0;
  bool comm_replayed = false;                 // true when the profile's comm_ns were replayed
  // With comm_replayed: the input's collectives (from a trace) without a
  // size, and of kinds the replay does not model (send, receive, all-to-all,
  // unknown), replayed at their measured durations (walk/trace_profile.h).
  std::int64_t unsized_collectives_replayed = 0;
  std::int64_t other_kind_collectives_replayed = 0;
  // The what-if to another GPU (simulator/perturb/gpu_change.h): whether the
  // input's compute was moved to the scenario's GPU, and by how much.
  GpuChange gpu_change;
  // Interference between collectives and compute (simulator/perturb/interference.h):
  // the plan as applied (inactive: none) and what it added over the run.
  InterferencePlan interference;
  InterferenceStats interference_stats;
  // A capture with a tracing window: its traced and untraced steps, and
  // what workload.tracer_overhead: remove took out (tracer_overhead.h).
  TracerOverhead tracer_overhead;
  // A trace input's own run (trace::LayerProfile::traced): the report sets
  // the replay beside its iterations.
  trace::TracedRun traced;
  trace::KernelClassTable kernel_classes;  // the input's kernels by class (a trace's)
  // Sharded data parallelism (simulator/sharding/, docs/sharding.md): the
  // strategy as replayed, the ranks a shard spans, the units gathered
  // (zero3, hsdp), the micro-batches a step, the dtypes; and one GPU's
  // memory at the peak of a step, with the platform's GPU memory (0:
  // unknown).
  std::string sharding = "none";
  std::int64_t shard_ranks = 1;
  std::int64_t shard_units = 0;
  std::int64_t accumulation = 1;
  std::string precision, reduce_dtype, gather_dtype;
  MemoryEstimate memory;
  std::int64_t gpu_memory = 0;
  std::string network;                        // the network model, in words
  std::string network_model;                  // analytical | flow
  std::vector<CollectiveRecord> collectives;  // of the last iteration, in issue order
  std::vector<LinkKindSummary> link_kinds;    // per link kind, kinds with traffic only
  std::vector<LinkRecord> busiest_links;      // the ten busiest, by utilisation
  std::vector<LinkTrack> link_tracks;         // with keep_schedule
  std::int64_t ranks_simulated = 0;           // ranks in the DAG: 1 when identical ranks were folded,
                                              // the classes when ranks folded by class (job_graph.h)
  std::size_t tasks = 0;
  std::size_t edges = 0;
  std::uint64_t events = 0;
  // Wall time to build the DAG (of a windowed run: the run's own share,
  // building iterations or waiting for one built ahead).
  double build_seconds = 0;
  double simulate_seconds = 0;                // wall time of the event loop (or list schedule)
  // Computed without the event engine (ReplayOptions::list_schedule), and
  // if not, why not (empty when it was not tried).
  bool list_scheduled = false;
  std::string list_refused;
  std::shared_ptr<const dag::TaskGraph> task_graph;  // with keep_schedule
  std::shared_ptr<const Schedule> schedule;     // with keep_schedule
};

// workload.update_time is the profile's measured update when the scenario
// does not set it (scenario_for_profile). Throws std::invalid_argument on an
// unusable scenario or profile and DeadlockError if the DAG cannot finish.
// Before building anything it estimates the run (replay_estimate.h) and
// refuses one that needs more memory than the machine has available, unless
// options.allow_large, with an InputError at the key that drives the size;
// running out of memory all the same is an InputError of the same kind,
// naming what was being built.
ReplayResult replay(const trace::LayerProfile& profile, const Scenario& scenario,
                    const ReplayOptions& options = {});

}  // namespace ssgd::sim
