// Fuzz target: PyTorch profiler JSON, as `ssgd import pytorch` reads it
// (traces/import/pytorch/pytorch_import.h): Kineto's object and the legacy
// profiler's bare array, plain or gzip (the reader recognises gzip by its
// magic, so gzip seeds exercise the decompressor).
//
// Promise: import_pytorch writes a trace or throws an InputError naming the
// input, leaving nothing behind (no output, no spilled run). An accepted
// file's trace reads back whole, with the events the summary counts, and
// summarizes (`ssgd info`); it has no collective of an unknown op or
// recorded twice, and the replay's reading of it returns a profile or an
// InputError naming it (fuzz/collective_check.h).

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.h"
#include "fuzz/import_check.h"
#include "traces/import/pytorch/pytorch_import.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ssgd::fuzz::clear_scratch();
  const std::string in = ssgd::fuzz::write_scratch("in.json", data, size).string();
  const std::string out = ssgd::fuzz::scratch("out.ssgdt").string();
  ssgd::trace::PytorchImportOptions options;
  options.sort_run_bytes = std::size_t{64} << 10;  // small, so that runs spill to disk
  options.progress_seconds = 1e9;
  ssgd::trace::PytorchImportSummary summary;
  if (!ssgd::fuzz::accepts("import_pytorch", {in},
                           [&] { summary = ssgd::trace::import_pytorch(in, out, options); })) {
    ssgd::fuzz::expect_scratch_files("a rejected profiler file", {"in.json"});
    return 0;
  }
  ssgd::fuzz::check_imported_trace("an imported profiler file", "in.json", out,
                                   summary.events_written);
  return 0;
}
