#include "traces/collective_names.h"

#include <array>
#include <cctype>
#include <string>
#include <utility>

namespace ssgd::trace {
namespace {

using Op = v1::Collective::Op;

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Lower case, underscores dropped: "_allgather_base" -> "allgatherbase".
std::string squeeze(std::string_view name) {
  std::string n;
  for (char c : name) {
    if (c != '_') n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return n;
}

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

Op squeezed_op(const std::string& n) {
  for (const auto& [prefix, op] : kSqueezedOps) {
    if (starts_with(n, prefix)) return op;
  }
  return v1::Collective::UNKNOWN;
}

bool squeezed_barrier(const std::string& n) {
  return starts_with(n, "barrier") || starts_with(n, "monitoredbarrier");
}

}  // namespace

Op collective_op_from_nccl(std::string_view name) {
  for (const auto& [n, op] : kNcclOps) {
    if (name == n) return op;
  }
  return v1::Collective::UNKNOWN;
}

Op collective_op_from_c10d(std::string_view name) {
  const std::string n = squeeze(name);
  if (squeezed_barrier(n)) return v1::Collective::ALL_REDUCE;
  return squeezed_op(n);
}

std::optional<HostCollectiveName> parse_host_collective_name(std::string_view name) {
  HostCollectiveName out;
  if (starts_with(name, "c10d::")) {
    out.role = HostCollectiveName::Role::kCaller;
    name.remove_prefix(6);
  } else if (starts_with(name, "gloo:")) {
    out.role = HostCollectiveName::Role::kExecution;
    name.remove_prefix(5);
  } else {
    return std::nullopt;
  }
  const std::string n = squeeze(name);
  if (squeezed_barrier(n)) {
    out.barrier = true;
    return out;
  }
  out.op = squeezed_op(n);
  // c10d's other ops (c10d::_register_process_group, ...) launch nothing.
  if (out.op == v1::Collective::UNKNOWN && out.role == HostCollectiveName::Role::kCaller &&
      !starts_with(n, "gather") && !starts_with(n, "scatter")) {
    return std::nullopt;
  }
  return out;
}

bool is_communication_op(std::string_view name) {
  return starts_with(name, "c10d::") || starts_with(name, "gloo:") || starts_with(name, "nccl:") ||
         name == "record_param_comms" || name.find("ProcessGroup") != std::string_view::npos;
}

}  // namespace ssgd::trace
