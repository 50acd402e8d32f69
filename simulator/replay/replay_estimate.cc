#include "simulator/replay/replay_estimate.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "common/error.h"
#include "common/units.h"
#include "simulator/perturb/compute_perturbation.h"
#include "simulator/policy/overlap_policy.h"
#include "simulator/policy/policy_params.h"
#include "simulator/scenario/scenario_network.h"

namespace ssgd::sim {
namespace {

// Measured with /usr/bin/time -v (maximum resident set size, wall time) and
// the replay's own task and event counts (--report's "simulation"), on the
// runs docs/performance.md ("Estimating a run") lists, rounded up.
constexpr double kBaseBytes = 16e6;          // the binary, its libraries, the profile
constexpr double kBytesPerTask = 150;        // task, its edges, start/end/release records
// Built an iteration window at a time: a task held (with its edges, waiting
// count and releaser), and a collective as it ran, kept for the report.
constexpr double kBytesPerHeldTask = 70;
constexpr double kBytesPerCollectiveRun = 100;
constexpr double kBytesPerWorker = 900;      // per rank, folded or not: rings, routes
constexpr double kBytesPerNode = 800;        // per node: its vertices and links
constexpr double kBytesPerFlowWorker = 200;  // flow model: a rank's flow in flight
constexpr double kBytesPerPlanGroup = 64;    // a collective of the plan, once
constexpr double kEventsPerTask = 1;         // one completion a task
constexpr double kFlowEventsPerRank = 4;     // flow model: per collective and rank
constexpr double kSecondsPerTask = 0.6e-6;   // building and simulating, per task
// As a list schedule (run_windowed_list(), ReplayOptions::list_schedule):
// 16,384 and 131,072 GPUs with jitter, 0.09 and 0.13 us a task.
constexpr double kSecondsPerListTask = 0.15e-6;
constexpr double kSecondsPerWorker = 23e-6;  // setting up the network, per rank
constexpr double kSecondsPerFlowEvent = 0.9e-6;
// Flow model: each size's collective planned (its routes) and its isolated
// run recorded (CollectivePlanner), per rank; bounded by the planner's
// budgets. 16,384 GPUs, ResNet-50's 20 sizes: 84 MB.
constexpr double kBytesPerFlowSizeWorker = 260;
// A flow network of the whole platform with a collective in flight, per
// rank, for each isolated run beside the first (CommModel::isolated_threads).
constexpr double kBytesPerFlowRunWorker = 1000;
constexpr double kFlowPlannerBytes = 64e6 + 256e6;  // 4M transfers of 16 B, recordings

// 3240, or 2.28e+09 for large counts.
std::string count(double v) {
  return v < 1e6 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v);
}

}  // namespace

ReplayEstimate estimate_replay(const trace::LayerProfile& profile, const Scenario& scenario,
                               const ReplayOptions& options) {
  ReplayEstimate e;
  e.workers = scenario.workers();
  e.nodes = scenario.nodes + separate_server_nodes(scenario);
  const bool ranks_differ = scenario.perturb.varies_by_rank() && e.workers > 1;
  e.folded = options.may_fold() && e.workers > 1 && !ranks_differ;
  e.ranks_built = e.folded ? 1 : e.workers;
  // Ranks that differ by their compute factor alone fold by class
  // (job_graph.h). A straggler the job does not have is the build's error to
  // report: counted here as no folding.
  if (options.may_fold_classes() && ranks_differ &&
      scenario.perturb.ranks_fold_by_class()) {
    try {
      const auto classes =
          static_cast<std::int64_t>(rank_classes(rank_compute_factors(scenario.perturb, e.workers))
                                        .factor.size());
      if (classes < e.workers) {
        e.ranks_built = classes;
        e.folded = true;
      }
    } catch (const std::invalid_argument&) {
    }
  }

  // Tasks per rank and iteration: io, h2d, forward and backward per layer,
  // the updates; then the iteration's collectives (at most one a layer).
  const auto layers = static_cast<double>(profile.layers.size());
  // The plan's groups: one a layer with gradients (or a measured comm time);
  // priority cuts every gradient into policy.partition_size pieces, each a
  // collective of its own. Merging policies make fewer: an upper bound.
  const bool priority = scenario.overlap_policy == OverlapPolicy::kPriority;
  const auto partition = static_cast<double>(scenario.policy_params.partition_bytes);
  double groups = 0;
  std::set<std::int64_t> sizes;  // the gradients' sizes: each collective size once
  for (const auto& row : profile.layers) {
    const auto bytes = static_cast<double>(std::max<std::int64_t>(row.grad_bytes, 0));
    const bool measured = row.comm && *row.comm > Duration::zero();
    if (bytes <= 0 && !measured) continue;
    groups += priority && partition > 0 && bytes > 0 ? std::ceil(bytes / partition) : 1;
    if (bytes > 0) sizes.insert(row.grad_bytes);
  }
  // Per-group updates: one update task per group, else one per iteration.
  const bool per_group =
      effective_update(scenario.overlap_policy, scenario.policy_params) == UpdateMode::kPerLayer;
  const double updates = per_group && groups > 0 ? groups : 1;
  // The collectives are tasks of their own when there is someone to talk to.
  // A sharded step gathers each layer's parameters up to twice and reduces
  // them once (three collectives a layer at most), and every micro-batch
  // runs its own forward and backward (dag/sharded_dag_builder.h).
  const auto micro = static_cast<double>(scenario.sharding.accumulation);
  const double step_groups =
      scenario.sharding.strategy == ShardStrategy::kNone ? groups : 3 * std::max(groups, layers);
  const double collectives = e.workers > 1 || e.folded ? step_groups * micro : 0;
  const auto iterations = static_cast<double>(scenario.iterations);
  const auto workers = static_cast<double>(e.workers);
  e.tasks = iterations * (static_cast<double>(e.ranks_built) * (micro * (2 + 2 * layers) + updates) +
                          collectives);
  e.events = e.tasks * kEventsPerTask;
  // Under the flow model every collective is every rank's flows, folded or not.
  const auto model = find_network_model(scenario.network_model);
  const bool flow = model != nullptr && model->shares_links() && e.workers > 1;
  const double flow_events = flow ? iterations * collectives * kFlowEventsPerRank * workers : 0;
  e.events += flow_events;

  // A windowed run holds the iteration finishing, the one running and
  // those a loader reads ahead (simulator/engine/windowed_schedule.h): at
  // most max(1, d) + 2 with prefetch depth d (2 where every rank meets at a
  // global update); the whole graph holds every iteration.
  const bool windowed = options.windowed();
  const auto depth = static_cast<double>(scenario.policy_params.prefetch_depth);
  const double window = depth == 0 && !per_group ? 2 : std::max(1.0, depth) + 2;
  const double held = windowed ? std::min(iterations, window) : iterations;
  const double task_bytes =
      (windowed ? e.tasks / iterations * held * kBytesPerHeldTask +
                      iterations * collectives * kBytesPerCollectiveRun
                : e.tasks * kBytesPerTask) +
      collectives * kBytesPerPlanGroup;
  // Flow model: the sizes run (a merging policy's are other sums, as many
  // at most as its collectives).
  const double flow_sizes =
      flow ? std::min(collectives, static_cast<double>(std::max<std::size_t>(sizes.size(), 1))) : 0;
  // Their isolated runs' networks beside the first, at once on threads.
  const double more_networks =
      std::max(0.0, std::min(flow_sizes, static_cast<double>(CommModel::isolated_threads())) - 1);
  const double cluster_bytes =
      static_cast<double>(e.nodes) * kBytesPerNode +
      workers * (kBytesPerWorker + (flow ? kBytesPerFlowWorker : 0)) +
      std::min(kFlowPlannerBytes, flow_sizes * workers * kBytesPerFlowSizeWorker) +
      more_networks * workers * kBytesPerFlowRunWorker;
  e.bytes = kBaseBytes + task_bytes + cluster_bytes;
  // A list schedule where it is likely to be taken: a windowed run without
  // a prioritized network, per-group updates or prefetching (which make a
  // rank's tasks wait for their resource).
  // (Not where every rank runs alike unfolded: not tried, replay_run.cc.)
  const bool list = windowed && options.list_schedule && !priority && !per_group &&
                    depth == 0 && (ranks_differ || e.ranks_built == 1);
  // As a list schedule, a flow-model collective replays its size's isolated
  // run: the flows run once a size.
  const double flow_events_run =
      list ? flow_sizes * kFlowEventsPerRank * workers : flow_events;
  e.seconds = e.tasks * (list ? kSecondsPerListTask : kSecondsPerTask) +
              workers * kSecondsPerWorker + flow_events_run * kSecondsPerFlowEvent;

  // The key that drives the largest part.
  const std::string bigger_of_cluster =
      scenario.nodes >= scenario.gpus_per_node ? "cluster.nodes" : "cluster.gpus_per_node";
  // Priority's pieces (a collective and, per group, an update each) drive the
  // size when they outnumber a rank's other tasks.
  if (task_bytes >= cluster_bytes && priority && groups > 2 + 2 * layers) {
    e.key = "policy.partition_size";
  } else if (task_bytes >= cluster_bytes) {
    const auto ranks_factor = static_cast<double>(std::max(scenario.nodes, scenario.gpus_per_node));
    e.key = e.folded || iterations >= ranks_factor ? "iterations" : bigger_of_cluster;
  } else {
    e.key = bigger_of_cluster;
  }
  e.shape = fmt::format(
      "{} node(s) x {} GPU(s), {} iteration(s) of {} layers, {}", scenario.nodes,
      scenario.gpus_per_node, scenario.iterations, profile.layers.size(),
      e.ranks_built == 1 && e.folded ? "1 rank built for all (folded)"
      : e.folded ? fmt::format("{} rank(s) built, one a class of identical ranks (folded)", e.ranks_built)
                 : fmt::format("{} rank(s) built", e.ranks_built));
  return e;
}

std::int64_t available_memory_bytes() {
  // SSGD_AVAILABLE_MEMORY overrides what the machine says (a size: 8GiB).
  if (const char* given = std::getenv("SSGD_AVAILABLE_MEMORY"); given != nullptr && *given) {
    try {
      return parse_bytes(given);
    } catch (const std::exception& e) {
      throw InputError({"environment", std::nullopt, std::nullopt, "SSGD_AVAILABLE_MEMORY"},
                       fmt::format("'{}': {}", given, e.what()));
    }
  }
  std::int64_t available = 0;
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream in(line.substr(13));
      std::int64_t kib = 0;
      if (in >> kib && kib > 0) available = kib * 1024;
    }
  }
  if (available == 0) {
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) available = static_cast<std::int64_t>(pages) * page;
  }
  // In a container, the cgroup's limit less what it uses, when lower.
  std::ifstream max_file("/sys/fs/cgroup/memory.max");
  std::ifstream current_file("/sys/fs/cgroup/memory.current");
  std::int64_t max = 0, current = 0;
  if (max_file >> max && current_file >> current && max > current) {
    available = available > 0 ? std::min(available, max - current) : max - current;
  }
  return available;
}

std::string bytes_text(double bytes) {
  return format_bytes(static_cast<std::int64_t>(std::min(bytes, 9e18)));
}

std::string describe_too_large(const ReplayEstimate& e, std::int64_t available) {
  return fmt::format(
      "this run needs about {} ({} tasks, {} engine events, {} rank(s); {}), more than the {} "
      "this machine has available (MemAvailable, or the cgroup's limit, or "
      "SSGD_AVAILABLE_MEMORY)",
      bytes_text(e.bytes), count(e.tasks), count(e.events), e.workers, e.shape,
      format_bytes(available));
}

ReplayEstimate estimate_graph_replay(const dag::ExecutionGraph& graph, const Scenario& scenario) {
  ReplayEstimate e;
  e.workers = graph.world;
  e.nodes = scenario.nodes + separate_server_nodes(scenario);
  e.ranks_built = graph.world;
  // Every node a task (a collective's nodes on all ranks become one shared
  // task: an upper bound), each with its dependencies.
  e.tasks = static_cast<double>(graph.nodes);
  e.events = e.tasks * kEventsPerTask;
  const auto workers = static_cast<double>(e.workers);
  e.bytes = kBaseBytes + e.tasks * kBytesPerTask + static_cast<double>(e.nodes) * kBytesPerNode +
            workers * kBytesPerWorker;
  e.seconds = e.tasks * kSecondsPerTask + workers * kSecondsPerWorker;
  e.shape = fmt::format("an execution graph of {} nodes over {} ranks", count(e.tasks),
                        e.workers);
  return e;
}

std::optional<std::string> too_large(const ReplayEstimate& e) {
  const std::int64_t available = available_memory_bytes();
  if (available <= 0 || e.bytes <= static_cast<double>(available)) return std::nullopt;
  return describe_too_large(e, available);
}

void check_fits(const ReplayEstimate& e, bool allow_large, const std::string& input) {
  if (allow_large) return;
  const std::optional<std::string> why = too_large(e);
  if (!why) return;
  if (e.key.empty()) {
    throw InputError({input, std::nullopt, std::nullopt, ""},
                     *why + "; give --allow-large to run anyway");
  }
  // Smaller partitions make more pieces; more of anything else makes more.
  const char* direction = e.key == "policy.partition_size" ? "raise" : "lower";
  const bool unfolded_alike =
      !e.folded && e.workers > 1 && e.key != "iterations" && e.key != "policy.partition_size";
  throw ParameterError(
      e.key,
      *why + fmt::format("; {} drives it: {} it{}, or give --allow-large to run anyway", e.key,
                         direction,
                         unfolded_alike ? " (identical ranks fold into one, and ranks of equal "
                                          "compute factor into one a class, for a fraction of the "
                                          "memory, without --no-fold, --timeline, imbalance and "
                                          "jitter)"
                                        : ""));
}

}  // namespace ssgd::sim
