#pragma once
// `ssgd diff MEASURED SIMULATED`: one iteration of a measured trace next to
// one of its simulated replay (or of any two marked traces), task by task.
//
// Iterations: the measured one is --iteration N, else the measured trace's
// median-duration iteration; the simulated one is --simulated-iteration M,
// else the one with the measured one's number, else the simulated trace's
// median. Both are aligned to their start (the earliest start of their
// iteration/<N> ranges over all ranks): every time is relative to it.
//
// Tasks (walk/iteration_tasks.h) are matched by (rank, kind, layer) for
// forward and backward, (rank, comm, number in the iteration) for
// collectives and (rank, kind) for io, h2d and update. Differences are
// simulated minus measured, of the start, the end, or the duration (busy
// time: the summed kernel time that the layer profile, and so the
// simulator, uses); rows are ordered by the chosen one's magnitude, largest
// first, ties in task order.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "walk/iteration_tasks.h"

namespace ssgd::walk {

enum class DiffBy { kStart, kEnd, kDuration };
const char* to_string(DiffBy by);

struct DiffOptions {
  std::optional<std::int64_t> iteration;            // measured iteration number
  std::optional<std::int64_t> simulated_iteration;  // simulated iteration number
  std::optional<std::int32_t> rank;                 // only this rank
  DiffBy by = DiffBy::kDuration;
};

struct DiffRow {
  // Times relative to the start of their iteration; absent on the side
  // that lacks the task.
  std::optional<IterationTask> measured, simulated;
  std::int64_t start_diff_ns = 0;     // simulated - measured, when both
  std::int64_t end_diff_ns = 0;
  std::int64_t duration_diff_ns = 0;  // of busy time
  [[nodiscard]] std::int64_t diff(DiffBy by) const;
  [[nodiscard]] const IterationTask& task() const { return measured ? *measured : *simulated; }
};

struct IterationDiff {
  IterationSpan measured, simulated;
  std::string measured_choice;   // how the iteration was picked, in words
  std::string simulated_choice;
  std::int64_t measured_iterations = 0;  // marked in the measured trace
  DiffBy by = DiffBy::kDuration;
  std::vector<DiffRow> matched;          // largest |difference| first
  std::vector<DiffRow> measured_only;    // in task order
  std::vector<DiffRow> simulated_only;
};

// Throws ssgd::InputError for an iteration number either trace lacks, or a
// rank the measured iteration does not have.
IterationDiff diff_iterations(const TraceIterations& measured, const TraceIterations& simulated,
                              const DiffOptions& options);

// "forward conv1", "backward fc", "all-reduce #0 (fc)", "h2d", "io", "update".
std::string task_label(const IterationTask& task);

}  // namespace ssgd::walk
