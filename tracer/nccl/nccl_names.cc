#include "tracer/nccl/nccl_names.h"

#include <array>
#include <utility>

namespace ssgd::tracer {
namespace {

struct DatatypeName {
  std::string_view nccl;
  std::string_view name;
  std::int64_t size_bytes;
};

constexpr std::array<DatatypeName, 12> kDatatypes{{
    {"ncclInt8", "int8", 1},           {"ncclUint8", "uint8", 1},
    {"ncclInt32", "int32", 4},         {"ncclUint32", "uint32", 4},
    {"ncclInt64", "int64", 8},         {"ncclUint64", "uint64", 8},
    {"ncclFloat16", "float16", 2},     {"ncclFloat32", "float32", 4},
    {"ncclFloat64", "float64", 8},     {"ncclBfloat16", "bfloat16", 2},
    {"ncclFloat8e4m3", "float8e4m3", 1}, {"ncclFloat8e5m2", "float8e5m2", 1},
}};

constexpr std::array<std::pair<std::string_view, CollectiveOp>, 8> kOps{{
    {"AllReduce", CollectiveOp::kAllReduce},
    {"ReduceScatter", CollectiveOp::kReduceScatter},
    {"AllGather", CollectiveOp::kAllGather},
    {"Broadcast", CollectiveOp::kBroadcast},
    {"Reduce", CollectiveOp::kReduce},
    {"AlltoAll", CollectiveOp::kAllToAll},
    {"Send", CollectiveOp::kSend},
    {"Recv", CollectiveOp::kRecv},
}};

}  // namespace

CollectiveOp collective_op_from_nccl(const char* func) noexcept {
  if (func == nullptr) return CollectiveOp::kUnknown;
  const std::string_view f(func);
  for (const auto& [name, op] : kOps) {
    if (f == name) return op;
  }
  return CollectiveOp::kUnknown;
}

std::string_view datatype_from_nccl(const char* datatype) noexcept {
  if (datatype == nullptr) return {};
  const std::string_view d(datatype);
  for (const auto& t : kDatatypes) {
    if (d == t.nccl) return t.name;
  }
  return d;
}

std::int64_t datatype_size_bytes(std::string_view datatype) noexcept {
  for (const auto& t : kDatatypes) {
    if (datatype == t.name) return t.size_bytes;
  }
  return 0;
}

}  // namespace ssgd::tracer
