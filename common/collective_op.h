#pragma once
// The collective operations, as words every room shares: the readers of
// measured collectives (traces/import) name them as the models that cost them
// (simulator/collective) do. M, the bytes of an operation, is defined in
// simulator/collective/collective.h.

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

}  // namespace ssgd
