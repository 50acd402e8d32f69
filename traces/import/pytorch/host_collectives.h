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
// but is no collective. One gloo process group is assumed, but for the ops
// that an ssgd/collective_ranks/<op> mark puts on a group of their own
// (below): each such op's calls and executions pair among themselves.
//
// Sizes, in this order: the execution's recorded tensors (Kineto with
// record_shapes: "Input Dims" and "Input type" of the gloo range); else
// the marks, the latest one of each kind that starts at or before an
// iteration's first collective applying to that iteration:
// `ssgd/collective_bytes/<op>=b0,b1,...` sizes that op's collectives, the
// k-th of them in launch order getting b_k when the iteration has exactly
// that many; `ssgd/collective_bytes=b0,b1,...` sizes the collectives of the
// ops without such a mark, the same way; else 0 (a warning). (With two
// process groups the interleaving of their collectives varies from one
// iteration to the next, each op's own order does not.)
//
// Groups: every collective runs on the world (nranks = world_size, one
// communicator) unless an `ssgd/collective_ranks/<op>` mark (the latest at or
// before its iteration's first collective, or before its launch outside
// every iteration) gives its op a group other than the world, with sequence
// numbers of its own. Listed (`=<r0>,<r1>,...`, this rank's group): nranks
// the members, rank = this rank's place among them, and one communicator for
// the group, the same in every member's file. A count alone (`=n`): nranks
// n, rank = rank % n (right for a group of consecutive ranks, as FSDP's
// shard groups are; the importer warns that it is assumed), and a
// communicator per op and per rank, since which ranks share it is unknown.
//
// Memory: one small record per collective, until finish().

#include <cstdint>
#include <functional>
#include <map>
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

// An ssgd/collective_bytes mark: where it starts (file time), its list,
// and its op for ssgd/collective_bytes/<op> (none: every op's).
struct CollectiveSizesMark {
  std::int64_t start_ns = 0;
  std::vector<std::int64_t> sizes_bytes;
  std::optional<v1::Collective::Op> op;
};

// An ssgd/collective_ranks/<op> mark: where it starts, its op, its ranks
// (how many, and, where the mark lists them, which: this rank's group in
// the group's order; the importer has checked that it holds this rank).
struct CollectiveGroupMark {
  std::int64_t start_ns = 0;
  v1::Collective::Op op = v1::Collective::UNKNOWN;
  std::int32_t ranks = 0;
  std::vector<std::int32_t> members;
};

struct HostCollectiveOptions {
  std::int32_t rank = 0;
  std::int32_t world_size = 0;  // nranks of every collective without a group mark
  // Correlation ids are given from here up.
  std::uint64_t first_correlation_id = 1;
  // The iterations, in time order, for the sizes below.
  std::vector<IterationSpan> iterations;
  // ssgd/collective_bytes and ssgd/collective_bytes/<op> marks, in any order.
  std::vector<CollectiveSizesMark> size_marks;
  // ssgd/collective_ranks/<op> marks, in any order.
  std::vector<CollectiveGroupMark> group_marks;
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
  std::uint64_t sized = 0;                // size_bytes from ssgd/collective_bytes marks
  // Of them, from ssgd/collective_bytes/<op> marks, by op name.
  std::map<std::string, std::uint64_t> sized_per_op;
  // Collectives given a group other than the world by ssgd/collective_ranks,
  // by "<op> over <n> ranks".
  std::map<std::string, std::uint64_t> grouped;
  // Iterations whose collective count differs from their mark's list, e.g.
  // "iteration/0: 1 collective(s), its ssgd/collective_bytes mark lists 4",
  // "iteration/0: 3 all_reduce collective(s), its
  // ssgd/collective_bytes/all_reduce mark lists 2".
  std::vector<std::string> size_mismatches;
  // Iterations with collectives that no size mark before their first one
  // covers.
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
