#pragma once
// Measured collective times, the input of `ssgd calibrate`, from four kinds
// of file, each read by its own reader (docs/calibration.md):
//   osu              OSU Micro-Benchmarks latency output
//                    (traces/import/osu/osu_log.h)
//   nccl-tests       nccl-tests' text table, all_reduce_perf and friends
//                    (traces/import/nccl_tests/nccl_tests_text.h)
//   nccl-tests-json  nccl-tests' JSON output, -J FILE.json
//                    (traces/import/nccl_tests/nccl_tests_json.h)
//   trace            the collectives of an ssgd trace (traces/trace_collectives.h)
// This file holds the record they all return and the helpers they share;
// read_measurements (traces/import/measurement_files.h) recognises a file
// and calls its reader.
// Every number is checked: a garbage line is an ssgd::InputError naming the
// file, the line (or the trace record, or the JSON path) and the field, and
// a file with no usable measurement is an error too.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/time.h"
#include "common/collective_op.h"

namespace ssgd::trace {

// One measured collective: `op` over `ranks` ranks on a buffer of `bytes`
// (M as simulator/collective/collective.h defines it: the all-reduce's
// buffer, the all-gather's output, the all-to-all's send buffer) took `time`.
struct Measurement {
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::int64_t ranks = 0;
  double bytes = 0;
  Duration time;
  std::string source;     // the file, as given
  std::int64_t line = 0;  // 1-based line in a text file; 0 for JSON and traces
};

// The most ranks a measurement may have: as many as a scenario's cluster
// holds (cluster.nodes 1048576 x cluster.gpus_per_node 1024).
inline constexpr std::int64_t kMaxMeasuredRanks = 1LL << 30;

enum class MeasurementFormat { kAuto, kOsu, kNcclTests, kNcclJson, kTrace };

// "auto", "osu", "nccl-tests", "nccl-tests-json", "trace".
const char* to_string(MeasurementFormat format);
std::optional<MeasurementFormat> parse_measurement_format(std::string_view name);
std::string measurement_format_names();  // "auto, osu, ..." for messages

struct MeasurementOptions {
  MeasurementFormat format = MeasurementFormat::kAuto;  // kAuto: recognised by content
  // For text files (or lines) that do not say how many ranks ran; a file
  // that says keeps its own count.
  std::optional<std::int64_t> ranks;
  // For files that do not say which collective they measured; a file that
  // says keeps its own.
  std::optional<CollectiveOp> op;
  // nccl-tests: read the in-place time instead of the out-of-place one.
  bool in_place = false;
  // Traces: fit the readable prefix of one cut short instead of refusing it.
  bool allow_truncated = false;
};

// Helpers shared by the readers.

// The collective a benchmark's name stands for: "OSU MPI Allreduce Latency
// Test", "all_reduce_perf", "./build/alltoall_perf_mpi"... Null for the
// benchmarks ssgd has no model of (reduce, gather, scatter, send/receive,
// the v-variants with per-rank counts, non-blocking tests whose latency
// includes overlapped compute).
std::optional<CollectiveOp> op_from_benchmark_name(std::string_view name);

// Text-table helpers shared by the line readers: strip spaces, tabs and a
// trailing CR; split on runs of spaces and tabs.
std::string_view trim_line(std::string_view s);
std::vector<std::string_view> split_whitespace(std::string_view s);

// A measured number as printed: a finite decimal > 0 ("nan", "-3", "0",
// "12us" are errors naming `where`).
double parse_positive_number(std::string_view text, const InputLocation& where);
// A whole number >= 0 (sizes, counts, ranks).
std::int64_t parse_whole_number(std::string_view text, const InputLocation& where);
// Microseconds, as OSU and nccl-tests print them, as a Duration; an error
// when it rounds to zero nanoseconds.
Duration measured_microseconds(double us, const InputLocation& where);

}  // namespace ssgd::trace
