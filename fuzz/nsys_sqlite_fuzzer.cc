// Fuzz target: Nsight Systems SQLite exports, as `ssgd import nsys` reads
// them (traces/import/nsys/nsys_import.h). The input bytes are written to a
// file and opened as the database (read-only, immutable), so the fuzzer
// reaches SQLite's reading of damaged pages as well as the importer's
// checks of schema and rows.
//
// Promise: import_nsys writes a trace or throws an InputError naming the
// input, leaving nothing behind (no output, no spilled run, no -journal or
// -wal file beside the input). An accepted file's trace reads back whole,
// with the events the summary counts; it has no collective recorded twice,
// and the replay's reading of it returns a profile or an InputError naming
// it (fuzz/collective_check.h).

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "fuzz/collective_check.h"
#include "fuzz/fuzz_support.h"
#include "traces/import/nsys/nsys_import.h"
#include "traces/trace_dump.h"
#include "traces/trace_reader.h"

using ssgd::fuzz::finding;
using ssgd::fuzz::must;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ssgd::fuzz::clear_scratch();
  const std::string in = ssgd::fuzz::write_scratch("in.sqlite", data, size).string();
  const std::string out = ssgd::fuzz::scratch("out.ssgdt").string();
  ssgd::trace::NsysImportOptions options;
  options.sort_run_bytes = std::size_t{64} << 10;  // small, so that runs spill to disk
  ssgd::trace::NsysImportSummary summary;
  if (!ssgd::fuzz::accepts("import_nsys", {in},
                           [&] { summary = ssgd::trace::import_nsys(in, out, options); })) {
    ssgd::fuzz::expect_scratch_files("a rejected export", {"in.sqlite"});
    return 0;
  }
  ssgd::fuzz::expect_scratch_files("an imported export", {"in.sqlite", "out.ssgdt"});
  if (summary.events_written == 0) finding("import_nsys: accepted a file and wrote no events");
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
  ssgd::fuzz::check_trace_collectives("an imported export", out);
  ssgd::fuzz::check_trace_replay_input("an imported export", out);
  return 0;
}
