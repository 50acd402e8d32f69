// ssgd pack TEXT -o FILE.ssgdt: turn a text trace (protobuf text format,
// message ssgd.trace.v1.TextTrace) into a .ssgdt file.
#include <cstddef>
#include <iostream>
#include <memory>
#include <string>

#include "tools/ssgd/cli_options.h"
#include "tools/ssgd/commands.h"
#include "traces/trace_dump.h"

namespace ssgd::tools {

void add_pack_command(CLI::App& app) {
  struct Options {
    std::string input;
    OutputFile output;
    std::size_t events_per_chunk = trace::TraceWriterOptions{}.events_per_chunk;
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "pack",
      "Pack a text trace (ssgd.trace.v1.TextTrace in protobuf text format, e.g. the "
      "output of `ssgd info --dump`) into a .ssgdt file.");
  cmd->add_option("TEXT", options->input, "text trace (.txtpb)")->required();
  add_output_option(*cmd, options->output, "-o,--output", "trace file to write (.ssgdt)")
      ->required();
  cmd->add_option("--events-per-chunk", options->events_per_chunk,
                  "events per compressed chunk (small values make multi-chunk test files)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 24));
  cmd->callback([options] {
    trace::TraceWriterOptions writer_options;
    writer_options.events_per_chunk = options->events_per_chunk;
    check_outputs({&options->output}, {options->input});
    check_input(options->input, "TEXT");
    trace::v1::Footer footer;
    write_output(options->output, [&] {
      footer = trace::pack_text_trace(options->input, options->output.path, writer_options);
    });
    std::cout << "wrote " << options->output.path << ": " << footer.event_count() << " events in "
              << footer.chunk_count() << " chunks\n";
  });
}

}  // namespace ssgd::tools
