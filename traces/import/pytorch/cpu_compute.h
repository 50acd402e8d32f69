#pragma once
// CPU compute of a PyTorch profile without GPU kernels, as Kernel events on
// device -1 (the host): one Kernel per outermost operator of each thread,
// so that nothing is counted twice (aten::linear holds aten::addmm, which
// is not written). Annotations are transparent; communication ranges
// (c10d::allreduce_, gloo:all_reduce) are never compute, nor is anything
// inside them. docs/kineto.md ("CPU captures") has the rules.
//
// An operator can hold its thread's wait for a collective: an autograd
// node's pre-hook that waits for a sharded unit's all-gather runs inside
// `autograd::engine::evaluate_function: <Node>`, and the profiler records no
// range for the wait. Such a wait is not compute. Inside an outermost
// operator that holds other ranges, a stretch no range of its thread covers,
// at least kOperatorWaitMinNs long, in which a communication range of the
// file ends (annotations are transparent: they cover nothing), and after whose last such end the
// thread resumes within kOperatorWaitResumeNs (its next range starts, or the operator ends), is
// taken as the thread waiting from the stretch's start to that end: the
// operator is written as the pieces around it (each a Kernel of its name),
// and the cut is counted. An operator that holds no range (a leaf, whose
// own time is its work) is never cut.
//
// Reads the ranges in time order (traces/import/pytorch/cpu_range.h) and keeps one stack
// of open ranges per thread; an outermost operator is written once a range
// starting at or after its end arrives (or at finish()).

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "traces/import/pytorch/cpu_range.h"
#include "traces/proto/trace_events.pb.h"

namespace ssgd::trace {

// A wait inside an operator: at least this long (as a gap between
// operators that the walk counts as the thread waiting, walk/trace_walk.h)...
inline constexpr std::int64_t kOperatorWaitMinNs = 500'000;
// ...and the thread back at work within this of the collective's end.
inline constexpr std::int64_t kOperatorWaitResumeNs = 1'000'000;

struct CpuComputeStats {
  std::uint64_t kernels = 0;              // Kernel events written
  std::uint64_t nested_operators = 0;     // inside another operator: not written
  std::uint64_t under_communication = 0;  // inside a c10d/gloo range: not written
  std::uint64_t waits = 0;                // waits for a collective cut out of operators
  std::int64_t wait_ns = 0;               // their time
  std::uint64_t operators_cut = 0;        // operators holding at least one
};

class CpuComputeExtractor {
 public:
  using Emit = std::function<void(const v1::Event&)>;
  explicit CpuComputeExtractor(Emit emit) : emit_(std::move(emit)) {}

  // One range, in the order of traces/import/pytorch/cpu_range.h.
  void add(const CpuRange& range);
  // Writes the operators still open. Call once, after the last range.
  void finish();

  [[nodiscard]] const CpuComputeStats& stats() const { return stats_; }

 private:
  struct Open {
    std::int64_t end_ns;
    CpuRange::Kind kind;
    bool covered;  // this range or one holding it is an operator or communication
  };
  // An outermost operator not yet written, and what its thread did in it.
  struct Outer {
    CpuRange range;
    std::int64_t cursor = 0;  // the latest end of a range inside it so far
    bool holds = false;       // it holds at least one range
    std::vector<std::pair<std::int64_t, std::int64_t>> gaps;  // uncovered, long enough
  };
  void close_before(std::int64_t ns);
  void write(Outer& outer);
  void write_piece(const CpuRange& r, std::int64_t start, std::int64_t end);
  void note_inside(Outer& outer, const CpuRange& r);

  Emit emit_;
  CpuComputeStats stats_;
  std::map<std::uint64_t, std::vector<Open>> stacks_;  // thread -> open ranges
  std::map<std::uint64_t, Outer> outer_;               // thread -> its open outermost operator
  std::multiset<std::int64_t> comm_ends_;              // communication ranges' ends still needed
  v1::Event event_;                                    // reused
};

}  // namespace ssgd::trace
