// ssgd report REPORT.json... -o OUT.html
//
// One self-contained HTML page (docs/report.md, "ssgd report") from the JSON
// reports of `ssgd simulate`, `ssgd scale`, `ssgd optimize`, `ssgd dataset
// verify` and `ssgd diff`, from a sweep's JSON lines, and from timelines of
// `ssgd simulate --timeline` (one iteration per group of identical ranks),
// each recognised by its content. Every input is read and
// checked before the page is written; the page is written through an
// AtomicFile, so a bad input leaves no output.

#include <algorithm>
#include <array>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/work_context.h"
#include "presentation/html/html_report.h"
#include "presentation/html/report_input.h"
#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"
#include "traces/container_format.h"

namespace ssgd::tools {
namespace {

// An ssgd trace given where a report belongs: said so, with the commands
// that make a report of it (the JSON reader would only see its first byte).
void refuse_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, trace::format::kMagic.size()> head{};
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  if (in.gcount() != static_cast<std::streamsize>(head.size()) ||
      !std::equal(head.begin(), head.end(), trace::format::kMagic.begin(),
                  [](char a, unsigned char b) { return static_cast<unsigned char>(a) == b; })) {
    return;
  }
  throw InputError({path, std::nullopt, std::nullopt, ""},
                   "an ssgd trace, not a report: replay it with 'ssgd simulate " + bounded(path) +
                       " --report run.json' (or --timeline run.json) and give ssgd report that");
}

}  // namespace

void add_report_command(CLI::App& app) {
  struct Args {
    std::vector<std::string> inputs;
    OutputFile out;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "report",
      "JSON reports of simulate, scale, optimize, dataset verify and diff, a sweep's JSON "
      "lines, or simulate --timeline files -> one "
      "self-contained HTML page with charts (docs/report.md)");
  cmd->add_option("REPORT", args->inputs,
                  "reports (ssgd simulate/scale/optimize/diff --report, dataset verify --report), "
                  "sweep JSON lines or timelines "
                  "(ssgd simulate --timeline, .json or .json.gz), in the order the page shows them")
      ->required();
  add_output_option(*cmd, args->out, "-o,--output", "HTML file to write")->required();
  cmd->callback([args] {
    check_outputs({&args->out}, args->inputs);
    check_inputs(args->inputs, "REPORT");
    std::vector<html::ReportInput> inputs;
    inputs.reserve(args->inputs.size());
    for (const std::string& path : args->inputs) {
      refuse_trace(path);
      inputs.push_back(html::read_report_input(path));
    }
    const WorkContext context("making the HTML page", args->out.path);
    const std::string page = html::html_report(inputs);
    write_output(args->out, [&] { write_file_atomically(args->out.path, page); });
    std::cout << fmt::format("ssgd report: {} input{} -> {} ({} bytes)\n", inputs.size(),
                             inputs.size() == 1 ? "" : "s", args->out.path, page.size());
  });
}

}  // namespace ssgd::tools
