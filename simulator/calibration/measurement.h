#pragma once
// Measured collective times, the input of `ssgd calibrate`, from three kinds
// of file (docs/calibration.md):
//   osu          OSU Micro-Benchmarks latency output ("# OSU MPI Allreduce
//                Latency Test"; lines "bytes latency_us" or "nodes,bytes latency_us")
//   nccl_tests   nccl-tests' text table (all_reduce_perf and friends): size,
//                count, type, redop, root, then the out-of-place time in us
//   nccl_json    nccl-tests' JSON output (-J): results[].size and
//                results[].out_of_place.time
//   trace        the collectives of an ssgd trace, matched across ranks by
//                (communicator, sequence number); one instance takes
//                max(end) - max(start): the time after the last rank arrived
// Every number is checked: a garbage line is an ssgd::InputError naming the
// file, the line (or record) and the field.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/time.h"
#include "simulator/collective/collective.h"

namespace ssgd::sim {

struct Measurement {
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::int64_t ranks = 0;
  double bytes = 0;
  Duration time;
  std::string source;  // file
  std::int64_t line = 0;
};

enum class MeasurementFormat { kAuto, kOsu, kNcclTests, kNcclJson, kTrace };
const char* to_string(MeasurementFormat f);
std::optional<MeasurementFormat> parse_measurement_format(std::string_view name);

struct MeasurementOptions {
  MeasurementFormat format = MeasurementFormat::kAuto;
  std::optional<std::int64_t> ranks;  // for lines and files that do not say
  std::optional<CollectiveOp> op;     // when the file does not say
};

// Throws ssgd::InputError; never returns an empty list.
std::vector<Measurement> read_measurements(const std::filesystem::path& path,
                                           const MeasurementOptions& options);

}  // namespace ssgd::sim
