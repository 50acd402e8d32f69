#include "simulator/platform/platform.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"
#include "common/units.h"
#include "simulator/platform/link_preset.h"

namespace ssgd::sim {
namespace {

constexpr std::int64_t kMaxLocalVertices = 4096;

// A bad value is a ParameterError naming the scenario key that sets it
// (`key`, e.g. "platform.nic": `key`.bandwidth and `key`.latency, or `key`
// itself for a link without keys of its own), so that the scenario can say
// where it was given (located_error).
void check_link(const LinkSpec& link, std::string_view what, std::string_view key,
                bool own_keys = true) {
  const auto key_of = [&](std::string_view leaf) {
    return own_keys ? fmt::format("{}.{}", key, leaf) : std::string(key);
  };
  if (!(link.bandwidth_bytes_per_s > 0) || !std::isfinite(link.bandwidth_bytes_per_s)) {
    throw ParameterError(key_of("bandwidth"),
                         fmt::format("{} bandwidth must be greater than zero, got {}", what,
                                     link.bandwidth_bytes_per_s));
  }
  if (link.latency < Duration::zero()) {
    throw ParameterError(key_of("latency"),
                         fmt::format("{} latency must not be negative", what));
  }
}

void check_count(std::int64_t value, std::int64_t lo, std::string_view what, std::string key) {
  if (value < lo || value > kMaxLocalVertices) {
    throw ParameterError(std::move(key), fmt::format("{} must be between {} and {}, got {}", what,
                                                     lo, kMaxLocalVertices, value));
  }
}

}  // namespace

const char* to_string(LinkKind kind) {
  switch (kind) {
    case LinkKind::kPcie: return "pcie";
    case LinkKind::kSocket: return "socket";
    case LinkKind::kNvlink: return "nvlink";
    case LinkKind::kNic: return "nic";
    case LinkKind::kFabric: return "fabric";
  }
  return "?";
}

const char* to_string(NvlinkTopology t) {
  switch (t) {
    case NvlinkTopology::kNone: return "none";
    case NvlinkTopology::kMesh: return "mesh";
    case NvlinkTopology::kSwitch: return "switch";
  }
  return "?";
}

const char* to_string(Transport t) {
  switch (t) {
    case Transport::kNative: return "native";
    case Transport::kTcp: return "tcp";
    case Transport::kRdma: return "rdma";
  }
  return "?";
}

const char* to_string(GpuArch a) {
  switch (a) {
    case GpuArch::kVolta: return "volta";
    case GpuArch::kAmpere: return "ampere";
    case GpuArch::kHopper: return "hopper";
    case GpuArch::kBlackwell: return "blackwell";
  }
  return "?";
}

const char* to_string(CpuVendor v) {
  switch (v) {
    case CpuVendor::kIntel: return "intel";
    case CpuVendor::kAmd: return "amd";
    case CpuVendor::kArm: return "arm";
  }
  return "?";
}

const char* to_string(PciePath p) {
  switch (p) {
    case PciePath::kPix: return "PIX";
    case PciePath::kPxb: return "PXB";
    case PciePath::kPhb: return "PHB";
    case PciePath::kSys: return "SYS";
  }
  return "?";
}

const char* to_string(FabricKind k) {
  switch (k) {
    case FabricKind::kSwitch: return "switch";
    case FabricKind::kFatTree: return "fat_tree";
  }
  return "?";
}

Platform::Platform(PlatformSpec spec, std::int64_t nodes) : spec_(std::move(spec)), nodes_(nodes) {
  const NodeSpec& n = spec_.node;
  if (nodes < 1) {
    throw ParameterError("cluster.nodes", fmt::format("nodes must be at least 1, got {}", nodes));
  }
  check_count(n.gpus, 1, "GPUs per node", "cluster.gpus_per_node");
  check_count(n.sockets, 1, "sockets per node", "platform.pcie.sockets");
  check_count(n.pcie_switches, 0, "PCIe switches per node", "platform.pcie.switches");
  check_count(n.nics, nodes > 1 ? 1 : 0, "NICs per node", "platform.nic.count");
  check_link(n.pcie, "the PCIe link", "platform.pcie");
  // The link between sockets has no key of its own: platform.pcie.sockets adds it.
  if (n.sockets > 1) check_link(n.socket_link, "the socket link", "platform.pcie.sockets", false);
  if (n.nvlink != NvlinkTopology::kNone) check_link(n.nvlink_link, "the NVLink", "platform.nvlink");
  if (n.nvls && n.nvlink != NvlinkTopology::kSwitch) {
    throw ParameterError("platform.nvlink.nvls",
                         "NVLink SHARP (platform.nvlink.nvls) needs an NVSwitch "
                         "(platform.nvlink.topology: switch)");
  }
  if (n.nics > 0) check_link(n.nic, "the NIC", "platform.nic");
  if (spec_.fabric.kind == FabricKind::kFatTree) {
    if (spec_.fabric.nodes_per_leaf < 1) {
      throw ParameterError("platform.fabric.nodes_per_leaf",
                           fmt::format("fabric nodes per leaf must be at least 1, got {}",
                                       spec_.fabric.nodes_per_leaf));
    }
    if (!(spec_.fabric.oversubscription >= 1.0) || !std::isfinite(spec_.fabric.oversubscription)) {
      throw ParameterError("platform.fabric.oversubscription", fmt::format(
          "fabric oversubscription must be at least 1 (1 = non-blocking), got {}",
          spec_.fabric.oversubscription));
    }
  }
  if (spec_.fabric.switch_latency < Duration::zero()) {
    throw ParameterError("platform.fabric.switch_latency",
                         "fabric switch latency must not be negative");
  }
  for (int k = 0; k < kLinkKindCount; ++k) {
    const double b = spec_.bandwidth_factor[static_cast<std::size_t>(k)];
    const double l = spec_.latency_factor[static_cast<std::size_t>(k)];
    if (!(b > 0) || !std::isfinite(b) || !(l >= 0) || !std::isfinite(l)) {
      throw ParameterError(!(b > 0) || !std::isfinite(b) ? "perturb.bandwidth_factors"
                                                         : "perturb.latency_factors",
                           fmt::format(
          "the {} link factors must be finite, bandwidth > 0 and latency >= 0, got {} and {}",
          to_string(static_cast<LinkKind>(k)), b, l));
    }
  }
  spec_.fabric.switch_latency =
      scale(spec_.fabric.switch_latency, spec_.latency_factor[static_cast<std::size_t>(LinkKind::kFabric)]);
  if (n.ring_order.empty()) {
    for (std::int64_t g = 0; g < n.gpus; ++g) spec_.node.ring_order.push_back(g);
  } else {
    std::vector<bool> seen(static_cast<std::size_t>(n.gpus), false);
    if (static_cast<std::int64_t>(n.ring_order.size()) != n.gpus) {
      throw ParameterError("platform.nvlink.ring_order",
                           fmt::format("the ring order lists {} GPUs but a node has {}",
                                       n.ring_order.size(), n.gpus));
    }
    for (auto g : n.ring_order) {
      if (g < 0 || g >= n.gpus || seen[static_cast<std::size_t>(g)]) {
        throw ParameterError("platform.nvlink.ring_order", fmt::format(
            "the ring order must list each GPU 0..{} once; {} is out of range or repeated",
            n.gpus - 1, g));
      }
      seen[static_cast<std::size_t>(g)] = true;
    }
  }
  build_node_template();
  compute_local_routes();
  check_connected();
  // Copy the template per node.
  const auto lv = static_cast<std::uint32_t>(local_kind_.size());
  const auto nodes_u = static_cast<std::size_t>(nodes_);
  vertex_kind_.reserve(nodes_u * lv + 64);
  links_.reserve(nodes_u * local_links_.size());
  for (std::int64_t node = 0; node < nodes_; ++node) {
    const auto base = static_cast<VertexId>(static_cast<std::size_t>(node) * lv);
    vertex_kind_.insert(vertex_kind_.end(), local_kind_.begin(), local_kind_.end());
    for (PlatformLink l : local_links_) {
      l.from += base;
      l.to += base;
      links_.push_back(l);
    }
  }
  build_fabric();
}

LinkSpec Platform::scaled(const LinkSpec& link, LinkKind kind) const {
  const auto k = static_cast<std::size_t>(kind);
  return {link.bandwidth_bytes_per_s * spec_.bandwidth_factor[k], scale(link.latency, spec_.latency_factor[k])};
}

std::uint32_t Platform::add_local_link(std::uint32_t from, std::uint32_t to, const LinkSpec& spec,
                                       LinkKind kind) {
  const LinkSpec s = scaled(spec, kind);
  local_links_.push_back({from, to, s.bandwidth_bytes_per_s, s.latency, kind});
  return static_cast<std::uint32_t>(local_links_.size() - 1);
}

void Platform::build_node_template() {
  const NodeSpec& n = spec_.node;
  const auto add_vertex = [this](VertexKind kind, std::string name) {
    local_kind_.push_back(kind);
    local_vertex_name_.push_back(std::move(name));
    return static_cast<std::uint32_t>(local_kind_.size() - 1);
  };
  for (std::int64_t g = 0; g < n.gpus; ++g) add_vertex(VertexKind::kGpu, fmt::format("gpu{}", g));
  first_cpu_ = static_cast<std::uint32_t>(local_kind_.size());
  for (std::int64_t c = 0; c < n.sockets; ++c) add_vertex(VertexKind::kCpu, fmt::format("cpu{}", c));
  first_switch_ = static_cast<std::uint32_t>(local_kind_.size());
  for (std::int64_t w = 0; w < n.pcie_switches; ++w) {
    add_vertex(VertexKind::kPcieSwitch, fmt::format("pcie-switch{}", w));
  }
  std::uint32_t nvswitch = 0;
  if (n.nvlink == NvlinkTopology::kSwitch) {
    nvswitch = add_vertex(VertexKind::kNvSwitch, "nvswitch");
    nvswitch_local_ = nvswitch;
  }
  first_nic_ = static_cast<std::uint32_t>(local_kind_.size());
  for (std::int64_t k = 0; k < n.nics; ++k) add_vertex(VertexKind::kNic, fmt::format("nic{}", k));

  const auto both = [this](std::uint32_t a, std::uint32_t b, const LinkSpec& s, LinkKind kind) {
    add_local_link(a, b, s, kind);
    add_local_link(b, a, s, kind);
  };
  // The PCIe tree. A device attaches to switch i (or socket i without switches).
  const std::int64_t ports = n.pcie_switches > 0 ? n.pcie_switches : n.sockets;
  const auto port_vertex = [&](std::int64_t i) {
    return static_cast<std::uint32_t>((n.pcie_switches > 0 ? first_switch_ : first_cpu_) + i);
  };
  if (!n.gpu_attach.empty() && static_cast<std::int64_t>(n.gpu_attach.size()) != n.gpus) {
    throw ParameterError("platform.pcie.gpu_attach",
                         fmt::format("the PCIe attachment list names {} GPUs but a node has {}",
                                     n.gpu_attach.size(), n.gpus));
  }
  for (std::int64_t g = 0; g < n.gpus; ++g) {
    const std::int64_t at =
        n.gpu_attach.empty() ? g * ports / n.gpus : n.gpu_attach[static_cast<std::size_t>(g)];
    if (at < -1 || at >= ports) {
      throw ParameterError("platform.pcie.gpu_attach", fmt::format(
          "GPU {} is attached to PCIe {} {}, but a node has {} (use -1 for none)", g,
          n.pcie_switches > 0 ? "switch" : "socket", at, ports));
    }
    if (at >= 0) both(static_cast<std::uint32_t>(g), port_vertex(at), n.pcie, LinkKind::kPcie);
  }
  for (std::int64_t w = 0; w < n.pcie_switches; ++w) {
    both(port_vertex(w), static_cast<std::uint32_t>(first_cpu_ + w * n.sockets / n.pcie_switches),
         n.pcie, LinkKind::kPcie);
  }
  for (std::int64_t c = 0; c + 1 < n.sockets; ++c) {
    both(static_cast<std::uint32_t>(first_cpu_ + c), static_cast<std::uint32_t>(first_cpu_ + c + 1),
         n.socket_link, LinkKind::kSocket);
  }
  if (!n.nic_attach.empty() && static_cast<std::int64_t>(n.nic_attach.size()) != n.nics) {
    throw ParameterError("platform.nic.count",
                         fmt::format("the PCIe attachment list names {} NICs but a node has {}",
                                     n.nic_attach.size(), n.nics));
  }
  for (std::int64_t k = 0; k < n.nics; ++k) {
    const std::int64_t at =
        n.nic_attach.empty() ? k * ports / n.nics : n.nic_attach[static_cast<std::size_t>(k)];
    if (at < 0 || at >= ports) {
      throw std::invalid_argument(fmt::format("NIC {} is attached to PCIe port {} of {}", k, at, ports));
    }
    both(static_cast<std::uint32_t>(first_nic_ + k), port_vertex(at), n.pcie, LinkKind::kPcie);
  }
  if (n.nvlink == NvlinkTopology::kMesh) {
    for (const auto& p : n.nvlink_pairs) {
      for (const std::int64_t g : {p.a, p.b}) {
        if (g < 0 || g >= n.gpus) {
          throw ParameterError("platform.nvlink.pairs",
                               fmt::format("NVLink pair {}-{}: GPU {} is out of range: a node has "
                                           "{} GPU{} (0..{})",
                                           p.a, p.b, g, n.gpus, n.gpus == 1 ? "" : "s", n.gpus - 1));
        }
      }
      if (p.a == p.b) {
        throw ParameterError("platform.nvlink.pairs",
                             fmt::format("NVLink pair {}-{} joins GPU {} to itself", p.a, p.b, p.a));
      }
      if (p.links < 1) {
        throw ParameterError("platform.nvlink.pairs",
                             fmt::format("NVLink pair {}-{} needs at least one link, got {}", p.a,
                                         p.b, p.links));
      }
      LinkSpec s = n.nvlink_link;
      s.bandwidth_bytes_per_s *= static_cast<double>(p.links);
      both(static_cast<std::uint32_t>(p.a), static_cast<std::uint32_t>(p.b), s, LinkKind::kNvlink);
    }
  } else if (n.nvlink == NvlinkTopology::kSwitch) {
    for (std::int64_t g = 0; g < n.gpus; ++g) {
      both(static_cast<std::uint32_t>(g), nvswitch, n.nvlink_link, LinkKind::kNvlink);
    }
  }
}

// Dijkstra from every local vertex over the node template. The cost of a path
// is its time per byte for a large message (sum of 1/bandwidth), with a tiny
// per-hop term so equal-bandwidth paths prefer fewer hops; GPUs and NICs are
// endpoints only. Ties go to the lower vertex index, so routes never change
// between runs.
void Platform::compute_local_routes() {
  const std::size_t n = local_kind_.size();
  std::vector<std::vector<std::uint32_t>> out(n);
  for (std::uint32_t l = 0; l < local_links_.size(); ++l) out[local_links_[l].from].push_back(l);
  local_routes_.assign(n * n, LocalRoute{});
  constexpr double kHop = 1e-18;
  // The generic platform's free PCIe hop (NodeSpec::pcie_free) joins GPU
  // and NIC only: GPUs that NVLink joins talk over NVLink, never through it.
  const bool gpus_off_pcie = spec_.node.pcie_free && spec_.node.nvlink != NvlinkTopology::kNone;
  std::vector<double> cost(n);
  std::vector<std::uint32_t> via(n);
  const auto search = [&](std::uint32_t src, bool skip_pcie) {
    cost.assign(n, std::numeric_limits<double>::infinity());
    via.assign(n, std::numeric_limits<std::uint32_t>::max());
    using Entry = std::pair<double, std::uint32_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
    cost[src] = 0;
    queue.push({0.0, src});
    while (!queue.empty()) {
      const auto [c, v] = queue.top();
      queue.pop();
      if (c > cost[v]) continue;
      const bool endpoint = local_kind_[v] == VertexKind::kGpu || local_kind_[v] == VertexKind::kNic;
      if (v != src && endpoint) continue;  // does not forward
      for (std::uint32_t l : out[v]) {
        const auto& link = local_links_[l];
        if (skip_pcie && link.kind == LinkKind::kPcie) continue;
        const double next = c + 1.0 / link.bandwidth_bytes_per_s + kHop;
        if (next < cost[link.to]) {
          cost[link.to] = next;
          via[link.to] = l;
          queue.push({next, link.to});
        }
      }
    }
  };
  const auto record = [&](std::uint32_t src, std::uint32_t dst) {
    LocalRoute& r = local_routes_[src * n + dst];
    r.reachable = true;
    r.bandwidth_bytes_per_s = std::numeric_limits<double>::infinity();
    if (dst == src) return;
    for (std::uint32_t v = dst; v != src;) {
      const auto l = via[v];
      r.links.push_back(l);
      r.latency = max(r.latency, local_links_[l].latency);
      r.bandwidth_bytes_per_s = std::min(r.bandwidth_bytes_per_s, local_links_[l].bandwidth_bytes_per_s);
      v = local_links_[l].from;
    }
    std::reverse(r.links.begin(), r.links.end());
  };
  for (std::uint32_t src = 0; src < n; ++src) {
    const bool from_gpu = local_kind_[src] == VertexKind::kGpu;
    search(src, false);
    for (std::uint32_t dst = 0; dst < n; ++dst) {
      if (dst == src || std::isfinite(cost[dst])) {
        if (!(gpus_off_pcie && from_gpu && local_kind_[dst] == VertexKind::kGpu)) record(src, dst);
      }
    }
    if (gpus_off_pcie && from_gpu) {
      search(src, true);
      for (std::uint32_t dst = 0; dst < n; ++dst) {
        if (local_kind_[dst] == VertexKind::kGpu && (dst == src || std::isfinite(cost[dst]))) {
          record(src, dst);
        }
      }
    }
  }
}

void Platform::check_connected() const {
  const NodeSpec& n = spec_.node;
  for (std::int64_t a = 0; a < n.gpus; ++a) {
    for (std::int64_t b = 0; b < n.gpus; ++b) {
      // Only a GPU on no PCIe path (gpu_attach -1) can be cut off.
      if (!local_route(static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b)).reachable) {
        throw ParameterError("platform.pcie.gpu_attach", fmt::format(
            "GPU {} of a node cannot reach GPU {}: it is on no PCIe path and no NVLink joins them",
            a, b));
      }
    }
    if (nodes_ > 1) {
      const auto nic = nic_of(static_cast<std::uint32_t>(a));
      if (!local_route(static_cast<std::uint32_t>(a), nic).reachable ||
          !local_route(nic, static_cast<std::uint32_t>(a)).reachable) {
        throw ParameterError("platform.pcie.gpu_attach", fmt::format(
            "GPU {} of a node cannot reach its NIC ({}), so it cannot talk to other nodes", a,
            local_vertex_name_[nic]));
      }
    }
  }
}

const Platform::LocalRoute& Platform::local_route(std::uint32_t from, std::uint32_t to) const {
  return local_routes_[from * local_kind_.size() + to];
}

std::uint32_t Platform::nic_of(std::uint32_t local) const {
  const NodeSpec& n = spec_.node;
  if (local < n.gpus) {
    return static_cast<std::uint32_t>(first_nic_ + static_cast<std::int64_t>(local) * n.nics / n.gpus);
  }
  return first_nic_;
}

void Platform::build_fabric() {
  const FabricSpec& f = spec_.fabric;
  const NodeSpec& n = spec_.node;
  first_fabric_vertex_ = static_cast<VertexId>(vertex_kind_.size());
  first_fabric_link_ = static_cast<LinkId>(links_.size());
  if (n.nics == 0) return;
  const std::int64_t groups =
      f.kind == FabricKind::kFatTree ? (nodes_ + f.nodes_per_leaf - 1) / f.nodes_per_leaf : 1;
  leaves_ = f.kind == FabricKind::kFatTree && f.rail_optimized ? groups * n.nics : groups;
  for (std::int64_t l = 0; l < leaves_; ++l) vertex_kind_.push_back(VertexKind::kLeaf);
  const VertexId spine = static_cast<VertexId>(vertex_kind_.size());
  if (f.kind == FabricKind::kFatTree) vertex_kind_.push_back(VertexKind::kSpine);
  const auto lv = static_cast<VertexId>(local_kind_.size());
  std::vector<double> leaf_down_capacity(static_cast<std::size_t>(leaves_), 0.0);
  for (std::int64_t node = 0; node < nodes_; ++node) {
    for (std::int64_t k = 0; k < n.nics; ++k) {
      const VertexId nic = static_cast<VertexId>(node) * lv + first_nic_ + static_cast<VertexId>(k);
      const VertexId leaf = leaf_of(node, k);
      const LinkSpec line = scaled(n.nic, LinkKind::kNic);
      links_.push_back({nic, leaf, line.bandwidth_bytes_per_s, line.latency, LinkKind::kNic});
      links_.push_back({leaf, nic, line.bandwidth_bytes_per_s, line.latency, LinkKind::kNic});
      // The leaf is sized for the NICs' unscaled lines: a NIC factor leaves the switch as it is.
      leaf_down_capacity[leaf - first_fabric_vertex_] += n.nic.bandwidth_bytes_per_s;
    }
  }
  if (f.kind == FabricKind::kFatTree) {
    for (std::int64_t l = 0; l < leaves_; ++l) {
      const double up = leaf_down_capacity[static_cast<std::size_t>(l)] / f.oversubscription *
                        spec_.bandwidth_factor[static_cast<std::size_t>(LinkKind::kFabric)];
      const VertexId leaf = first_fabric_vertex_ + static_cast<VertexId>(l);
      links_.push_back({leaf, spine, up, f.switch_latency, LinkKind::kFabric});
      links_.push_back({spine, leaf, up, f.switch_latency, LinkKind::kFabric});
    }
  }
}

std::optional<LinkId> Platform::shifted_link(LinkId link, std::int64_t nodes) const {
  if (nodes <= 0) return std::nullopt;
  const auto local = static_cast<std::int64_t>(local_links_.size());
  const auto l = static_cast<std::int64_t>(link);
  if (l < nodes_ * local) {  // a node's own link
    if (l / local + nodes >= nodes_) return std::nullopt;
    return static_cast<LinkId>(l + nodes * local);
  }
  const std::int64_t nics = spec_.node.nics;
  const std::int64_t f = l - static_cast<std::int64_t>(first_fabric_link_);
  if (f < 2 * nodes_ * nics) {  // a NIC's line, up or down
    if (f / (2 * nics) + nodes >= nodes_) return std::nullopt;
    return static_cast<LinkId>(l + 2 * nodes * nics);
  }
  const FabricSpec& fab = spec_.fabric;
  if (fab.kind != FabricKind::kFatTree || nodes % fab.nodes_per_leaf != 0) return std::nullopt;
  const std::int64_t leaf = (f - 2 * nodes_ * nics) / 2;
  const std::int64_t per_group = fab.rail_optimized ? nics : 1;
  const std::int64_t shifted = leaf + nodes / fab.nodes_per_leaf * per_group;
  if (shifted >= leaves_) return std::nullopt;
  return static_cast<LinkId>(l + 2 * (shifted - leaf));
}

VertexId Platform::leaf_of(std::int64_t node, std::int64_t nic_index) const {
  const FabricSpec& f = spec_.fabric;
  if (f.kind == FabricKind::kSwitch) return first_fabric_vertex_;
  const std::int64_t group = node / f.nodes_per_leaf;
  const std::int64_t leaf = f.rail_optimized ? group * spec_.node.nics + nic_index : group;
  return first_fabric_vertex_ + static_cast<VertexId>(leaf);
}

LinkId Platform::nic_up(std::int64_t node, std::int64_t nic) const {
  return first_fabric_link_ + static_cast<LinkId>(2 * (node * spec_.node.nics + nic));
}
LinkId Platform::nic_down(std::int64_t node, std::int64_t nic) const { return nic_up(node, nic) + 1; }
LinkId Platform::leaf_up(std::int64_t leaf) const {
  return first_fabric_link_ + static_cast<LinkId>(2 * (nodes_ * spec_.node.nics + leaf));
}
LinkId Platform::leaf_down(std::int64_t leaf) const { return leaf_up(leaf) + 1; }

VertexId Platform::gpu(std::int64_t node, std::int64_t position) const {
  return static_cast<VertexId>(node * static_cast<std::int64_t>(local_kind_.size()) +
                               spec_.node.ring_order[static_cast<std::size_t>(position)]);
}

VertexId Platform::host(std::int64_t node) const {
  return static_cast<VertexId>(node * static_cast<std::int64_t>(local_kind_.size()) + first_cpu_);
}

std::int64_t Platform::node_of(VertexId v) const {
  if (v >= first_fabric_vertex_) return -1;
  return static_cast<std::int64_t>(v / local_kind_.size());
}

std::optional<VertexId> Platform::shifted_vertex(VertexId v, std::int64_t nodes) const {
  const std::int64_t node = node_of(v);
  if (node < 0 || node + nodes < 0 || node + nodes >= nodes_) return std::nullopt;
  return static_cast<VertexId>(static_cast<std::int64_t>(v) +
                               nodes * static_cast<std::int64_t>(local_kind_.size()));
}

void Platform::append_local(Route& r, std::int64_t node, const LocalRoute& lr) const {
  const auto base = static_cast<LinkId>(static_cast<std::size_t>(node) * local_links_.size());
  for (auto l : lr.links) r.links.push_back(base + l);
  r.latency = max(r.latency, lr.latency);
  r.bandwidth_bytes_per_s = std::min(r.bandwidth_bytes_per_s, lr.bandwidth_bytes_per_s);
}

Route Platform::route(VertexId src, VertexId dst) const { return route(src, dst, RouteVia{}); }

std::uint32_t Platform::chosen_nic(std::int32_t nic, std::uint32_t local) const {
  if (nic < 0) return nic_of(local);
  if (nic >= spec_.node.nics) {
    throw std::invalid_argument(
        fmt::format("a route through NIC {} of a node with {} NIC(s)", nic, spec_.node.nics));
  }
  return first_nic_ + static_cast<std::uint32_t>(nic);
}

void Platform::append_link(Route& r, LinkId l) const {
  r.links.push_back(l);
  r.latency = max(r.latency, links_[l].latency);
  r.bandwidth_bytes_per_s = std::min(r.bandwidth_bytes_per_s, links_[l].bandwidth_bytes_per_s);
}

Route Platform::route(VertexId src, VertexId dst, RouteVia via) const {
  const auto lv = static_cast<VertexId>(local_kind_.size());
  const std::int64_t a = node_of(src), b = node_of(dst);
  if (a < 0 || b < 0) return fabric_route(src, dst, via);
  Route r;
  r.bandwidth_bytes_per_s = std::numeric_limits<double>::infinity();
  const std::uint32_t ls = src % lv, ld = dst % lv;
  if (a == b) {
    append_local(r, a, local_route(ls, ld));
    return r;
  }
  r.crosses_nodes = true;
  const std::uint32_t nic_s = chosen_nic(via.src_nic, ls), nic_d = chosen_nic(via.dst_nic, ld);
  if (via.src_proxy >= spec_.node.gpus) {
    throw std::invalid_argument(fmt::format("a route through GPU {} of a node with {} GPU(s)",
                                            via.src_proxy, spec_.node.gpus));
  }
  const auto proxy = static_cast<std::uint32_t>(via.src_proxy);
  const bool proxied = via.src_proxy >= 0 && proxy != ls;
  if ((proxied && (!local_route(ls, proxy).reachable || !local_route(proxy, nic_s).reachable)) ||
      (!proxied && !local_route(ls, nic_s).reachable) || !local_route(nic_d, ld).reachable) {
    throw std::invalid_argument(fmt::format("{} cannot reach {} through NICs {} and {}",
                                            vertex_name(src), vertex_name(dst), nic_s - first_nic_,
                                            nic_d - first_nic_));
  }
  if (proxied) {
    append_local(r, a, local_route(ls, proxy));
    append_local(r, a, local_route(proxy, nic_s));
  } else {
    append_local(r, a, local_route(ls, nic_s));
  }
  const std::int64_t ks = nic_s - first_nic_, kd = nic_d - first_nic_;
  append_link(r, nic_up(a, ks));
  const VertexId leaf_s = leaf_of(a, ks), leaf_d = leaf_of(b, kd);
  Duration switches = spec_.fabric.switch_latency;
  if (leaf_s != leaf_d) {
    const LinkId up = leaf_up(leaf_s - first_fabric_vertex_);
    const LinkId down = leaf_down(leaf_d - first_fabric_vertex_);
    r.links.push_back(up);
    r.links.push_back(down);
    r.bandwidth_bytes_per_s = std::min({r.bandwidth_bytes_per_s, links_[up].bandwidth_bytes_per_s,
                                        links_[down].bandwidth_bytes_per_s});
    switches = spec_.fabric.switch_latency + spec_.fabric.switch_latency + spec_.fabric.switch_latency;
  }
  append_link(r, nic_down(b, kd));
  append_local(r, b, local_route(nic_d, ld));
  r.latency += switches;
  return r;
}

VertexId Platform::leaf(std::int64_t node, std::int64_t nic) const { return leaf_of(node, nic); }

std::int64_t Platform::spine() const {
  if (spec_.fabric.kind != FabricKind::kFatTree || spec_.node.nics == 0) return -1;
  return static_cast<std::int64_t>(first_fabric_vertex_ + static_cast<VertexId>(leaves_));
}

Route Platform::fabric_route(VertexId src, VertexId dst, RouteVia via) const {
  const std::int64_t a = node_of(src), b = node_of(dst);
  if (a < 0 && b < 0) {
    // Between a leaf and the spine.
    if (spine() < 0 || (src != static_cast<VertexId>(spine()) && dst != static_cast<VertexId>(spine()))) {
      throw std::invalid_argument("routes between fabric switches run between a leaf and the spine");
    }
    const bool up = dst == static_cast<VertexId>(spine());
    const VertexId leaf_vertex = up ? src : dst;
    const LinkId l = up ? leaf_up(leaf_vertex - first_fabric_vertex_) : leaf_down(leaf_vertex - first_fabric_vertex_);
    Route r;
    r.links.push_back(l);
    r.latency = spec_.fabric.switch_latency;
    r.bandwidth_bytes_per_s = links_[l].bandwidth_bytes_per_s;
    r.crosses_nodes = true;
    return r;
  }
  // Between a GPU (or host) and a fabric switch, through one of its node's NICs.
  const bool up = b < 0;
  const VertexId end = up ? src : dst;
  const VertexId fabric = up ? dst : src;
  const std::int64_t node = up ? a : b;
  const auto lv = static_cast<VertexId>(local_kind_.size());
  const std::uint32_t local = end % lv;
  const std::uint32_t nic = chosen_nic(up ? via.src_nic : via.dst_nic, local);
  const std::int64_t k = nic - first_nic_;
  const VertexId its_leaf = leaf_of(node, k);
  const bool to_spine = spine() >= 0 && fabric == static_cast<VertexId>(spine());
  if (fabric != its_leaf && !to_spine) {
    throw std::invalid_argument(fmt::format("{} is not the switch of {}'s NIC {}", vertex_name(fabric),
                                            vertex_name(end), k));
  }
  Route r;
  r.bandwidth_bytes_per_s = std::numeric_limits<double>::infinity();
  r.crosses_nodes = true;
  if (up) {
    append_local(r, node, local_route(local, nic));
    append_link(r, nic_up(node, k));
    if (to_spine) append_link(r, leaf_up(its_leaf - first_fabric_vertex_));
  } else {
    if (to_spine) append_link(r, leaf_down(its_leaf - first_fabric_vertex_));
    append_link(r, nic_down(node, k));
    append_local(r, node, local_route(nic, local));
  }
  r.latency += to_spine ? spec_.fabric.switch_latency + spec_.fabric.switch_latency
                        : spec_.fabric.switch_latency;
  return r;
}

VertexId Platform::nvswitch(std::int64_t node) const {
  if (nvswitch_local_ < 0) throw std::logic_error("a node without an NVSwitch has none to route to");
  return static_cast<VertexId>(node * static_cast<std::int64_t>(local_kind_.size()) + nvswitch_local_);
}

std::int64_t Platform::nic_of_gpu(std::int64_t local_gpu) const {
  return static_cast<std::int64_t>(nic_of(static_cast<std::uint32_t>(local_gpu)) - first_nic_);
}

std::int64_t Platform::local_gpu(VertexId v) const {
  if (v >= first_fabric_vertex_) return -1;
  const auto local = static_cast<std::int64_t>(v % local_kind_.size());
  return local < spec_.node.gpus ? local : -1;
}

PciePath Platform::nic_path(std::int64_t local_gpu, std::int64_t nic) const {
  const LocalRoute& r = local_route(static_cast<std::uint32_t>(local_gpu),
                                    static_cast<std::uint32_t>(first_nic_ + nic));
  std::int64_t switches = 0;
  bool cpu = false;
  for (const auto l : r.links) {
    const auto& link = local_links_[l];
    if (link.kind == LinkKind::kSocket) return PciePath::kSys;
    const VertexKind k = local_kind_[link.to];
    if (k == VertexKind::kCpu) cpu = true;
    if (k == VertexKind::kPcieSwitch) ++switches;
  }
  if (cpu) return PciePath::kPhb;
  return switches <= 1 ? PciePath::kPix : PciePath::kPxb;
}

double Platform::nic_path_bandwidth(std::int64_t local_gpu, std::int64_t nic) const {
  return local_route(static_cast<std::uint32_t>(local_gpu), static_cast<std::uint32_t>(first_nic_ + nic))
      .bandwidth_bytes_per_s;
}

std::vector<double> Platform::link_capacities() const {
  std::vector<double> capacity;
  capacity.reserve(links_.size());
  for (const auto& l : links_) capacity.push_back(l.bandwidth_bytes_per_s);
  return capacity;
}

std::string Platform::vertex_name(VertexId v) const {
  if (v < first_fabric_vertex_) {
    const auto lv = local_kind_.size();
    return fmt::format("node{}/{}", v / lv, local_vertex_name_[v % lv]);
  }
  if (vertex_kind_[v] == VertexKind::kSpine) return "spine";
  if (spec_.fabric.kind == FabricKind::kSwitch) return "switch";
  return fmt::format("leaf{}", v - first_fabric_vertex_);
}

std::string Platform::link_name(LinkId link) const {
  const auto& l = links_[link];
  return vertex_name(l.from) + " -> " + vertex_name(l.to);
}

StreamCap Platform::inter_node_streams() const {
  const LinkPreset* nic = find_link_preset(spec_.node.nic_preset);
  const bool tcp = spec_.transport == Transport::kTcp ||
                   (spec_.transport == Transport::kNative && nic != nullptr &&
                    nic->link_class == LinkClass::kEthernet);
  if (!tcp || !spec_.tcp_streams.on()) return {};
  StreamCap cap = spec_.tcp_streams;
  cap.stream_rate_bytes_per_s *= spec_.bandwidth_factor[static_cast<std::size_t>(LinkKind::kNic)];
  return cap;
}

std::string Platform::describe() const {
  const NodeSpec& n = spec_.node;
  std::string s = fmt::format("{}: {} node{} x {} GPU{}", spec_.name, nodes_, nodes_ == 1 ? "" : "s",
                              n.gpus, n.gpus == 1 ? "" : "s");
  if (n.nvlink != NvlinkTopology::kNone) {
    s += fmt::format(", NVLink {} ({})", to_string(n.nvlink), format_rate(n.nvlink_link.bandwidth_bytes_per_s));
  }
  s += n.pcie_free ? std::string(", PCIe not modelled")
                   : fmt::format(", PCIe {}", format_rate(n.pcie.bandwidth_bytes_per_s));
  if (nodes_ > 1) {
    s += fmt::format(", {} NIC{} of {} ({})", n.nics, n.nics == 1 ? "" : "s",
                     format_rate(n.nic.bandwidth_bytes_per_s), to_string(spec_.transport));
    if (spec_.fabric.kind == FabricKind::kFatTree) {
      s += fmt::format(", fat tree of {} nodes per leaf, {}:1{}", spec_.fabric.nodes_per_leaf,
                       spec_.fabric.oversubscription, spec_.fabric.rail_optimized ? ", rail-optimised" : "");
    } else {
      s += ", one switch";
    }
  }
  return s;
}

}  // namespace ssgd::sim
