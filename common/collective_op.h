#pragma once
// The collective operations, as words every room shares: the readers of
// measured collectives (traces/import) name them as the models that cost them
// (simulator/collective) do. M, the bytes of an operation, is defined in
// simulator/collective/collective.h.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ssgd {

enum class CollectiveOp { kAllReduce, kReduceScatter, kAllGather, kBroadcast, kAllToAll, kReduce };

// Names as written in scenarios, measurement files and on the command line:
// "all_reduce", "reduce_scatter", "all_gather", "broadcast", "all_to_all",
// "reduce".
const char* to_string(CollectiveOp op);
std::optional<CollectiveOp> parse_collective_op(std::string_view name);
std::string collective_op_names();  // "all_reduce, reduce_scatter, ..." for messages

// The bytes one rank of n moves through its own network stack (sent plus
// received) in `op` over a buffer of `whole_bytes` (the reduced, scattered
// or gathered whole), as ring algorithms move them (gloo's, NCCL's ring):
// all-reduce 4 (n - 1) / n of the buffer; reduce-scatter, all-gather,
// broadcast (pipelined) and all-to-all 2 (n - 1) / n; reduce (a ring
// reduce-scatter, then each chunk sent to the root, or to its owner)
// 2 (n - 1) / n (1 + 1 / n), that gather averaged over the ranks. 0 for one
// rank. The CPU a host-side library spends on a collective follows these
// bytes (simulator/perturb/interference.h, the model demand).
double bytes_through_rank(CollectiveOp op, double whole_bytes, std::int64_t nranks);

}  // namespace ssgd
