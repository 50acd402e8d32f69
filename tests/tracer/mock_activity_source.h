#pragma once
// A stand-in for CUPTI and the NCCL plugin in tests: synthetic activity
// records of every kind, each carrying a unique id so that a test can check
// that every record reached the file exactly once.

#include <cstdint>
#include <string>
#include <vector>

#include "tracer/core/activity_record.h"
#include "tracer/core/trace_sink.h"
#include "traces/proto/trace_events.pb.h"

namespace ssgd::tracer::testing {

// Record `id` of the synthetic stream: its kind cycles through every
// ActivityKind (id % kActivityKindCount); times are base_ns + 1000 * id and
// last 500 ns. `name` must outlive the record (it is only a view).
ActivityRecord synthetic_record(std::uint64_t id, std::int64_t base_ns, std::string& name);

// The id a synthetic record carried, read back from its event.
std::uint64_t synthetic_id(const trace::v1::Event& event);

struct MockRunResult {
  std::uint64_t stored = 0;
  std::uint64_t dropped = 0;
};

// Appends records from `threads` threads, each with its own producer: thread
// t appends ids t, t + threads, t + 2 * threads, ... below `total`.
MockRunResult run_mock_source(TraceSink& sink, int threads, std::uint64_t total,
                              std::int64_t base_ns);

}  // namespace ssgd::tracer::testing
