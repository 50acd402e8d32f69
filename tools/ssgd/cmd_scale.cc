// ssgd scale INPUT --gpus LIST [--mode weak|strong] [--global-batch N]
//                  [--scenario FILE.yaml] [--set key.path=value]... [--report FILE.json]
//                  [--allow-truncated]
//
// Replays the scenario at each GPU count of LIST and prints one row per
// count: GPUs, nodes, per-GPU batch, global batch, iteration time,
// samples/s, and speedup and scaling efficiency against one GPU (weak or
// strong scaling, docs/scaling.md). A count of G GPUs runs on G /
// gpus_per_node whole nodes; fewer GPUs than one node holds run on one node
// of G GPUs (generic platform only); one GPU is the baseline itself.

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/logging.h"
#include "common/units.h"
#include "common/work_context.h"
#include "simulator/api/scale.h"
#include "simulator/input/replay_input.h"
#include "presentation/report/gpu_report.h"
#include "presentation/report/interference_report.h"
#include "presentation/report/scale_report.h"
#include "simulator/scaling/scaling_table.h"
#include "simulator/scenario/scenario.h"
#include "simulator/sharding/gpu_memory.h"
#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"

namespace ssgd::tools {
namespace {

struct ScaleArgs {
  std::string input;
  std::string gpus;
  std::string mode;
  std::string global_batch;
  ScenarioOptions scenario;
  OutputFile report;
  bool allow_truncated = false;
  bool allow_large = false;
};

void print_sweep(const sim::ScaleResult& r, double seconds, std::ostream& out) {
  const std::string model = r.model.empty() ? r.input : r.model;
  if (r.global_batch) {
    out << fmt::format("ssgd scale: {}, strong scaling of a global batch of {} samples\n", model,
                       *r.global_batch);
    out << fmt::format("  compute model: {}\n", r.compute_model);
  } else {
    out << fmt::format("ssgd scale: {}, weak scaling at {} {} per GPU\n", model, r.reference_batch,
                       r.batch_given ? "samples" : "batch (no batch size given)");
  }
  out << fmt::format(
      "  policy {}, {} iterations, {} GPU(s) per node; speedup and efficiency "
      "against 1 GPU at batch {} ({})\n\n",
      sim::to_string(r.overlap), r.iterations, r.gpus_per_node, r.single_gpu.global_batch,
      format_duration(r.single_gpu.iteration_time));
  if (r.gpu_change.applied || !r.gpu_change.notes.empty()) {
    report::print_gpu_change(r.gpu_change, r.kernel_classes, out);
    out << "\n";
  }
  if (r.interference.active) {
    report::print_interference(r.interference, nullptr, out);
    out << "\n";
  }
  std::vector<sim::ScalingRow> table;
  for (const auto& row : r.rows) table.push_back(row.row);
  sim::print_scaling_table(table, "  ", out);
  bool above = false;
  for (const auto& row : r.rows) above = above || row.row.efficiency.value_or(0) > 1;
  if (above && r.sharding != "none") {
    out << fmt::format("  efficiency above 100%: under {} each GPU's optimizer steps on its shard "
                       "of the parameters, the one GPU's on all of them\n", r.sharding);
  }
  // One GPU's memory at each count: the sharded state shrinks as GPUs are added.
  out << "\n  memory per GPU:";
  bool unknown_activations = false;
  for (const auto& row : r.rows) {
    out << fmt::format(" {} GPU{} {}{};", row.row.gpus, row.row.gpus == 1 ? "" : "s",
                       format_bytes(row.memory.total()),
                       row.gpu_memory <= 0 ? ""
                       : row.memory.total() <= row.gpu_memory ? " (fits)"
                                                              : " (DOES NOT FIT)");
    unknown_activations = unknown_activations || !row.memory.activations;
  }
  out << "\n";
  if (unknown_activations) out << "  (activations not counted: the input has no activation_bytes column)\n";
  out << fmt::format("  memory left out: {}\n", sim::kMemoryLeftOut);
  out << fmt::format("\n  replayed {} GPU counts in {:.3f} s\n", r.rows.size(), seconds);
}

void run_scale(const ScaleArgs& a) {
  const WorkContext context("scaling", a.input);
  auto log = logger("tools");
  check_outputs({&a.report}, {a.input, a.scenario.file});
  check_input(a.input, "INPUT");
  const sim::ScaleFlags flags = sim::check_scale_request({a.gpus, a.mode, a.global_batch});
  sim::ScaleOptions options;
  options.scenario_file = a.scenario.file;
  options.scenario_sets = a.scenario.sets;
  options.allow_large = a.allow_large;
  options.warn = [&log](const std::string& line) { log->warn("{}", line); };
  options.info = [&log](const std::string& line) { log->info("{}", line); };
  const sim::Scenario base = sim::scale_base_scenario(load_scenario(a.scenario), flags, options);
  const sim::SimulationInput input{a.input,
                                   sim::load_replay_input(a.input, {a.allow_truncated})};
  for (const auto& w : input.content.warnings) log->warn("{}", w);
  const sim::ScaleRun run = sim::run_scale(input, base, flags, options);

  if (a.report.given()) {
    const std::string report = json_report_text(report::scale_report_json(run.result));
    write_output(a.report, [&] { write_file_atomically(a.report.path, report); });
  }
  print_sweep(run.result, run.seconds, std::cout);
  if (a.report.given()) log->info("report written to {}", a.report.path);
}

}  // namespace

void add_scale_command(CLI::App& app) {
  auto args = std::make_shared<ScaleArgs>();
  auto* cmd = app.add_subcommand(
      "scale",
      "Replay a scenario at several GPU counts: speedup and scaling efficiency (weak or strong)");
  cmd->add_option("INPUT", args->input, "ssgd trace, layer-profile CSV or B-Caffe log")->required();
  cmd->add_option("--gpus", args->gpus, "GPU counts, comma-separated, e.g. 1,2,4,8,16,32,64")
      ->required();
  cmd->add_option("--mode", args->mode,
                  "weak (each GPU keeps its batch) or strong (fixed global batch); "
                  "default: scaling.mode");
  cmd->add_option(
      "--global-batch", args->global_batch,
      "strong: the global batch (default: scaling.global_batch, else the input's batch x "
      "the scenario's GPUs)");
  add_scenario_options(*cmd, args->scenario, ScenarioJobs::kRefuse);
  add_output_option(*cmd, args->report, "--report", "write the rows as JSON here");
  add_allow_truncated_flag(*cmd, args->allow_truncated);
  add_allow_large_flag(*cmd, args->allow_large);
  cmd->callback([args] { run_scale(*args); });
}

}  // namespace ssgd::tools
