#pragma once
// Chrome trace-event JSON of a simulated run, which ui.perfetto.dev and
// chrome://tracing open: one process per rank with a track (thread) per
// resource (compute, io, h2d), one "network" process whose track holds
// the gradient collectives, and one "links" process with a track per link.
// Timestamps are microseconds with three decimals, so nanoseconds survive
// (common/chrome_trace_writer.h). The output is deterministic.

#include <cstdint>
#include <filesystem>
#include <iosfwd>

#include "dag/task_graph.h"
#include "simulator/engine/schedule.h"
#include "simulator/replay/replay.h"

namespace ssgd {
class ChromeTraceWriter;
}

namespace ssgd::report {

struct TimelineOptions {
  std::int64_t max_ranks = 16;  // ranks 0..max_ranks-1 are written; <= 0 means all
  // Link tracks: one "links" process with a track per link, each interval a
  // slice (simulator/replay/replay.h). Optional.
  const std::vector<sim::LinkTrack>* links = nullptr;
  // The job's ranks (0: not said). Written as the metadata event
  // {"name":"ssgd_ranks","ph":"M","pid":0,"args":{"ranks":R,"shown":S}}, so
  // that a reader of the file (ssgd report) can say when it holds only some.
  std::int64_t job_ranks = 0;
};

// The timeline's events, into a document the caller finishes.
void write_timeline(const dag::TaskGraph& graph, const sim::Schedule& schedule,
                    const TimelineOptions& options, ChromeTraceWriter& out);
// A whole, uncompressed document.
void write_timeline(const dag::TaskGraph& graph, const sim::Schedule& schedule,
                    const TimelineOptions& options, std::ostream& out);

// Through an AtomicFile, gzip-compressed when the name ends in ".gz":
// nothing is left behind on failure.
void write_timeline_file(const dag::TaskGraph& graph, const sim::Schedule& schedule,
                         const TimelineOptions& options, const std::filesystem::path& path);

}  // namespace ssgd::report
