// ssgd collectives [--op OP] [--from SIZE] [--to SIZE] [--factor F]
//                  [--scenario FILE.yaml] [--set key.path=value]... [--report FILE.json]
//
// One collective at sizes from --from to --to (each --factor times the
// last) on the scenario's platform, as nccl-tests prints it: size, elements,
// the algorithm, protocol and channels the job's library runs it with, its
// time alone under the scenario's network model, algbw and busbw. What a
// replay's collectives take comes from the same model.

#include <iostream>
#include <memory>
#include <string>

#include "common/atomic_file.h"
#include "common/logging.h"
#include "simulator/api/collectives.h"
#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"

namespace ssgd::tools {
namespace {

struct CollectivesArgs {
  sim::CollectivesRequest request;
  ScenarioOptions scenario;
  OutputFile report;
};

void run_collectives(const CollectivesArgs& a) {
  auto log = logger("tools");
  check_outputs({&a.report}, {a.scenario.file});
  const sim::CollectivesFlags flags = sim::check_collectives_request(a.request);
  const sim::Scenario scenario = load_scenario(a.scenario);
  const sim::CollectivesResult result = sim::run_collectives(scenario, flags);
  if (a.report.given()) {
    const std::string report = json_report_text(sim::collectives_json(result));
    write_output(a.report, [&] { write_file_atomically(a.report.path, report); });
  }
  std::cout << sim::collectives_table(result);
  if (a.report.given()) log->info("report written to {}", a.report.path);
}

}  // namespace

void add_collectives_command(CLI::App& app) {
  auto args = std::make_shared<CollectivesArgs>();
  auto* cmd = app.add_subcommand(
      "collectives",
      "One collective at a range of sizes on the scenario's platform, as nccl-tests prints it");
  cmd->add_option("--op", args->request.op,
                  "all_reduce (default), reduce_scatter, all_gather, broadcast, reduce or all_to_all");
  cmd->add_option("--from", args->request.from, "the smallest size, e.g. 8B (default), 1MiB");
  cmd->add_option("--to", args->request.to, "the largest size (default 8GiB)");
  cmd->add_option("--factor", args->request.factor, "each size times this, above 1 (default 2)");
  add_scenario_options(*cmd, args->scenario, ScenarioJobs::kRefuse);
  add_output_option(*cmd, args->report, "--report", "write the rows as JSON here");
  cmd->callback([args] { run_collectives(*args); });
}

}  // namespace ssgd::tools
