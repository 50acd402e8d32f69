// ssgd simulate INPUT [--scenario FILE.yaml] [--set key.path=value]...
//                     [--report FILE.json] [--timeline FILE.json]
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/logging.h"
#include "simulator/replay.h"
#include "simulator/replay_input.h"
#include "simulator/report.h"
#include "simulator/scenario.h"
#include "simulator/shared_fabric.h"
#include "simulator/timeline.h"
#include "tools/ssgd/commands.h"
#include "tools/ssgd/output_path.h"

namespace ssgd::tools {
namespace {

struct SimulateArgs {
  std::string input;
  std::string scenario;
  std::vector<std::string> sets;
  std::string report;
  std::string timeline;
  std::int64_t timeline_ranks = 16;
  bool allow_truncated = false;
  bool quiet = false;
  bool no_fold = false;
};

void run_simulate(const SimulateArgs& a) {
  auto log = logger("tools");
  // Everything is read and checked before anything is written.
  check_output_path(a.report, "--report");
  check_output_path(a.timeline, "--timeline");
  if (!a.report.empty() && !a.timeline.empty()) {
    std::error_code ec;
    namespace fs = std::filesystem;
    if (fs::weakly_canonical(fs::absolute(a.report), ec) ==
        fs::weakly_canonical(fs::absolute(a.timeline), ec)) {
      throw InputError({a.timeline, std::nullopt, std::nullopt, "--timeline"},
                       "the report and the timeline cannot be the same file");
    }
  }
  const std::optional<std::filesystem::path> scenario_file =
      a.scenario.empty() ? std::nullopt : std::optional<std::filesystem::path>(a.scenario);
  const sim::Scenario scenario = sim::load_scenario(scenario_file, a.sets);
  sim::ReplayInput input = sim::load_replay_input(a.input, {a.allow_truncated});
  for (const auto& w : input.warnings) log->warn("{}", w);

  sim::ReplayOptions options;
  options.keep_schedule = !a.timeline.empty();
  options.link_track_ranks = a.timeline_ranks;
  options.progress = true;
  options.fold_ranks = !a.no_fold;
  // The other jobs' inputs are read before anything runs, so a bad one fails fast.
  std::vector<trace::LayerProfile> job_profiles(scenario.jobs.size());
  for (std::size_t i = 0; i < scenario.jobs.size(); ++i) {
    const sim::JobSpec& job = scenario.jobs[i];
    if (!job.profile) continue;
    sim::ReplayInput in = sim::load_replay_input(*job.profile, {a.allow_truncated});
    for (const auto& w : in.warnings) log->warn("job '{}': {}", job.name, w);
    job_profiles[i] = std::move(in.profile);
  }
  const sim::ReplayResult result = sim::replay(input.profile, scenario, options);
  std::optional<sim::SharedFabricResult> shared;
  if (!scenario.jobs.empty()) {
    shared = sim::run_shared_fabric(input.profile, scenario, job_profiles,
                                    [&log](const std::string& line) { log->info("{}", line); });
  }
  if (!result.batch_given) {
    log->warn("no batch size in the input or scenario: throughput counts batches "
              "(set workload.batch_per_gpu)");
  }

  const sim::ReportContext ctx{a.input, sim::to_string(input.kind), input.profile.model,
                               input.profile.provenance, a.scenario,
                               shared ? &*shared : nullptr};
  // Both outputs are written under temporary names and renamed only once both
  // are complete, so a failure leaves neither behind.
  std::optional<AtomicFile> report_file, timeline_file;
  if (!a.report.empty()) {
    report_file.emplace(a.report);
    report_file->stream() << sim::report_json(result, scenario, ctx).dump(2) << "\n";
  }
  if (!a.timeline.empty()) {
    timeline_file.emplace(a.timeline);
    sim::write_timeline(*result.graph, *result.schedule, {a.timeline_ranks, &result.link_tracks},
                        timeline_file->stream());
  }
  if (report_file) report_file->commit();
  if (timeline_file) timeline_file->commit();
  if (!a.timeline.empty()) {
    const auto shown = a.timeline_ranks <= 0 ? result.workers
                                             : std::min(result.workers, a.timeline_ranks);
    if (shown < result.workers) {
      log->info("timeline holds ranks 0-{} of {} (use --timeline-ranks 0 for all)", shown - 1,
                result.workers);
    }
  }
  if (!a.quiet) sim::print_summary(result, scenario, ctx, std::cout);
  if (!a.report.empty()) log->info("report written to {}", a.report);
  if (!a.timeline.empty()) log->info("timeline written to {} (open it in ui.perfetto.dev)", a.timeline);
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
  cmd->add_option("--scenario", args->scenario, "scenario YAML file (see scenarios/README.md)");
  cmd->add_option("--set", args->sets, "override a scenario key: key.path=value (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--report", args->report, "write the JSON report here");
  cmd->add_option("--timeline", args->timeline,
                  "write a Chrome trace-event JSON timeline here (opens in ui.perfetto.dev)");
  cmd->add_option("--timeline-ranks", args->timeline_ranks,
                  "ranks shown in the timeline (0 = all)")
      ->capture_default_str();
  cmd->add_flag("--allow-truncated", args->allow_truncated,
                "replay the readable prefix of a trace that was cut short");
  cmd->add_flag("--no-fold", args->no_fold,
                "simulate every rank even when they are identical (same results, slower)");
  cmd->add_flag("-q,--quiet", args->quiet, "print no summary");
  cmd->callback([args] { run_simulate(*args); });
}

}  // namespace ssgd::tools
