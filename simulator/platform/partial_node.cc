#include "simulator/platform/partial_node.h"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"

namespace ssgd::sim {
namespace {

// Where device i of `count` hangs: the explicit list, else the even spread
// Platform uses (i x ports / count).
std::vector<std::int64_t> attachments(const std::vector<std::int64_t>& given, std::int64_t count,
                                      std::int64_t ports) {
  if (!given.empty()) return given;
  std::vector<std::int64_t> out;
  for (std::int64_t i = 0; i < count; ++i) out.push_back(i * ports / count);
  return out;
}

// How many NICs GPUs 0..gpus-1 of `full` send through (NICs 0..k-1).
std::int64_t nics_used(const NodeSpec& full, std::int64_t gpus) {
  return (gpus - 1) * full.nics / full.gpus + 1;
}

// Whether a node of `gpus` GPUs and their NICs sends each GPU through the NIC
// it has in `full`: GPU g uses NIC g x nics / gpus in both.
bool keeps_nics(const NodeSpec& full, std::int64_t gpus) {
  const std::int64_t k = nics_used(full, gpus);
  for (std::int64_t g = 0; g < gpus; ++g) {
    if (g * k / gpus != g * full.nics / full.gpus) return false;
  }
  return true;
}

}  // namespace

NodeSpec partial_node(const NodeSpec& full, std::int64_t gpus, std::int64_t nodes) {
  if (gpus < 1 || gpus > full.gpus) {
    throw ParameterError("cluster.gpus_per_node",
                         fmt::format("cluster.gpus_per_node is {} but a node has {} GPUs", gpus, full.gpus));
  }
  if (gpus == full.gpus) return full;
  NodeSpec n = full;
  n.gpus = gpus;
  const std::int64_t ports = full.pcie_switches > 0 ? full.pcie_switches : full.sockets;
  if (static_cast<std::int64_t>(full.gpu_attach.size()) == full.gpus || full.gpu_attach.empty()) {
    std::vector<std::int64_t> at = attachments(full.gpu_attach, full.gpus, ports);
    n.gpu_attach.assign(at.begin(), at.begin() + gpus);
  }
  // The NICs GPUs 0..gpus-1 send through: 0..k-1.
  if (full.nics > 0) {
    const std::int64_t k = nics_used(full, gpus);
    if (nodes > 1 && !keeps_nics(full, gpus)) {
      std::string fits;
      for (std::int64_t g = 1; g < full.gpus; ++g) {
        if (keeps_nics(full, g)) fits += fmt::format("{}{}", fits.empty() ? "" : ", ", g);
      }
      throw ParameterError(
          "cluster.gpus_per_node",
          fmt::format("{} of a node's {} GPUs on {} nodes: the GPUs would not keep the NICs they "
                      "send through in the whole node ({} NICs); use {} GPUs per node, or all {}",
                      gpus, full.gpus, nodes, full.nics, fits.empty() ? "1" : fits, full.gpus));
    }
    if (static_cast<std::int64_t>(full.nic_attach.size()) == full.nics || full.nic_attach.empty()) {
      std::vector<std::int64_t> at = attachments(full.nic_attach, full.nics, ports);
      n.nic_attach.assign(at.begin(), at.begin() + k);
    }
    n.nics = k;
  }
  n.nvlink_pairs.clear();
  for (const NvlinkPair& p : full.nvlink_pairs) {
    if (p.a < gpus && p.b < gpus) n.nvlink_pairs.push_back(p);
  }
  n.ring_order.clear();
  for (const std::int64_t g : full.ring_order) {
    if (g >= 0 && g < gpus) n.ring_order.push_back(g);
  }
  return n;
}

NodeSpec rail_node(const NodeSpec& full) {
  if (full.gpus == 1) return full;
  NodeSpec n = partial_node(full, 1, 1);
  n.nic.bandwidth_bytes_per_s = full.nic.bandwidth_bytes_per_s * static_cast<double>(full.nics) /
                                static_cast<double>(full.gpus);
  return n;
}

}  // namespace ssgd::sim
