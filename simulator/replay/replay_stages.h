#pragma once
// The stages of one replay. replay.cc runs them in this order for either
// kind of input: a layer profile (or the trace it came from), replayed as
// the S-SGD template (replay()), and an execution graph, replayed as its own
// tasks (replay_graph(), graph_replay.h):
//   plan     the scenario the input runs under; for a profile also the
//            batch plan, the compute model and one GPU's workload at the
//            planned batch (plan); for a graph, its ranks (plan_graph)
//   (estimate: nothing is built that cannot fit, replay_estimate.h)
//   build    the comm model and the job's task graph: the one place an
//            input becomes a job's tasks (build, build_graph)
//   run      the graph on the event engine (with flows under the flow
//            model): one stage for both
//   measure  the collectives as they ran, the links' traffic, the iteration
//            times, breakdown, critical path and closed forms (measure); a
//            graph's iterations, breakdown and critical path (measure_graph)
// and, for a profile, the experiment around them: repeats and the one-GPU
// baseline. Each stage writes what it finds into the result as it goes.

#include <memory>
#include <optional>
#include <vector>

#include "simulator/engine/engine.h"
#include "simulator/engine/schedule.h"
#include "simulator/network/comm_model.h"
#include "simulator/network/network_model.h"
#include "simulator/replay/graph_replay.h"
#include "simulator/replay/interference_executor.h"
#include "simulator/replay/iteration_observer.h"
#include "simulator/replay/job_graph.h"
#include "simulator/replay/replay.h"
#include "simulator/scaling/batch_plan.h"
#include "simulator/scaling/batch_time_model.h"
#include "simulator/scenario/scenario.h"
#include "simulator/scenario/scenario_scaling.h"
#include "traces/layer_profile.h"

namespace ssgd::sim::replay_stages {

struct Plan {
  Scenario given;  // the request with the input's update time
  BatchPlan batch;
  std::shared_ptr<const BatchTimeModel> batch_model;  // strong scaling only
  BatchWorkload workload;                             // one GPU's profile and scenario
  InterferencePlan interference;  // the scenario's, for the input (its own taken out)
};
Plan plan(const trace::LayerProfile& captured, const Scenario& requested,
          const ReplayOptions& options, ReplayResult& out);

struct Build {
  CommModel comm;
  JobGraph job;
  InterferencePlan interference;  // the scenario's, for this job's profile
};
Build build(const Plan& plan, const ReplayOptions& options, ReplayResult& out);
// The job's task graph alone, as build() makes it with `comm`.
JobGraph build_job(const Plan& plan, const CommModel& comm, const ReplayOptions& options);
// The job's graph made again, the rest of `build` kept: for a run refused
// as a list schedule, whose source is used up.
void rebuild_job(Build& build, const Plan& plan, const ReplayOptions& options);

// The engine and, under a network model where collectives share links, the
// network they ran on: kept for measuring.
struct Run {
  Engine engine;
  std::unique_ptr<NetworkRun> network;  // null where collectives take their time alone
  std::unique_ptr<CollectiveExecutor> executor;
  std::unique_ptr<InterferenceExecutor> interference;  // around `executor`, when on
  ScheduleOptions options;
  std::vector<bool> tracked;  // links shown as tracks (keep_schedule)
  std::shared_ptr<Schedule> schedule;  // the whole graph's
  // A graph built an iteration window at a time: its run and what was
  // observed of its tasks.
  std::unique_ptr<IterationObserver> observer;
  std::optional<WindowedSchedule> windowed;
};
// A windowed run is tried as a list schedule first
// (ReplayOptions::list_schedule): false when it was refused, and then
// the build's source and `run` are used up: rebuild_job and run once more,
// which runs the events.
bool run(const Build& build, const ReplayOptions& options, Run& run,
         ReplayResult& out);

void measure(const Build& build, const Scenario& scenario, Run& run, const ReplayOptions& options,
             ReplayResult& out);

// An execution graph's plan: the graph, and the scenario with its ranks
// (graph_scenario; out.scenario). `file` names the input in messages.
struct GraphPlan {
  const dag::ExecutionGraph& graph;
  const std::string& file;
};
void plan_graph(const GraphPlan& plan, const Scenario& requested, GraphReplayResult& out);
// The graph's own tasks (dag::build_execution_dag): its modelled collectives
// timed by the scenario's comm model and run on its network, the rest at
// their recorded times.
Build build_graph(const GraphPlan& plan, GraphReplayResult& out);
// Its iterations (a graph ssgd wrote: from each iteration's last update; any
// other: one, the whole graph), breakdown, critical path, collectives, and
// the links' traffic as measure() finds a profile's.
void measure_graph(const Build& build, Run& run, const ReplayOptions& options,
                   GraphReplayResult& out);

}  // namespace ssgd::sim::replay_stages
