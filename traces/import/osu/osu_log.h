#pragma once
// OSU Micro-Benchmarks collective latency output (osu_allreduce, osu_allgather,
// osu_bcast, osu_reduce_scatter, osu_alltoall), as in
// ../shared/data/bcaffe/allreduce{2,4,8}.log:
//
//   # OSU MPI Allreduce Latency Test v5.4.0
//   # Size       Avg Latency(us)
//   4                      54.50        <- bytes latency_us
//   2,4                    31.92        <- nodes,bytes latency_us
//
// Lines starting with '#' are comments; the header's benchmark name gives the
// collective (op_from_benchmark_name), else --op. The ranks are the `nodes,`
// prefix of a line when it has one (one rank per node, as in the bcaffe
// runs), else --ranks; neither is an error. Columns after the latency
// (`-f` adds min, max and iterations) must be numbers and are not used.
// OSU's size is per rank for all-gather and all-to-all, so M = size x P
// there; the buffer itself for the others.

#include <string>
#include <string_view>
#include <vector>

#include "traces/measurement.h"

namespace ssgd::trace {

std::vector<Measurement> read_osu_log(const std::string& file, std::string_view text,
                                      const MeasurementOptions& options);

// True when `head` (the first bytes of a file) holds an OSU header line
// ("# OSU ...") or OSU's column header ("# Size  Avg Latency(us)").
bool looks_like_osu_log(std::string_view head);

}  // namespace ssgd::trace
