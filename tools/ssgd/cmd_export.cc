// ssgd export perfetto TRACE.ssgdt -o OUT.json[.gz] [--allow-truncated]
#include <iostream>
#include <memory>
#include <string>

#include "common/chrome_trace_writer.h"
#include "common/logging.h"
#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"
#include "traces/export/perfetto/perfetto_export.h"
#include "traces/trace_reader.h"

namespace ssgd::tools {

void add_export_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("export", "Convert an ssgd trace into another tool's format");
  cmd->require_subcommand(1);
  struct Args {
    std::string trace;
    OutputFile out;
    bool allow_truncated = false;
  };
  auto args = std::make_shared<Args>();
  auto* perfetto = cmd->add_subcommand(
      "perfetto",
      "ssgd trace (measured, merged or simulated) -> Chrome trace-event JSON for ui.perfetto.dev "
      "and chrome://tracing (docs/export.md)");
  perfetto->add_option("TRACE", args->trace, "ssgd trace (.ssgdt)")->required();
  add_output_option(*perfetto, args->out, "-o,--output",
                    "JSON file to write; gzip-compressed when the name ends in .gz")
      ->required();
  add_allow_truncated_flag(*perfetto, args->allow_truncated);
  perfetto->callback([args] {
    check_outputs({&args->out}, {args->trace});
    check_input(args->trace, "TRACE");
    auto reader = trace::TraceReader::open(args->trace);
    // Written under a temporary name, renamed only once the whole trace is
    // exported: a damaged trace or a full disk leaves no output.
    trace::PerfettoExportResult result;
    write_output(args->out, [&] {
      ChromeTraceFile file(args->out.path);
      result = trace::export_perfetto(reader, file.writer(), {args->allow_truncated});
      file.commit();
    });
    logger("tools")->info(
        "{}: {} events of {} rank(s) -> {} slices and {} launch arrows in {} ({} correlation ids "
        "without a partner, at most {} held at once)",
        args->trace, result.events_read, result.ranks, result.slices, result.flows, args->out.path,
        result.unmatched, result.peak_pending);
  });
}

}  // namespace ssgd::tools
