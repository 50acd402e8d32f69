#include "common/collective_op.h"

#include "common/enum_names.h"

namespace ssgd {
namespace {

constexpr EnumNames<CollectiveOp, 6> kOpNames{{{
    {CollectiveOp::kAllReduce, "all_reduce"},
    {CollectiveOp::kReduceScatter, "reduce_scatter"},
    {CollectiveOp::kAllGather, "all_gather"},
    {CollectiveOp::kBroadcast, "broadcast"},
    {CollectiveOp::kAllToAll, "all_to_all"},
    {CollectiveOp::kReduce, "reduce"},
}}};

}  // namespace

const char* to_string(CollectiveOp op) { return kOpNames.name(op, "unknown"); }

std::optional<CollectiveOp> parse_collective_op(std::string_view name) {
  return kOpNames.parse(name);
}

std::string collective_op_names() { return kOpNames.list(); }

}  // namespace ssgd
