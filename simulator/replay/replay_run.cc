// The run stage of a replay (replay_stages.h): the task graph on the event
// engine, its collectives as flows under the flow model.
#include <chrono>
#include <memory>

#include "common/logging.h"
#include "simulator/replay/replay_stages.h"

namespace ssgd::sim::replay_stages {
namespace {

// Links inside the nodes that hold ranks 0..ranks-1, and their NIC links.
std::vector<bool> tracked_links(const Platform& platform, std::int64_t ranks) {
  const std::int64_t g = platform.gpus_per_node();
  const std::int64_t nodes =
      ranks <= 0 ? platform.nodes() : std::min(platform.nodes(), (ranks + g - 1) / g);
  std::vector<bool> keep(platform.links().size(), false);
  for (LinkId l = 0; l < keep.size(); ++l) {
    const auto& link = platform.links()[l];
    const auto a = platform.node_of(link.from), b = platform.node_of(link.to);
    keep[l] = (a >= 0 && a < nodes) || (b >= 0 && b < nodes);
  }
  return keep;
}

}  // namespace

bool run(const Build& build, const ReplayOptions& options, Run& run,
         ReplayResult& out) {
  auto log = logger("sim");
  const CommModel& comm = build.comm;
  const Platform& platform = comm.platform();
  ScheduleOptions& sched_opts = run.options;
  if (options.progress) {
    // Once the run has taken two seconds, at most one line every two
    // seconds, with the time left at the pace so far.
    const auto start = std::chrono::steady_clock::now();
    auto last = std::make_shared<std::chrono::steady_clock::time_point>(start);
    sched_opts.progress = [log, last, start](double f) {
      const auto now = std::chrono::steady_clock::now();
      if (now - *last < std::chrono::seconds(2)) return;
      *last = now;
      const double elapsed = std::chrono::duration<double>(now - start).count();
      if (f <= 0) {
        log->info("simulating: 0% of tasks done after {:.0f} s", elapsed);
        return;
      }
      log->info("simulating: {:.0f}% of tasks done, about {:.0f} s left", 100 * f,
                elapsed * (1 - f) / f);
    };
  }
  // Partitions a prioritized network starts together run as one collective.
  sched_opts.batch_duration = [&comm](const dag::Task& merged) {
    return comm.isolated_time(CollectiveOp::kAllReduce, static_cast<double>(merged.bytes));
  };
  const auto t0 = std::chrono::steady_clock::now();
  run.tracked = options.keep_schedule ? tracked_links(platform, options.link_track_ranks)
                                      : std::vector<bool>{};
  if (comm.model().shares_links() && out.workers > 1) {
    run.network = comm.model().open(run.engine, platform, comm.planner(), run.tracked);
    run.executor = job_executor(*run.network, build.job, comm);
    sched_opts.executor = run.executor.get();
  }
  if (build.interference.active && out.workers > 1) {
    run.interference = std::make_unique<InterferenceExecutor>(
        run.engine, run.executor.get(), build.interference, build.job.workers);
    sched_opts.executor = run.interference.get();
    if (out.list_refused.empty()) {
      out.list_refused = fmt::format("interference.model: {} runs as events (tasks' ends move)",
                                     build.interference.demand ? "demand" : "contention");
    }
  }
  const JobGraph& job = build.job;
  // Tried once: a replay that runs again after a refusal runs the events.
  // Not where every rank runs alike without being folded (--no-fold): their
  // tasks end together, and the first collective's predecessors tie.
  const bool alike = !job.ranks_differ && job.ranks_built > 1;
  const bool list = job.source && options.list_schedule && !alike && out.list_refused.empty();
  if (job.source) {
    run.observer = std::make_unique<IterationObserver>(job.ranks_built, out.iterations, job.updates,
                                                       job.rank_weight, /*collectives_may_lag=*/list);
  }
  if (list) {
    std::string refused;
    run.windowed =
        run_windowed_list(run.engine, *job.source, sched_opts, *run.observer, &refused);
    if (!run.windowed) {
      out.list_refused = refused;
      // Its time counts as the run's.
      out.simulate_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      log->debug("list schedule refused ({}): run as events",
                 refused.empty() ? "no reason given" : refused);
      return false;
    }
    out.list_scheduled = true;
  } else if (job.source) {
    run.windowed = run_windowed(run.engine, *job.source, sched_opts, *run.observer);
  }
  if (run.windowed) {
    out.edges = run.windowed->edges;
    out.build_seconds += run.windowed->build_foreground_seconds;
    out.events = run.windowed->events;
    log->debug(
        "windowed DAG{}: at most {} of {} iterations held at once, {:.3f} s building them "
        "({:.3f} s of the run's own: the rest while it went on)",
        out.list_scheduled ? " as a list schedule" : "", run.windowed->peak_iterations_held,
        out.iterations, run.windowed->build_seconds, run.windowed->build_foreground_seconds);
  } else {
    run.schedule = std::make_shared<Schedule>(
        std::move(run_schedules(run.engine, {job.graph.get()}, {sched_opts}).front()));
    out.events = run.schedule->events;
  }
  if (run.network) log->debug("{}", run.network->summary());
  if (run.interference) out.interference_stats = run.interference->stats();
  out.simulate_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (run.windowed) out.simulate_seconds -= run.windowed->build_foreground_seconds;
  return true;
}

}  // namespace ssgd::sim::replay_stages
