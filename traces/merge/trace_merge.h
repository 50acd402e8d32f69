#pragma once
// `ssgd merge`: the per-rank trace files of one capture (DIR/rank-<r>.ssgdt,
// as the tracer writes them) into one trace on one time line.
//
// Ranks on the same host (same host name and clock kind) share its clock and
// are not shifted. Every other host is mapped to the reference host (the host
// of the lowest rank) with the ClockCalibration stored in its rank files'
// header (traces/clock_calibration.h), against that reference host by name;
// without one, the merge is refused, or done uncorrected with `force`.
// Events keep their rank and are written sorted by start time (then rank,
// then their order in their file); events without a time (external
// correlations, device descriptions, links) come first. Link events stay
// per rank (each rank's file tells what its process saw; ranks on one host
// repeat the host's links), with their host index, 0 in a rank file, set to
// the rank's host in the merged host list; the merged header's `topology`
// is the lowest rank's, unchanged.
//
// Every problem with the input is an ssgd::InputError naming the file and
// the field, raised before the output is created; the output is written
// under a temporary name and renamed, so a failed merge leaves nothing.
// All events are held in memory while they are sorted (the tracer writes
// each rank's events in buffer order, not time order).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "traces/proto/trace_file.pb.h"

namespace ssgd::trace {

struct MergeOptions {
  // Merge anyway, and say so in the result and the merged provenance: hosts
  // without a clock calibration (uncorrected), rank files cut short (their
  // readable prefix), missing ranks.
  bool force = false;
  // Merge the readable prefix of rank files cut short, and say so as
  // `force` does; the other problems `force` lets through stay errors.
  bool allow_truncated = false;
  // Progress lines (one per file read, and the writing), for stderr; may be empty.
  std::function<void(const std::string&)> progress;
};

struct MergeResult {
  int ranks = 0;
  int hosts = 0;
  std::uint64_t events = 0;
  // What `force` let through, one sentence each; also in the provenance.
  std::vector<std::string> notes;
};

// Merges DIR's rank files into `output`. Throws ssgd::InputError on bad
// input (see above), std::runtime_error on an I/O error while writing.
MergeResult merge_rank_traces(const std::filesystem::path& dir,
                              const std::filesystem::path& output, const MergeOptions& options);

}  // namespace ssgd::trace
