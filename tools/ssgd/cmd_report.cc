// ssgd report REPORT.json... -o OUT.html
//
// One self-contained HTML page (docs/report.md, "ssgd report") from the JSON
// reports of `ssgd simulate`, `ssgd scale` and `ssgd optimize` and from a
// sweep's JSON lines, and from timelines of `ssgd simulate --timeline` (one
// iteration per group of identical ranks), each recognised by its content. Every input is read and
// checked before the page is written; the page is written through an
// AtomicFile, so a bad input leaves no output.

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/work_context.h"
#include "simulator/html_report/html_report.h"
#include "simulator/html_report/report_input.h"
#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"

namespace ssgd::tools {

void add_report_command(CLI::App& app) {
  struct Args {
    std::vector<std::string> inputs;
    OutputFile out;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "report",
      "JSON reports of simulate, scale and optimize, a sweep's JSON lines, or simulate "
      "--timeline files -> one "
      "self-contained HTML page with charts (docs/report.md)");
  cmd->add_option("REPORT", args->inputs,
                  "reports (ssgd simulate/scale/optimize --report), sweep JSON lines or timelines "
                  "(ssgd simulate --timeline, .json or .json.gz), in the order the page shows them")
      ->required();
  add_output_option(*cmd, args->out, "-o,--output", "HTML file to write")->required();
  cmd->callback([args] {
    check_outputs({&args->out}, args->inputs);
    check_inputs(args->inputs, "REPORT");
    std::vector<sim::html::ReportInput> inputs;
    inputs.reserve(args->inputs.size());
    for (const std::string& path : args->inputs)
      inputs.push_back(sim::html::read_report_input(path));
    const WorkContext context("making the HTML page", args->out.path);
    const std::string page = sim::html::html_report(inputs);
    write_output(args->out, [&] { write_file_atomically(args->out.path, page); });
    std::cout << fmt::format("ssgd report: {} input{} -> {} ({} bytes)\n", inputs.size(),
                             inputs.size() == 1 ? "" : "s", args->out.path, page.size());
  });
}

}  // namespace ssgd::tools
