#pragma once
// The names a collective operation goes by in each library whose traces
// ssgd reads, turned into the trace's vocabulary (v1::Collective::Op):
//   NCCL  "AllReduce", "AlltoAll" (profiler plugin descriptors) and the op
//         token of its kernel names ("AllReduce", "AllToAll")
//   c10d  "allreduce", "_allgather_base", "reduce_scatter_tensor_coalesced"
//         (record_param_comms' "Collective name") and the dispatcher ops
//         that launch a collective from the host: "c10d::allreduce_",
//         "c10d::broadcast_", "c10d::barrier"
//   gloo  the ranges ProcessGroupGloo's work records on its worker threads
//         while the collective runs: "gloo:all_reduce", "gloo:broadcast"
// and which host ranges of a PyTorch profile are communication, never
// compute. docs/kineto.md lists the sources of these spellings.

#include <optional>
#include <string_view>

#include "traces/proto/trace_events.pb.h"

namespace ssgd::trace {

// NCCL's function names: "AllReduce", "ReduceScatter", "AllGather",
// "Broadcast", "Reduce", "AlltoAll" or "AllToAll", "Send", "Recv". UNKNOWN
// for anything else ("SendRecv", "Gather", "").
v1::Collective::Op collective_op_from_nccl(std::string_view name);

// c10d's collective names, case and underscores ignored, by prefix:
// "allreduce_coalesced" and "_allgather_base" are ALL_REDUCE and ALL_GATHER.
// "barrier" is ALL_REDUCE: NCCL runs c10d's barrier as a one-element
// all-reduce, and this names the NCCL kernel's op. UNKNOWN for gather,
// scatter and anything else.
v1::Collective::Op collective_op_from_c10d(std::string_view name);

// An operation of every rank of its communicator on one buffer:
// all-reduce, reduce-scatter, all-gather, broadcast, reduce. The S-SGD
// replay's gradient collectives stand for these (their bytes are gradient
// bytes); send, receive, all-to-all and UNKNOWN they cannot (walk/trace_profile.h).
bool is_group_buffer_collective(v1::Collective::Op op);

// A host range of a PyTorch profile that launches or runs a collective.
struct HostCollectiveName {
  enum class Role {
    kCaller,     // c10d::<op>_ : the dispatcher op that queued the work
    kExecution,  // gloo:<op>   : the work itself, on a gloo worker thread
  };
  Role role = Role::kCaller;
  // UNKNOWN for gather, scatter and other ops without a trace op.
  v1::Collective::Op op = v1::Collective::UNKNOWN;
  // A barrier: it takes its place in the process group's queue, but is not
  // a collective of the trace.
  bool barrier = false;
};

// "c10d::allreduce_" -> caller ALL_REDUCE, "gloo:all_reduce" -> execution
// ALL_REDUCE, "c10d::barrier" / "gloo:barrier" -> barrier. nullopt for
// every other name (record_param_comms and nccl:<op> included: NCCL's
// collectives are its kernels).
std::optional<HostCollectiveName> parse_host_collective_name(std::string_view name);

// Host ranges that belong to communication and are never compute: c10d's
// ops ("c10d::..."), gloo's and NCCL's ranges ("gloo:...", "nccl:..."),
// record_param_comms, and anything naming a ProcessGroup.
bool is_communication_op(std::string_view name);

}  // namespace ssgd::trace
