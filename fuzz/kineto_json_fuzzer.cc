// Fuzz target: PyTorch profiler JSON, as `ssgd import pytorch` reads it
// (traces/import/pytorch/kineto_import.h): Kineto's object and the legacy
// profiler's bare array, plain or gzip (the reader recognises gzip by its
// magic, so gzip seeds exercise the decompressor).
//
// Promise: import_kineto writes a trace or throws an InputError naming the
// input, leaving nothing behind (no output, no spilled run). An accepted
// file's trace reads back whole, with the events the summary counts, and
// summarizes (`ssgd info`); it has no collective of an unknown op or
// recorded twice, and the replay's reading of it returns a profile or an
// InputError naming it (fuzz/collective_check.h).

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "fuzz/collective_check.h"
#include "fuzz/fuzz_support.h"
#include "traces/import/pytorch/kineto_import.h"
#include "traces/trace_dump.h"
#include "traces/trace_reader.h"

using ssgd::fuzz::finding;
using ssgd::fuzz::must;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ssgd::fuzz::clear_scratch();
  const std::string in = ssgd::fuzz::write_scratch("in.json", data, size).string();
  const std::string out = ssgd::fuzz::scratch("out.ssgdt").string();
  ssgd::trace::KinetoImportOptions options;
  options.sort_run_bytes = std::size_t{64} << 10;  // small, so that runs spill to disk
  options.progress_seconds = 1e9;
  ssgd::trace::KinetoImportSummary summary;
  if (!ssgd::fuzz::accepts("import_kineto", {in},
                           [&] { summary = ssgd::trace::import_kineto(in, out, options); })) {
    ssgd::fuzz::expect_scratch_files("a rejected profiler file", {"in.json"});
    return 0;
  }
  ssgd::fuzz::expect_scratch_files("an imported profiler file", {"in.json", "out.ssgdt"});
  if (summary.events_written == 0) finding("import_kineto: accepted a file and wrote no events");
  must("reading back the imported trace", [&] {
    ssgd::trace::TraceReader reader = ssgd::trace::TraceReader::open(out);
    const ssgd::trace::TraceSummary read = ssgd::trace::summarize_trace(reader);
    std::ostringstream text;
    ssgd::trace::print_summary(read, text);
    if (read.truncated) finding("the imported trace reads as cut short");
    if (read.events != summary.events_written) {
      finding("the imported trace holds " + std::to_string(read.events) +
              " events, the import said " + std::to_string(summary.events_written));
    }
  });
  ssgd::fuzz::check_trace_collectives("an imported profiler file", out);
  ssgd::fuzz::check_trace_replay_input("an imported profiler file", out);
  return 0;
}
