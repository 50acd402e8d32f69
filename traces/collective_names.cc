#include "traces/collective_names.h"

#include "traces/torch_op_names.h"

#include <array>
#include <string>
#include <utility>

namespace ssgd::trace {
namespace {

using Op = v1::Collective::Op;


constexpr std::array<std::pair<std::string_view, Op>, 9> kNcclOps{{
    {"AllReduce", v1::Collective::ALL_REDUCE},
    {"ReduceScatter", v1::Collective::REDUCE_SCATTER},
    {"AllGather", v1::Collective::ALL_GATHER},
    {"Broadcast", v1::Collective::BROADCAST},
    {"Reduce", v1::Collective::REDUCE},
    {"AlltoAll", v1::Collective::ALL_TO_ALL},  // the profiler plugin's descriptors
    {"AllToAll", v1::Collective::ALL_TO_ALL},  // kernel names
    {"Send", v1::Collective::SEND},
    {"Recv", v1::Collective::RECV},
}};

// Squeezed c10d and gloo names by prefix, most specific first
// ("reducescatter" before "reduce").
constexpr std::array<std::pair<std::string_view, Op>, 8> kSqueezedOps{{
    {"allreduce", v1::Collective::ALL_REDUCE},
    {"allgather", v1::Collective::ALL_GATHER},
    {"reducescatter", v1::Collective::REDUCE_SCATTER},
    {"alltoall", v1::Collective::ALL_TO_ALL},
    {"broadcast", v1::Collective::BROADCAST},
    {"reduce", v1::Collective::REDUCE},
    {"send", v1::Collective::SEND},
    {"recv", v1::Collective::RECV},
}};

Op folded_op(const std::string& n) {
  for (const auto& [prefix, op] : kSqueezedOps) {
    if (n.starts_with(prefix)) return op;
  }
  return v1::Collective::UNKNOWN;
}

bool folded_barrier(const std::string& n) {
  return n.starts_with("barrier") || n.starts_with("monitoredbarrier");
}

}  // namespace

Op collective_op_from_nccl(std::string_view name) {
  for (const auto& [n, op] : kNcclOps) {
    if (name == n) return op;
  }
  return v1::Collective::UNKNOWN;
}

Op collective_op_from_c10d(std::string_view name) {
  const std::string n = fold_op_name(name);
  if (folded_barrier(n)) return v1::Collective::ALL_REDUCE;
  return folded_op(n);
}

std::optional<HostCollectiveName> parse_host_collective_name(std::string_view name) {
  HostCollectiveName out;
  if (name.starts_with("c10d::")) {
    out.role = HostCollectiveName::Role::kCaller;
    name.remove_prefix(6);
  } else if (name.starts_with("gloo:")) {
    out.role = HostCollectiveName::Role::kExecution;
    name.remove_prefix(5);
  } else {
    return std::nullopt;
  }
  const std::string n = fold_op_name(name);
  if (folded_barrier(n)) {
    out.barrier = true;
    return out;
  }
  out.op = folded_op(n);
  // c10d's other ops (c10d::_register_process_group, ...) launch nothing.
  if (out.op == v1::Collective::UNKNOWN && out.role == HostCollectiveName::Role::kCaller &&
      !n.starts_with("gather") && !n.starts_with("scatter")) {
    return std::nullopt;
  }
  return out;
}

bool is_group_buffer_collective(v1::Collective::Op op) {
  switch (op) {
    case v1::Collective::ALL_REDUCE:
    case v1::Collective::REDUCE_SCATTER:
    case v1::Collective::ALL_GATHER:
    case v1::Collective::BROADCAST:
    case v1::Collective::REDUCE: return true;
    default: return false;
  }
}

bool is_communication_op(std::string_view name) {
  return name.starts_with("c10d::") || name.starts_with("gloo:") || name.starts_with("nccl:") ||
         name == "record_param_comms" || name.find("ProcessGroup") != std::string_view::npos;
}

}  // namespace ssgd::trace
