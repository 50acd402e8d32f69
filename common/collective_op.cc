#include "common/collective_op.h"

#include <array>

namespace ssgd {
namespace {

constexpr std::array kOps = {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter,
                             CollectiveOp::kAllGather, CollectiveOp::kBroadcast,
                             CollectiveOp::kAllToAll, CollectiveOp::kReduce};

}  // namespace

const char* to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return "all_reduce";
    case CollectiveOp::kReduceScatter: return "reduce_scatter";
    case CollectiveOp::kAllGather: return "all_gather";
    case CollectiveOp::kBroadcast: return "broadcast";
    case CollectiveOp::kAllToAll: return "all_to_all";
    case CollectiveOp::kReduce: return "reduce";
  }
  return "unknown";
}

std::optional<CollectiveOp> parse_collective_op(std::string_view name) {
  for (const CollectiveOp op : kOps) {
    if (name == to_string(op)) return op;
  }
  return std::nullopt;
}

std::string collective_op_names() {
  std::string names;
  for (const CollectiveOp op : kOps) {
    names += (names.empty() ? "" : ", ") + std::string(to_string(op));
  }
  return names;
}

}  // namespace ssgd
