#pragma once
// CPU compute of a PyTorch profile without GPU kernels, as Kernel events on
// device -1 (the host): one Kernel per outermost operator of each thread,
// so that nothing is counted twice (aten::linear holds aten::addmm, which
// is not written). Annotations are transparent; communication ranges
// (c10d::allreduce_, gloo:all_reduce) are never compute, nor is anything
// inside them. docs/kineto.md ("CPU captures") has the rules.
//
// Reads the ranges in time order (traces/import/pytorch/cpu_range.h) and keeps one stack
// of open ranges per thread.

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "traces/import/pytorch/cpu_range.h"
#include "traces/proto/trace_events.pb.h"

namespace ssgd::trace {

struct CpuComputeStats {
  std::uint64_t kernels = 0;              // outermost operators written
  std::uint64_t nested_operators = 0;     // inside another operator: not written
  std::uint64_t under_communication = 0;  // inside a c10d/gloo range: not written
};

class CpuComputeExtractor {
 public:
  using Emit = std::function<void(const v1::Event&)>;
  explicit CpuComputeExtractor(Emit emit) : emit_(std::move(emit)) {}

  // One range, in the order of traces/import/pytorch/cpu_range.h.
  void add(const CpuRange& range);

  [[nodiscard]] const CpuComputeStats& stats() const { return stats_; }

 private:
  struct Open {
    std::int64_t end_ns;
    CpuRange::Kind kind;
    bool covered;  // this range or one holding it is an operator or communication
  };
  Emit emit_;
  CpuComputeStats stats_;
  std::map<std::uint64_t, std::vector<Open>> stacks_;  // thread -> open ranges
  v1::Event event_;                                    // reused
};

}  // namespace ssgd::trace
