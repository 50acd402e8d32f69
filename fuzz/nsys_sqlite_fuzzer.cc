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
#include <string>

#include "fuzz/fuzz_support.h"
#include "fuzz/import_check.h"
#include "traces/import/nsys/nsys_import.h"

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
  ssgd::fuzz::check_imported_trace("an imported export", "in.sqlite", out,
                                   summary.events_written);
  return 0;
}
