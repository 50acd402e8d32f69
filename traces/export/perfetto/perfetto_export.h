#pragma once
// `ssgd export perfetto`: any ssgd trace (a rank file, a merged trace, a
// simulated run) as Chrome trace-event JSON, which ui.perfetto.dev and
// chrome://tracing open. Layout (docs/export.md):
//   process  pid = rank + 1, "rank R (host)", sorted by rank
//   tracks   per host thread: "thread T markers" (MarkerRange) and
//            "thread T CUDA API" (ApiCall); per device and stream:
//            "GPU d stream s" (Kernel, Memcpy, Memset, Collective, and
//            CudaEvent as instants); per device: "GPU d synchronization".
//            Track ids (tid) are numbered per rank in order of first use;
//            the thread id or stream is in the name and the args.
//   flows    "ph":"s" at the start of an ApiCall, "ph":"f" ("bp":"e") at
//            the start of the GPU activity with its correlation id; ids
//            1, 2, ... in order of completion, unique in the file.
//   time     microseconds with three decimals (nanoseconds kept), on the
//            trace's own clock; "displayTimeUnit":"ns".
// Events are streamed from the TraceReader and written in file order, each
// track's metadata before its first event, so the output is deterministic.
//
// Memory: one chunk of the reader, the track tables, and per rank the
// correlation ids whose other end has not been read yet (an ApiCall without
// GPU work, such as cudaStreamSynchronize, stays there to the end: about 40
// bytes each). Each correlation id gets one arrow: a second activity with
// the same id (a CUDA graph's kernels) gets none.

#include <cstdint>
#include <string>

#include "traces/trace_reader.h"

namespace ssgd {
class ChromeTraceWriter;
}

namespace ssgd::trace {

struct PerfettoExportOptions {
  // Export the readable prefix of a trace that was cut short (else an error).
  bool allow_truncated = false;
};

struct PerfettoExportResult {
  std::uint64_t events_read = 0;
  std::uint64_t slices = 0;        // "ph":"X" and "ph":"i" events written
  std::uint64_t flows = 0;         // arrows (pairs of flow events)
  std::uint64_t skipped = 0;       // events with nothing to draw (external correlations, devices)
  std::uint64_t unmatched = 0;     // correlation ids left with one end only
  std::uint64_t peak_pending = 0;  // most correlation ids held at once
  std::int64_t ranks = 0;
  bool truncated = false;
};

// Writes every event of `reader` into `out` (the caller finishes `out`).
// Throws ssgd::InputError on a damaged trace, or on a truncated one without
// allow_truncated, naming the file and the chunk.
PerfettoExportResult export_perfetto(TraceReader& reader, ChromeTraceWriter& out,
                                     const PerfettoExportOptions& options = {});

}  // namespace ssgd::trace
