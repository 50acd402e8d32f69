// ssgd info [--dump] [--allow-truncated] FILE: summarise a .ssgdt trace, or
// print it as text. A trace cut short is always read up to its last whole
// chunk, with a warning: --allow-truncated is accepted, as on every command
// that reads traces, and changes nothing.
#include <iostream>
#include <memory>
#include <string>

#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"
#include "traces/trace_dump.h"
#include "traces/trace_reader.h"

namespace ssgd::tools {

void add_info_command(CLI::App& app) {
  struct Options {
    std::string file;
    bool dump = false;
    bool allow_truncated = false;  // info reads the readable prefix anyway
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "info",
      "Summarise a .ssgdt trace: metadata, events per kind and rank, time span, top "
      "kernels, collectives. A file cut short is read up to its last whole chunk, with "
      "a warning on stderr.");
  cmd->add_option("FILE", options->file, "trace file (.ssgdt)")->required();
  cmd->add_flag("--dump", options->dump,
                "print every event as protobuf text (deterministic, for golden tests) instead "
                "of the summary");
  add_allow_truncated_flag(*cmd, options->allow_truncated,
                           "accepted as by every command that reads traces; info reads the "
                           "readable prefix of a trace cut short with or without it");
  cmd->callback([options] {
    // The reader logs the truncation warning on stderr itself.
    check_input(options->file, "FILE");
    auto reader = trace::TraceReader::open(options->file);
    if (options->dump) {
      trace::dump_trace_text(reader, std::cout);
    } else {
      trace::print_summary(trace::summarize_trace(reader), std::cout);
    }
    std::cout.flush();
  });
}

}  // namespace ssgd::tools
