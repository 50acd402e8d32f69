#pragma once
// Human-facing views of a .ssgdt trace: a summary (`ssgd info`), a
// deterministic text dump (`ssgd info --dump`, golden tests) and the reverse
// of the dump, packing a text trace into a .ssgdt file (`ssgd pack`).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

namespace ssgd::trace {

// Count, bytes and busy time of a group of events (a collective op, a
// memcpy direction, a kernel name).
struct EventStats {
  std::uint64_t count = 0;
  std::int64_t size_bytes = 0;  // 0 for kernels
  std::int64_t total_ns = 0;    // sum of end_ns - start_ns
};

struct KernelStats {
  std::string name;
  EventStats stats;
};

struct TraceSummary {
  std::string file;
  v1::CaptureMetadata metadata;
  std::uint64_t chunks = 0;
  std::uint64_t events = 0;
  // Events per payload kind; `empty` counts events without a payload.
  std::uint64_t kernels = 0, memcpys = 0, memsets = 0, collectives = 0, markers = 0, api_calls = 0,
                synchronizations = 0, cuda_events = 0, external_correlations = 0, devices = 0, links = 0, graph_nodes = 0,
                empty = 0;
  // A tracing window's marks (domain "ssgd-window", tracer/core/trace_window.h):
  // the steps the program reported, and how often recording was turned on.
  std::uint64_t window_steps = 0, window_opens = 0;
  std::map<std::int32_t, std::uint64_t> events_per_rank;
  bool has_time = false;      // some event has a payload
  std::int64_t first_ns = 0;  // smallest start_ns
  std::int64_t last_ns = 0;   // largest end_ns
  std::uint64_t distinct_kernels = 0;
  std::int64_t kernel_total_ns = 0;
  std::vector<KernelStats> top_kernels;                 // by total_ns, descending, then name
  std::map<std::string, EventStats> collectives_by_op;  // key: Collective.Op name
  std::map<std::string, EventStats> memcpys_by_kind;    // key: Memcpy.Kind name
  EventStats memset_stats;
  bool has_footer = false;
  std::uint64_t dropped_records = 0;     // from the footer
  std::uint64_t invalid_timestamps = 0;  // from the footer
  std::uint64_t nccl_events_dropped = 0;          // from the footer
  std::uint64_t nccl_incomplete_collectives = 0;  // from the footer
  std::uint64_t nccl_orphan_events = 0;           // from the footer
  bool truncated = false;
  std::string truncation_warning;
  // The stored clock calibration (the footer's, else the header's;
  // stored_calibration in clock_calibration.h); absent when none.
  std::optional<v1::ClockCalibration> clock_calibration;
};

// Reads every remaining event of `reader`. Throws what TraceReader::next throws.
TraceSummary summarize_trace(TraceReader& reader, std::size_t top_kernels = 10);

// Writes the summary as aligned, readable text.
void print_summary(const TraceSummary& summary, std::ostream& out);

// Writes every remaining event of `reader` as text, byte-identical across runs:
// a comment line, the metadata as a text-format `metadata { ... }` block, one
// `events { ... }` line per event, then the footer (or the truncation
// warning, without the file name) as `#` comment lines. Without the comments
// it is a TextTrace that `ssgd pack` reads back. Fields at their proto3
// default (0, empty) are not printed.
void dump_trace_text(TraceReader& reader, std::ostream& out);

// Parses `text_path`, a TextTrace in protobuf text format, checks that it is
// not empty, that every event has a payload and keeps the trace's rules
// (traces/event_rules.h), and that no collective record is there twice
// (traces/collective_records.h), and writes it to
// `out_path` through a TraceWriter. Throws ssgd::InputError naming the file,
// line and column on a parse error or a bad event; no output is left behind
// on failure. Returns the footer written.
v1::Footer pack_text_trace(const std::filesystem::path& text_path,
                           const std::filesystem::path& out_path, TraceWriterOptions options = {});

}  // namespace ssgd::trace
