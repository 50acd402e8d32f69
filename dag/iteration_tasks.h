#pragma once
// The S-SGD tasks of one marked iteration of a trace, rank by rank, as
// `ssgd diff` compares them (dag/iteration_diff.h). A trace is read whole
// into per-rank marker ranges and GPU work (as dag/trace_profile.h reads
// it); then any iteration/<N> can be cut out:
//   forward, backward  one task per forward/<layer> or backward/<layer>
//                      range of the iteration: the kernels launched inside
//                      it (innermost range at the launch call's start, or
//                      the kernel's own start without one)
//   comm               one task per collective, numbered 0, 1, ... in the
//                      iteration in (communicator, sequence number) order,
//                      labelled with the layer whose backward launched it
//   h2d                all host-to-device copies of the iteration together
//   io                 all "io" marker ranges of the iteration together
//   update             all kernels of the iteration outside every layer range
// A task's start is its first GPU start (a range's start when it has no
// work), its end its last GPU end, its busy time the sum of its work's
// durations (what the layer profile and so the simulator use).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dag/task.h"
#include "traces/trace_reader.h"

namespace ssgd::dag {

struct IterationTask {
  std::int32_t rank = 0;
  TaskKind kind = TaskKind::kForward;
  std::string layer;       // forward/backward: the layer; comm: the launching layer, may be empty
  std::int64_t index = 0;  // comm: its number in the iteration; 0 otherwise
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t busy_ns = 0;
  std::int64_t bytes = 0;  // comm and h2d
};

// One iteration number over all ranks that mark it.
struct IterationSpan {
  std::int64_t number = 0;
  std::int64_t start_ns = 0;  // earliest start of its iteration/<N> ranges
  std::int64_t end_ns = 0;    // latest end
  [[nodiscard]] std::int64_t duration_ns() const { return end_ns - start_ns; }
};

class TraceIterations {
 public:
  // Reads the whole trace. Throws ssgd::InputError for a damaged trace, a
  // truncated one unless `allow_truncated`, a bad marker name, and a trace
  // without iteration/<N> ranges.
  static TraceIterations read(const std::string& path, bool allow_truncated);

  // Every marked iteration, by number.
  [[nodiscard]] const std::map<std::int64_t, IterationSpan>& iterations() const { return spans_; }
  // Iteration `number`; throws ssgd::InputError (field --iteration) naming
  // the numbers the trace has when it lacks it.
  [[nodiscard]] const IterationSpan& iteration(std::int64_t number) const;
  // The iteration of median duration (the lower median; ties by number).
  [[nodiscard]] const IterationSpan& median() const;
  // The tasks of iteration `number` on every rank that marks it, in (rank,
  // kind, layer order or index) order. Throws ssgd::InputError when there
  // is no such iteration.
  [[nodiscard]] std::vector<IterationTask> tasks(std::int64_t number) const;

  [[nodiscard]] const std::string& source() const { return source_; }

 private:
  struct Range {
    std::int64_t start_ns, end_ns;
    std::string layer;
    bool backward;
  };
  struct Work {
    TaskKind kind;  // kForward for any kernel, kComm, kH2d
    std::int64_t host_ns, start_ns, end_ns, bytes;
    std::uint64_t communicator, sequence;
  };
  struct Rank {
    std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> iterations;  // number -> range
    std::vector<Range> ranges;                           // layer ranges, by start
    std::vector<std::pair<std::int64_t, std::int64_t>> io;  // io ranges
    std::vector<Work> work;                              // by launch time
    bool has_collectives = false;                        // any Collective record
    std::vector<Work> nccl_kernels;                      // NCCL kernels, kept apart
    std::vector<std::uint64_t> nccl_correlations;        // their correlation ids
  };
  std::string source_;
  std::map<std::int32_t, Rank> ranks_;
  std::map<std::int64_t, IterationSpan> spans_;
  std::map<std::string, std::int64_t> layer_order_;  // layer -> first forward position
};

}  // namespace ssgd::dag
