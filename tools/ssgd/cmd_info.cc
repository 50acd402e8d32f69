// ssgd info [--dump] FILE: summarise a .ssgdt trace, or print it as text.
#include <iostream>
#include <memory>
#include <string>

#include "tools/ssgd/commands.h"
#include "traces/trace_dump.h"
#include "traces/trace_reader.h"

namespace ssgd::tools {

void add_info_command(CLI::App& app) {
  struct Options {
    std::string file;
    bool dump = false;
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
  cmd->callback([options] {
    // The reader logs the truncation warning on stderr itself.
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
