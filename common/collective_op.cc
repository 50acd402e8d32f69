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

double bytes_through_rank(CollectiveOp op, double whole_bytes, std::int64_t nranks) {
  if (nranks <= 1 || !(whole_bytes > 0)) return 0;
  const auto n = static_cast<double>(nranks);
  const double ring = 2 * (n - 1) / n * whole_bytes;
  switch (op) {
    case CollectiveOp::kAllReduce: return 2 * ring;
    case CollectiveOp::kReduce: return ring * (1 + 1 / n);
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kAllToAll: return ring;
  }
  return ring;
}

}  // namespace ssgd
