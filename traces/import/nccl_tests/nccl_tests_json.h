#pragma once
// nccl-tests' JSON output (`-J FILE.json`, format version 3 in nccl-tests
// 2.17; src/util.cu writes it):
//
//   {"version": 3, "args": ["./build/all_reduce_perf", "-b", "8", ...],
//    "config": {"nthreads": 1, "ngpus": 1, ...,
//               "devices": [{"rank": 0, "hostname": "a", ...}, ...]},
//    "results": [{"size": 8388608, "count": 2097152, "type": "float", ...,
//                 "out_of_place": {"time": 204.8, "alg_bw": 40.96, "bus_bw": 76.8, "nwrong": 0},
//                 "in_place": {...}}, ...]}
//
// The collective comes from the program name, args[0] (else --op). The ranks
// are devices x nthreads x ngpus: nccl-tests lists one device per process
// (else --ranks). The time is results[i].out_of_place.time in us ("cpu_time"
// with -C), or in_place with MeasurementOptions::in_place. nccl-tests writes
// the whole document on one line, so errors name the JSON path, such as
// 'results[3].out_of_place.time', instead of a line. 0-byte results are
// skipped, as in the text reader.

#include <string>
#include <string_view>
#include <vector>

#include "traces/measurement.h"

namespace ssgd::trace {

std::vector<Measurement> read_nccl_tests_json(const std::string& file, std::string_view text,
                                              const MeasurementOptions& options);

}  // namespace ssgd::trace
