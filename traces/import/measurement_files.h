#pragma once
// The importers' front door for measured collectives: recognises a file by
// its content (or takes --format) and hands it to the reader of its format,
// each in its own room:
//   an ssgd trace     traces/trace_collectives.h
//   OSU latency log   traces/import/osu/osu_log.h
//   nccl-tests text   traces/import/nccl_tests/nccl_tests_text.h
//   nccl-tests JSON   traces/import/nccl_tests/nccl_tests_json.h
// The record they return is traces/measurement.h's. A new format is a new
// room under traces/import/ and one case here (docs/architecture.md).

#include <filesystem>
#include <vector>

#include "traces/measurement.h"

namespace ssgd::trace {

// Reads one file. Throws ssgd::InputError; never returns an empty list, and
// every measurement has ranks from 2 to kMaxMeasuredRanks, bytes > 0 and
// time > 0.
std::vector<Measurement> read_measurements(const std::filesystem::path& path,
                                           const MeasurementOptions& options);

}  // namespace ssgd::trace
