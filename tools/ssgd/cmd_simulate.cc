// ssgd simulate INPUT [--scenario FILE.yaml] [--set key.path=value]...
//                     [--report FILE.json] [--timeline FILE.json[.gz]]
//                     [--trace FILE.ssgdt [--trace-ranks K]] [--allow-truncated]
#include <fmt/format.h>

#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "common/chrome_trace_writer.h"
#include "common/error.h"
#include "common/logging.h"
#include "common/output_target.h"
#include "common/work_context.h"
#include "simulator/api/simulation.h"
#include "simulator/replay/replay.h"
#include "presentation/report/simulated_trace.h"
#include "presentation/report/simulation_report.h"
#include "presentation/report/timeline.h"
#include "simulator/scenario/scenario.h"
#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"

namespace ssgd::tools {
namespace {

struct SimulateArgs {
  std::string input;
  ScenarioOptions scenario;
  OutputFile report;
  OutputFile timeline;
  std::int64_t timeline_ranks = 16;
  OutputFile trace;
  std::int64_t trace_ranks = 0;
  bool allow_truncated = false;
  bool quiet = false;
  bool no_fold = false;
  bool events = false;
  bool allow_large = false;
};

// "analytical: simulated by ssgd from IN under 2 node(s) x 4 GPU(s), policy wfbp, ..."
std::string simulated_provenance(const SimulateArgs& a, const sim::Scenario& scenario,
                                 const sim::ReplayResult& result) {
  std::string s = fmt::format(
      "analytical: simulated by ssgd from {} under {} node(s) x {} GPU(s), policy {}, {}, {} "
      "iteration(s)",
      a.input, scenario.nodes, scenario.gpus_per_node, sim::to_string(scenario.overlap_policy),
      result.network, scenario.iterations);
  if (!a.scenario.file.empty()) s += ", scenario " + a.scenario.file;
  for (const auto& set : a.scenario.sets) s += ", --set " + set;
  return s;
}

// Writes --report (`report`, made only when it is asked for) and --timeline
// (the tasks of `result` as its schedule ran them) under temporary names,
// and renames both into place once both are complete, adding each renamed
// path to `committed`. A write that fails (a full disk) names its output;
// the caller removes what `committed` holds (remove_all) when a later step
// fails, so a failure leaves none behind.
void write_report_and_timeline(const SimulateArgs& a, const std::function<nlohmann::json()>& report,
                               const sim::ReplayResult& result,
                               std::vector<std::string>& committed) {
  std::optional<AtomicFile> report_file;
  std::optional<ChromeTraceFile> timeline_file;
  if (a.report.given()) {
    write_output(a.report, [&] {
      const WorkContext writing("writing the report", a.report.path);
      report_file.emplace(a.report.path);
      report_file->stream() << json_report_text(report());
      // Written through (a FIFO, /dev/stdout): nothing to take back, and its
      // reader sees the end before the next output opens (a reader of both
      // FIFOs in turn would otherwise wait for this one's end forever).
      if (report_file->writes_through()) report_file->commit();
    });
  }
  if (a.timeline.given()) {
    write_output(a.timeline, [&] {
      const WorkContext writing("writing the timeline", a.timeline.path);
      timeline_file.emplace(a.timeline.path);
      report::write_timeline(*result.task_graph, *result.schedule,
                             {a.timeline_ranks, &result.link_tracks, result.workers},
                             timeline_file->writer());
    });
  }
  if (report_file) {
    write_output(a.report, [&] { report_file->commit(); });
    committed.push_back(a.report.path);
  }
  if (timeline_file) {
    write_output(a.timeline, [&] { timeline_file->commit(); });
    committed.push_back(a.timeline.path);
  }
}

// Only a regular file is removed (the file a link leads to, not the link):
// an output written through (a FIFO, /dev/null, /dev/stdout) was never
// made by this run and is never removed.
void remove_all(const std::vector<std::string>& paths) {
  std::error_code ec;
  for (const std::string& path : paths) {
    const OutputTarget target = output_target(path);
    if (target.kind == OutputKind::kFile && std::filesystem::is_regular_file(target.path, ec)) {
      std::filesystem::remove(target.path, ec);
    }
  }
}

// What was written, on stderr.
void log_written(const SimulateArgs& a) {
  auto log = logger("tools");
  if (a.report.given()) log->info("report written to {}", a.report.path);
  if (a.timeline.given()) {
    log->info("timeline written to {} (open it in ui.perfetto.dev)", a.timeline.path);
  }
  if (a.trace.given()) log->info("simulated trace written to {}", a.trace.path);
}

void run_simulate(const SimulateArgs& a) {
  const WorkContext context("simulating", a.input);
  auto log = logger("tools");
  // Everything is read and checked before anything is written.
  check_outputs({&a.report, &a.timeline, &a.trace}, {a.input, a.scenario.file});
  check_input(a.input, "INPUT");
  for (const auto& [flag, ranks] : {std::pair{"--trace-ranks", a.trace_ranks},
                                    std::pair{"--timeline-ranks", a.timeline_ranks}}) {
    if (ranks < 0) {
      throw flag_error(flag, std::to_string(ranks),
                       "expected a rank count of at least 1, or 0 for all");
    }
  }
  const sim::Scenario scenario = load_scenario(a.scenario);
  const sim::SimulationInput input = sim::load_simulation_input(a.input, a.allow_truncated);
  for (const auto& w : input.content.warnings) log->warn("{}", w);
  const bool graph = input.content.kind == sim::InputKind::kGraphTrace;
  // What a graph's replay does not do yet (simulator/replay/graph_replay.h):
  // the flag here; the scenario's keys where it gave them, by graph_scenario
  // before anything runs.
  if (graph && a.trace.given()) {
    const sim::GraphGap gap = sim::graph_trace_gap();
    throw flag_error(gap.asked_by, a.trace.path, sim::graph_gap_message(gap));
  }

  sim::SimulationOptions options;
  options.scenario_file = a.scenario.file;
  options.scenario_sets = a.scenario.sets;
  options.replay.keep_schedule = a.timeline.given() || a.trace.given();
  // A simulated trace can be written from a folded run; a timeline cannot.
  options.replay.keep_folded_schedule = !a.timeline.given();
  options.replay.link_track_ranks = a.timeline_ranks;
  options.replay.progress = true;
  options.replay.fold_ranks = !a.no_fold;
  options.replay.list_schedule = !a.events;
  options.replay.allow_large = a.allow_large;
  options.allow_truncated = a.allow_truncated;
  options.warn = [&log](const std::string& line) { log->warn("{}", line); };
  options.info = [&log](const std::string& line) { log->info("{}", line); };
  const sim::Simulation simulation = sim::run_simulation(input, scenario, options);
  const sim::ReplayResult& result = simulation.replayed();

  // The outputs are written under temporary names and renamed only once all
  // are complete (the trace renames itself when it is), so a failure leaves
  // none behind: those renamed before it are removed again.
  std::vector<std::string> committed;
  try {
    write_report_and_timeline(
        a, [&] { return report::simulation_report(simulation); }, result, committed);
    if (a.trace.given()) {
      report::SimulatedTraceOptions trace_options;
      trace_options.max_ranks = a.trace_ranks;
      // The scenario as run (a trace's job where the scenario named no cluster).
      trace_options.gpus_per_node = simulation.scenario.gpus_per_node;
      trace_options.framework = input.content.profile.model;
      trace_options.provenance = simulated_provenance(a, simulation.scenario, result);
      write_output(a.trace, [&] {
        const WorkContext writing("writing the simulated trace", a.trace.path);
        report::write_simulated_trace(result, trace_options, a.trace.path);
      });
    }
  } catch (...) {
    remove_all(committed);
    throw;
  }
  if (a.timeline.given()) {
    const auto shown = a.timeline_ranks <= 0 ? result.workers
                                             : std::min(result.workers, a.timeline_ranks);
    if (shown < result.workers) {
      log->info("timeline holds ranks 0-{} of {} (use --timeline-ranks 0 for all)", shown - 1,
                result.workers);
    }
  }
  if (!a.quiet) report::print_simulation_summary(simulation, std::cout);
  log_written(a);
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  auto* cmd = app.add_subcommand(
      "simulate",
      "Replay a trace, a layer-profile CSV or a B-Caffe log under a what-if scenario");
  cmd->add_option("INPUT", args->input,
                  "ssgd trace (.ssgdt), layer-profile CSV or B-Caffe log, recognised by content")
      ->required();
  add_scenario_options(*cmd, args->scenario, ScenarioJobs::kRun);
  add_output_option(*cmd, args->report, "--report", "write the JSON report here");
  add_output_option(*cmd, args->timeline, "--timeline",
                    "write a Chrome trace-event JSON timeline here (opens in ui.perfetto.dev); "
                    "gzip-compressed when the name ends in .gz");
  add_output_option(*cmd, args->trace, "--trace",
                    "write the simulated run as an ssgd trace here (ClockDomain SIMULATED), for "
                    "`ssgd export perfetto` and `ssgd diff`",
                    {"--trace-out"});
  cmd->add_option("--trace-ranks", args->trace_ranks, "ranks written to --trace (0 = all)")
      ->capture_default_str();
  cmd->add_option("--timeline-ranks", args->timeline_ranks,
                  "ranks shown in the timeline (0 = all)")
      ->capture_default_str();
  add_allow_truncated_flag(*cmd, args->allow_truncated);
  cmd->add_flag("--no-fold", args->no_fold,
                "simulate every rank even when they are identical (same results, slower)");
  cmd->add_flag("--events", args->events,
                "run every task as events on the engine, even where the graph can be computed "
                "task by task without it (same results, slower)");
  add_allow_large_flag(*cmd, args->allow_large);
  cmd->add_flag("-q,--quiet", args->quiet, "print no summary");
  cmd->callback([args] { run_simulate(*args); });
}

}  // namespace ssgd::tools
