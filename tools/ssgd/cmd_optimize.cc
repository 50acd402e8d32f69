// ssgd optimize INPUT --param KEY (--values LIST | --from A --to B [--points N] [--linear])
//                     [--scenario FILE.yaml] [--set key.path=value]... [--report FILE.json]
//                     [--allow-truncated]
//
// Searches one scenario key (a policy parameter such as policy.bucket_cap,
// or any int, size, duration or number key) for the setting with the
// shortest steady-state iteration time: each candidate is the scenario
// with `--set KEY=value` added last, replayed in full. Prints the curve it
// searched and the best setting; --report writes both as JSON.

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
#include "simulator/report/optimize_report.h"
#include "simulator/scenario/scenario.h"
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
  OutputFile report;
  bool allow_truncated = false;
  bool allow_large = false;
};

void print_curve(const OptimizeArgs& a, const std::string& model, const sim::Scenario& base,
                 const sim::OptimizeResult& r, double seconds, std::ostream& out) {
  out << fmt::format("ssgd optimize: {} for {} ({} workers, policy {}), {} settings\n", a.param,
                     model.empty() ? a.input : model, base.workers(),
                     sim::to_string(base.overlap), r.curve.size());
  out << fmt::format("  {:>16} {:>14} {:>14} {:>12}\n", "value", "iteration", "exposed comm",
                     "collectives");
  for (std::size_t i = 0; i < r.curve.size(); ++i) {
    const sim::OptimizePoint& p = r.curve[i];
    out << fmt::format("  {:>16} {:>14} {:>14} {:>12}{}\n", p.value,
                       format_duration(p.iteration_time), format_duration(p.exposed_comm),
                       p.collectives_per_iteration, i == r.best ? "  <- best" : "");
  }
  const sim::OptimizePoint& b = r.curve[r.best];
  const std::int64_t as_given = r.as_given_iteration_time.ns();
  const double gain = as_given > 0 ? 100.0 * (1.0 - static_cast<double>(b.iteration_time.ns()) /
                                                        static_cast<double>(as_given))
                                   : 0.0;
  out << fmt::format(
      "\n  best: --set {}={}: iteration {} ({:+.1f}% vs the scenario as given, {})\n", a.param,
      b.value, format_duration(b.iteration_time), -gain,
      format_duration(r.as_given_iteration_time));
  out << fmt::format("  searched {} settings in {:.2f} s\n", r.curve.size(), seconds);
}

void run_optimize(const OptimizeArgs& a) {
  const WorkContext context("optimizing", a.input);
  auto log = logger("tools");
  check_outputs({&a.report}, {a.input, a.scenario.file});
  check_input(a.input, "INPUT");
  const sim::OptimizePlan plan =
      sim::plan_optimize({a.param, a.values, a.from, a.to, a.points, a.linear},
                         [&a](const std::vector<std::string>& more_sets) {
                           return load_scenario(a.scenario, more_sets);
                         });
  const sim::SimulationInput input{a.input,
                                   sim::load_replay_input(a.input, {a.allow_truncated})};
  for (const auto& w : input.input.warnings) log->warn("{}", w);
  sim::OptimizeOptions options;
  options.scenario_file = a.scenario.file;
  options.allow_large = a.allow_large;
  options.info = [&log](const std::string& line) { log->info("{}", line); };
  const sim::OptimizeRun run = sim::run_optimize(input, plan, options);

  if (a.report.given()) {
    const std::string report = json_report_text(sim::optimize_report_json(run.result));
    write_output(a.report, [&] { write_file_atomically(a.report.path, report); });
  }
  print_curve(a, input.input.profile.model, plan.base, run.result, run.seconds, std::cout);
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
  add_scenario_options(*cmd, args->scenario, ScenarioJobs::kRefuse);
  add_output_option(*cmd, args->report, "--report",
                    "write the curve and the best value as JSON here");
  add_allow_truncated_flag(*cmd, args->allow_truncated);
  add_allow_large_flag(*cmd, args->allow_large);
  cmd->callback([args] { run_optimize(*args); });
}

}  // namespace ssgd::tools
