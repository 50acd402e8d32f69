// ssgd optimize INPUT --param KEY (--values LIST | --from A --to B [--points N] [--linear])
//                     [--also KEY=V1,V2,...]...
//                     [--scenario FILE.yaml] [--set key.path=value]... [--report FILE.json]
//                     [--allow-truncated]
//
// Searches one scenario key (a policy parameter such as policy.bucket_cap,
// or any int, size, duration or number key), and with --also KEY=V1,V2 more
// keys in every combination, for the setting with the shortest steady-state
// iteration time that fits platform.gpu.memory: each candidate is the
// scenario with `--set KEY=value` added last, replayed in full. Prints the
// curve it searched (with each setting's memory per GPU) and the best
// setting; --report writes both as JSON.

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/logging.h"
#include "common/units.h"
#include "common/work_context.h"
#include "simulator/api/optimize.h"
#include "simulator/input/replay_input.h"
#include "presentation/report/gpu_report.h"
#include "presentation/report/interference_report.h"
#include "presentation/report/optimize_report.h"
#include "simulator/scenario/scenario.h"
#include "simulator/sharding/gpu_memory.h"
#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"

namespace ssgd::tools {
namespace {

struct OptimizeArgs {
  std::string input;
  ScenarioOptions scenario;
  std::string param;
  std::string values;
  std::string from, to;
  std::int64_t points = 20;
  bool linear = false;
  std::vector<std::string> also;
  OutputFile report;
  bool allow_truncated = false;
  bool allow_large = false;
};

void print_curve(const OptimizeArgs& a, const std::string& model, const sim::Scenario& base,
                 const sim::OptimizePlan& plan, const sim::OptimizeResult& r, double seconds,
                 std::ostream& out) {
  std::string keys = a.param;
  for (const auto& also : a.also) keys += " x " + also.substr(0, also.find('='));
  out << fmt::format("ssgd optimize: {} for {} ({} workers, policy {}), {} settings\n", keys,
                     model.empty() ? a.input : model, base.workers(),
                     sim::to_string(base.overlap_policy), r.curve.size());
  if (r.gpu_change.applied || !r.gpu_change.notes.empty()) {
    report::print_gpu_change(r.gpu_change, r.kernel_classes, out);
  }
  report::print_interference(r.interference, nullptr, out);
  std::size_t width = 16;
  for (const auto& p : r.curve) width = std::max(width, p.value.size());
  out << fmt::format("  {:>{}} {:>14} {:>14} {:>12} {:>14} {:>5}\n", "value", width, "iteration",
                     "exposed comm", "collectives", "memory/GPU", "fits");
  for (std::size_t i = 0; i < r.curve.size(); ++i) {
    const sim::OptimizePoint& p = r.curve[i];
    out << fmt::format("  {:>{}} {:>14} {:>14} {:>12} {:>14} {:>5}{}\n", p.value, width,
                       format_duration(p.iteration_time), format_duration(p.exposed_comm),
                       p.collectives_per_iteration,
                       format_bytes(p.memory_bytes) + (p.activations_known ? "" : "*"),
                       p.fits ? (*p.fits ? "yes" : "NO") : "?", i == r.best ? "  <- best" : "");
  }
  const bool unknown_activations = std::any_of(r.curve.begin(), r.curve.end(),
                                               [](const auto& p) { return !p.activations_known; });
  if (unknown_activations) {
    out << "  * activations not counted: the input has no activation_bytes column\n";
  }
  out << fmt::format("  memory left out: {}\n", sim::kMemoryLeftOut);
  if (r.gpu_memory <= 0) {
    out << "  fits: ? (GPU memory unknown: set platform.gpu.memory, or use a platform.preset)\n";
  }
  const sim::OptimizePoint& b = r.curve[r.best];
  const std::int64_t as_given = r.as_given_iteration_time.ns();
  const double gain = as_given > 0 ? 100.0 * (1.0 - static_cast<double>(b.iteration_time.ns()) /
                                                        static_cast<double>(as_given))
                                   : 0.0;
  std::string flags;
  for (const auto& set : plan.sets[r.best]) flags += (flags.empty() ? "--set " : " --set ") + set;
  if (r.none_fit) {
    out << fmt::format("\n  no setting fits {} of GPU memory; the fastest of all is shown\n",
                       format_bytes(r.gpu_memory));
  }
  out << fmt::format("\n  best{}: {}: iteration {} ({:+.1f}% vs the scenario as given, {})\n",
                     r.none_fit ? " (does not fit)" : "", flags, format_duration(b.iteration_time),
                     -gain, format_duration(r.as_given_iteration_time));
  out << fmt::format("  searched {} settings in {:.2f} s\n", r.curve.size(), seconds);
}

void run_optimize(const OptimizeArgs& a) {
  const WorkContext context("optimizing", a.input);
  auto log = logger("tools");
  check_outputs({&a.report}, {a.input, a.scenario.file});
  check_input(a.input, "INPUT");
  const sim::OptimizePlan plan =
      sim::plan_optimize({a.param, a.values, a.from, a.to, a.points, a.linear, a.also},
                         [&a](const std::vector<std::string>& more_sets) {
                           return load_scenario(a.scenario, more_sets);
                         });
  const sim::SimulationInput input{a.input,
                                   sim::load_replay_input(a.input, {a.allow_truncated})};
  for (const auto& w : input.content.warnings) log->warn("{}", w);
  sim::OptimizeOptions options;
  options.scenario_file = a.scenario.file;
  options.scenario_sets = a.scenario.sets;
  options.allow_large = a.allow_large;
  options.info = [&log](const std::string& line) { log->info("{}", line); };
  const sim::OptimizeRun run = sim::run_optimize(input, plan, options);

  if (a.report.given()) {
    const std::string report = json_report_text(report::optimize_report_json(run.result));
    write_output(a.report, [&] { write_file_atomically(a.report.path, report); });
  }
  print_curve(a, input.content.profile.model, plan.base, plan, run.result, run.seconds, std::cout);
  if (a.report.given()) log->info("report written to {}", a.report.path);
}

}  // namespace

void add_optimize_command(CLI::App& app) {
  auto args = std::make_shared<OptimizeArgs>();
  auto* cmd = app.add_subcommand(
      "optimize", "Search one scenario key (e.g. policy.bucket_cap) for the fastest iteration");
  cmd->add_option("INPUT", args->input, "ssgd trace, layer-profile CSV or B-Caffe log")->required();
  cmd->add_option("--param", args->param, "the scenario key to search, e.g. policy.bucket_cap")
      ->required();
  cmd->add_option("--values", args->values, "comma-separated values to try");
  cmd->add_option("--from", args->from, "smallest value (int, number, size, duration or rate key)");
  cmd->add_option("--to", args->to, "largest value");
  cmd->add_option("--points", args->points, "values from --from to --to")->capture_default_str();
  cmd->add_flag("--linear", args->linear, "space them evenly (default: geometrically)");
  cmd->add_option("--also", args->also,
                  "KEY=V1,V2,...: another key searched with it, every combination (repeatable)");
  add_scenario_options(*cmd, args->scenario, ScenarioJobs::kRefuse);
  add_output_option(*cmd, args->report, "--report",
                    "write the curve and the best value as JSON here");
  add_allow_truncated_flag(*cmd, args->allow_truncated);
  add_allow_large_flag(*cmd, args->allow_large);
  cmd->callback([args] { run_optimize(*args); });
}

}  // namespace ssgd::tools
