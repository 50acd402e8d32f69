#include "traces/kernel_names.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

#include "traces/collective_names.h"
#include "traces/datatype_names.h"

namespace ssgd::trace {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0; start <= s.size();) {
    const auto end = std::min(s.find(sep, start), s.size());
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// The algorithm, protocol and type tokens of an NCCL >= 2.4 kernel name,
// after its op token: "Sum_f32_RING_LL", "RING_LL128_Sum_int8_t".
void read_tokens(const std::vector<std::string_view>& tokens, std::size_t first,
                 NcclKernelName& out) {
  for (std::size_t i = first; i < tokens.size(); ++i) {
    const std::string_view t = tokens[i];
    const std::string_view next = i + 1 < tokens.size() ? tokens[i + 1] : std::string_view();
    if ((t == "COLLNET" && (next == "DIRECT" || next == "CHAIN")) ||
        (t == "NVLS" && next == "TREE")) {
      out.algorithm = std::string(t) + "_" + std::string(next);
      ++i;
    } else if (t == "RING" || t == "TREE" || t == "NVLS" || t == "PAT" || t == "COLLNET") {
      out.algorithm = std::string(t);
    } else if (t == "LL" || t == "LL128" || t == "SIMPLE") {
      out.protocol = std::string(t);
    } else if (next == "t" && !datatype_from_kernel_token(std::string(t) + "_t").empty()) {
      out.datatype = std::string(datatype_from_kernel_token(std::string(t) + "_t"));  // int8_t
      ++i;
    } else if (const auto d = datatype_from_kernel_token(t); !d.empty()) {
      out.datatype = std::string(d);
    }
  }
}

// NCCL before 2.8: nccl<Op><Algo><Proto>Kernel_<redop>_<type>, e.g.
// ncclAllReduceRingLLKernel_sum_f32, ncclBroadcastTreeLL128Kernel_copy_i8.
void parse_oldest(std::string_view name, NcclKernelName& out) {
  const auto kernel = name.find("Kernel");
  if (kernel == std::string_view::npos) return;
  std::string_view head = name.substr(4, kernel - 4);  // after "nccl"
  // Longest op name first: "ReduceScatter" before "Reduce".
  for (std::string_view op :
       {"ReduceScatter", "AllReduce", "AllGather", "Broadcast", "Reduce", "AllToAll", "SendRecv"}) {
    if (starts_with(head, op)) {
      out.op = collective_op_from_nccl(op);
      head.remove_prefix(op.size());
      break;
    }
  }
  for (std::string_view algo : {"CollNet", "Ring", "Tree"}) {
    if (starts_with(head, algo)) {
      out.algorithm = std::string(algo);
      head.remove_prefix(algo.size());
      break;
    }
  }
  if (head == "LL" || head == "LL128" || head == "Simple") out.protocol = std::string(head);
  const auto tokens = split(name.substr(kernel), '_');
  if (!tokens.empty()) out.datatype = std::string(datatype_from_kernel_token(tokens.back()));
}

}  // namespace

bool is_nccl_kernel(std::string_view name) { return starts_with(name, "nccl"); }

NcclKernelName parse_nccl_kernel_name(std::string_view name) {
  NcclKernelName out;
  if (auto p = name.find('('); p != std::string_view::npos) name = name.substr(0, p);
  if (starts_with(name, "ncclDevKernel_") || starts_with(name, "ncclKernel_")) {
    name.remove_prefix(name.find('_') + 1);
    const auto tokens = split(name, '_');
    out.op = collective_op_from_nccl(tokens.empty() ? std::string_view() : tokens[0]);
    read_tokens(tokens, 1, out);
  } else if (is_nccl_kernel(name)) {
    parse_oldest(name, out);
  }
  return out;
}

bool is_optimizer_kernel(std::string_view name) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* p : {"multi_tensor_apply", "adam", "sgd", "lamb", "adagrad", "rmsprop",
                        "optimizer", "momentum_update", "fused_update"}) {
    if (n.find(p) != std::string::npos) return true;
  }
  return false;
}

std::string short_kernel_name(std::string_view name, std::size_t max) {
  if (name.starts_with("void ")) name.remove_prefix(5);
  // The parameter list: the first '(' outside template brackets.
  int depth = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>' && depth > 0) --depth;
    // "(anonymous namespace)::" is part of the name, not its parameters.
    if (name[i] == '(' && depth == 0 && i > 0 && name.substr(i).starts_with("(anonymous namespace)::")) {
      i += std::string_view("(anonymous namespace)::").size() - 1;
      continue;
    }
    if (name[i] == '(' && depth == 0 && i > 0) {
      name = name.substr(0, i);
      break;
    }
  }
  std::string out;
  if (name.size() > max) {
    // Template arguments folded: "a::b<...>".
    depth = 0;
    for (const char c : name) {
      if (c == '<') {
        if (depth++ == 0) out += "<...>";
        continue;
      }
      if (c == '>' && depth > 0) {
        --depth;
        continue;
      }
      if (depth == 0) out += c;
    }
  } else {
    out = std::string(name);
  }
  if (out.size() > max) out = out.substr(0, max > 3 ? max - 3 : 0) + "...";
  return out;
}

}  // namespace ssgd::trace
