#pragma once
// The S-SGD tasks of one marked iteration of a trace, rank by rank, as
// `ssgd diff` compares them (walk/iteration_diff.h). The trace is read whole
// by the walker (walk/trace_walk.h), the one `ssgd simulate` reads traces
// through (walk/trace_profile.h), so both give work the same tasks; then any
// iteration/<N> can be cut out:
//   forward, backward  one task per layer: its forward/<layer> or
//                      backward/<layer> ranges in the iteration and the
//                      kernels the walker gives it (those launched inside
//                      its range, and by the glue rule some launched outside
//                      every range)
//   comm               one task per collective, numbered 0, 1, ... in the
//                      iteration in (communicator, sequence number) order,
//                      labelled with the layer whose backward launched it
//   h2d                all host-to-device copies of the iteration together
//   io                 all "io" marker ranges of the iteration together
//   update             the kernels launched after the iteration's last
//                      backward range ended, outside every range
// A task's start is its work's first start (a range's start when it has no
// work), its end its work's last end, its busy time the sum of its work's
// durations (what the layer profile and so the simulator use).
// Only marked iterations count: unlike profile_from_trace, a rank without
// iteration/<N> ranges has none.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dag/task.h"
#include "walk/trace_walk.h"

namespace ssgd::walk {

struct IterationTask {
  std::int32_t rank = 0;
  dag::TaskKind kind = dag::TaskKind::kForward;
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
  // truncated one unless `allow_truncated`, a bad marker name or
  // ssgd/grad_bytes mark, and a trace without iteration/<N> ranges.
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

  // What the walker found worth a warning (ignored ranges, NCCL kernels
  // standing in for collectives), one line each.
  [[nodiscard]] const std::vector<std::string>& warnings() const { return walk_.warnings(); }

 private:
  TraceIterations(std::string source, TraceWalk walk);

  std::string source_;
  TraceWalk walk_;
  std::map<std::int64_t, IterationSpan> spans_;
};

}  // namespace ssgd::walk
