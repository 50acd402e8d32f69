#pragma once
// nccl-tests' text output (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
// broadcast_perf, alltoall_perf; github.com/NVIDIA/nccl-tests):
//
//   # Collective test starting: all_reduce_perf
//   # Using devices
//   #  Rank  0 Group  0 Pid 1887 on worker-1 device  0 [0x8d] NVIDIA H100 80GB HBM3
//   #       size  count  type  redop  root   time  algbw  busbw #wrong   time ...
//   #        (B)  (elements)                 (us) (GB/s) (GB/s)          (us) ...
//       8388608  2097152  float  sum  -1   204.8  40.96  76.80      0   201.1 ...
//   # Avg bus bandwidth    : 76.8
//
// The column header says where the time columns are: the first "time" (or
// "cputime") is the out-of-place time, the one used by default, the second
// the in-place time. Rows run from the column header to "# Out of bounds
// values" / "# Avg bus bandwidth"; inside them every line must be a row.
// The size column is M as collective.h defines it for every op. 0-byte rows
// (nccl-tests -b 0) carry no bandwidth information and are skipped.
//
// The ranks: the distinct "#  Rank N" lines of the run (one per GPU), else
// the "nranks N" of NCCL's own INFO lines, else --ranks. The collective: the
// "# Collective test starting: NAME" line (nccl-tests 2.14 and later), else
// --op. Several runs may follow one another in one file. A "N: " or
// "[1,0]<stdout>:" prefix from srun -l or mpirun --tag-output is removed, and
// NCCL INFO/WARN lines are skipped.

#include <string>
#include <string_view>
#include <vector>

#include "traces/measurement.h"

namespace ssgd::trace {

std::vector<Measurement> read_nccl_tests_text(const std::string& file, std::string_view text,
                                              const MeasurementOptions& options);

// True when `head` looks like nccl-tests' text output.
bool looks_like_nccl_tests_text(std::string_view head);

}  // namespace ssgd::trace
