#pragma once
// Collectives that run on the host (gloo), read from a PyTorch profile's
// CPU ranges: each `gloo:<op>` range, the work on a gloo worker thread,
// becomes a Collective (device -1, stream = the worker thread), and each
// `c10d::<op>_` range, the caller that queued it, an ApiCall FRAMEWORK with
// the same correlation id.
//
// Matching: ProcessGroupGloo's work queue is FIFO (ProcessGroupGloo::enqueue
// and runLoop), so the k-th call runs as the k-th execution, across op
// kinds; send and recv are not queued (their work runs on the caller) and
// pair among themselves. Calls of a kind that no gloo range of the file
// runs belong to another backend (NCCL, a device's own) and are left out,
// so that a GPU or mixed-backend trace does not shift the queue. In time
// order, an execution takes the oldest call still waiting; an execution
// with none waiting (the profile started after its call) and calls never
// run (it stopped before) stay unpaired. A pair of different kinds is a
// warning and is not linked; a barrier pair takes its place in the queue
// but is no collective. One gloo process group is assumed: two would each
// have their own queue.
//
// Sizes, in this order: the execution's recorded tensors (Kineto with
// record_shapes: "Input Dims" and "Input type" of the gloo range); else
// `ssgd/collective_bytes=b0,b1,...` marks, the latest one that starts at or
// before an iteration's first collective applying to that iteration: its
// k-th collective gets b_k when it has exactly that many; else 0 (a
// warning).
//
// Memory: one small record per collective, until finish().

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "traces/collective_names.h"
#include "traces/import/pytorch/cpu_range.h"
#include "traces/proto/trace_events.pb.h"

namespace ssgd::trace {

// An iteration's span, [start_ns, end_ns), in file time.
struct IterationSpan {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::string label;  // for messages: "iteration/3", "ProfilerStep#3"
};

// An ssgd/collective_bytes mark: where it starts (file time) and its list.
struct CollectiveSizesMark {
  std::int64_t start_ns = 0;
  std::vector<std::int64_t> sizes_bytes;
};

struct HostCollectiveOptions {
  std::int32_t rank = 0;
  std::int32_t world_size = 0;  // nranks of every collective (one process group)
  // Correlation ids are given from here up.
  std::uint64_t first_correlation_id = 1;
  // The iterations, in time order, for the sizes below.
  std::vector<IterationSpan> iterations;
  // ssgd/collective_bytes marks, in any order.
  std::vector<CollectiveSizesMark> size_marks;
};

struct HostCollectiveStats {
  std::uint64_t collectives = 0;      // Collective events written
  std::uint64_t framework_calls = 0;  // ApiCall FRAMEWORK events written
  std::uint64_t linked = 0;           // of them, call and execution paired
  std::uint64_t calls_without_execution = 0;
  std::uint64_t executions_without_call = 0;
  std::uint64_t kind_mismatches = 0;      // paired by the queue, different ops: not linked
  std::uint64_t barriers = 0;             // barrier pairs: no event
  std::uint64_t unknown_ops = 0;          // gather, scatter, ...: written with op UNKNOWN
  std::uint64_t other_backend_calls = 0;  // c10d calls of kinds gloo never ran: left out
  std::uint64_t sized_from_shapes = 0;    // size_bytes from the recorded tensors
  std::uint64_t sized = 0;                // size_bytes from ssgd/collective_bytes
  // Iterations whose collective count differs from their mark's list, e.g.
  // "iteration/0: 1 collective(s), its ssgd/collective_bytes mark lists 4".
  std::vector<std::string> size_mismatches;
  // Iterations with collectives but no size mark before their first one.
  std::uint64_t iterations_without_size_mark = 0;
  std::uint64_t outside_iterations = 0;  // launched outside every iteration
};

class HostCollectiveMatcher {
 public:
  using Emit = std::function<void(const v1::Event&)>;

  // One range, in the order of traces/import/pytorch/cpu_range.h; only c10d::<op>_ and
  // gloo:<op> ranges are kept.
  void add(const CpuRange& range);
  // Emits the events, in launch order. Call once.
  HostCollectiveStats finish(const HostCollectiveOptions& options, const Emit& emit);

  [[nodiscard]] std::size_t pending() const { return sides_.size(); }

 private:
  struct Side {
    CpuRange range;
    HostCollectiveName what;
  };
  struct Pair {
    const Side* call = nullptr;
    const Side* execution = nullptr;
  };
  std::vector<Side> sides_;  // calls and executions, in time order
};

}  // namespace ssgd::trace
