#pragma once
// A platform: nodes built from one NodeSpec, joined by a fabric, as a graph
// of directed links with a capacity each. The flow-level network model
// (simulator/network/flow_network.h) shares these capacities among concurrent
// transfers; the analytical model reads the costs of typical routes.
//
// Routing is deterministic and structural. Inside a node a message takes the
// cheapest path for a large message (least sum of 1/bandwidth, ties by fewer
// hops, then lower vertex index); GPUs and NICs never forward. Between nodes
// it goes from the sender to its NIC (GPU g uses NIC g x nics / gpus, a host
// its first NIC), across the fabric (one switch; or leaf, spine aggregate,
// leaf) and from the receiver's NIC to the receiver.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/time.h"
#include "simulator/collective/collective.h"
#include "simulator/platform/platform_spec.h"

namespace ssgd::sim {

using VertexId = std::uint32_t;
using LinkId = std::uint32_t;

enum class VertexKind : std::uint8_t { kGpu, kCpu, kPcieSwitch, kNvSwitch, kNic, kLeaf, kSpine };
struct PlatformLink {
  VertexId from = 0;
  VertexId to = 0;
  double bandwidth_bytes_per_s = 0;
  Duration latency;
  LinkKind kind = LinkKind::kPcie;
};

// Which NICs a message between nodes goes through. A collective library may
// send through another NIC than the sender's own: NCCL keeps each channel's
// crossing between nodes on one rail (the same NIC index on both nodes),
// reaching it over PCIe from a GPU that is not the NIC's own.
// A sender far from the NIC may hand its data over NVLink to a GPU beside
// the NIC, which sends it on (NCCL's PXN, "PCI x NVLink"): `src_proxy`.
struct RouteVia {
  std::int32_t src_nic = -1;    // NIC index on the sender's node; -1: the sender's own
  std::int32_t dst_nic = -1;    // NIC index on the receiver's node; -1: the receiver's own
  std::int32_t src_proxy = -1;  // local index of the GPU that hands the data to the NIC; -1: none
  friend bool operator==(const RouteVia&, const RouteVia&) = default;
};

// How a GPU reaches a NIC of its node, as NCCL names PCIe paths: through one
// PCIe switch (PIX), several switches (PXB), a CPU's root complex (PHB), or
// across the link between sockets (SYS).
enum class PciePath : std::uint8_t { kPix, kPxb, kPhb, kSys };
const char* to_string(PciePath p);

struct Route {
  std::vector<LinkId> links;
  Duration latency;                  // largest start-up cost on the way, plus switch hops
  double bandwidth_bytes_per_s = 0;  // the narrowest link on the way
  bool crosses_nodes = false;
};

class Platform {
 public:
  // `nodes` nodes of spec.node. Throws std::invalid_argument naming the
  // problem for a spec that cannot be built: a non-positive count or
  // bandwidth, a negative latency, an NVLink pair or ring order naming a GPU
  // the node does not have, an oversubscription below 1, a GPU that cannot
  // reach another GPU of its node or (with more than one node) a NIC.
  Platform(PlatformSpec spec, std::int64_t nodes);

  [[nodiscard]] const PlatformSpec& spec() const { return spec_; }
  [[nodiscard]] std::int64_t nodes() const { return nodes_; }
  [[nodiscard]] std::int64_t gpus_per_node() const { return spec_.node.gpus; }
  [[nodiscard]] const std::vector<PlatformLink>& links() const { return links_; }
  [[nodiscard]] std::size_t vertex_count() const { return vertex_kind_.size(); }

  // The GPU a ring visits `position`-th in `node` (ring order applied).
  [[nodiscard]] VertexId gpu(std::int64_t node, std::int64_t position) const;
  // The host (first CPU) of `node`, where a colocated parameter server runs.
  [[nodiscard]] VertexId host(std::int64_t node) const;
  [[nodiscard]] std::int64_t node_of(VertexId v) const;
  // The same vertex `nodes` nodes on (a GPU, CPU, switch or NIC of a node);
  // null for a vertex of the fabric or past the last node.
  [[nodiscard]] std::optional<VertexId> shifted_vertex(VertexId v, std::int64_t nodes) const;

  [[nodiscard]] Route route(VertexId src, VertexId dst) const;
  // The same through chosen NICs (between nodes; ignored inside a node).
  // Throws std::invalid_argument for a NIC index the node does not have.
  [[nodiscard]] Route route(VertexId src, VertexId dst, RouteVia via) const;

  // The NVSwitch of `node`. Throws std::logic_error on a node without one.
  [[nodiscard]] VertexId nvswitch(std::int64_t node) const;
  // The fabric switch NIC `nic` of `node` is cabled to, and the spine layer
  // (a fat tree's; -1 for a fabric of one switch). route() runs between a
  // GPU and a fabric switch too: up through the GPU's NIC (or RouteVia's)
  // to its leaf and on to the spine, or back down: the way in-network
  // reduction (SHARP) sends a node's share to the switches and back.
  [[nodiscard]] VertexId leaf(std::int64_t node, std::int64_t nic) const;
  [[nodiscard]] std::int64_t spine() const;
  // The NIC index (on its node) GPU `local_gpu` sends through by default.
  [[nodiscard]] std::int64_t nic_of_gpu(std::int64_t local_gpu) const;
  // How GPU `local_gpu` reaches NIC `nic` of its node, and the narrowest
  // link on the way.
  [[nodiscard]] PciePath nic_path(std::int64_t local_gpu, std::int64_t nic) const;
  [[nodiscard]] double nic_path_bandwidth(std::int64_t local_gpu, std::int64_t nic) const;
  // The local GPU index of a GPU vertex (its position in the node, not in
  // the ring order), or -1 for another vertex.
  [[nodiscard]] std::int64_t local_gpu(VertexId v) const;

  // The link that plays `link`'s part `nodes` nodes further on (nodes > 0):
  // a node's own links and NIC lines shift by whole nodes; a fat tree's leaf
  // uplinks by whole leaves when `nodes` is a multiple of nodes_per_leaf.
  // Null when there is none: past the last node, a leaf link under another
  // shift, or the spine (shared by all).
  [[nodiscard]] std::optional<LinkId> shifted_link(LinkId link, std::int64_t nodes) const;

  // Every link's capacity, indexed by link id: what a FlowNetwork shares.
  [[nodiscard]] std::vector<double> link_capacities() const;

  // "node 3 gpu 5 -> nvswitch", for reports and timelines.
  [[nodiscard]] std::string link_name(LinkId link) const;
  [[nodiscard]] std::string vertex_name(VertexId v) const;

  // The TCP stream bound on transfers between nodes: the spec's when the NIC
  // runs TCP (transport tcp, or native on an Ethernet NIC preset), its rate
  // scaled like the NIC's bandwidth; off otherwise.
  [[nodiscard]] StreamCap inter_node_streams() const;

  [[nodiscard]] std::string describe() const;

 private:
  struct LocalRoute {
    std::vector<std::uint32_t> links;  // node-local link indices
    Duration latency;
    double bandwidth_bytes_per_s = 0;
    bool reachable = false;
  };

  void build_node_template();
  void build_fabric();
  void compute_local_routes();
  void check_connected() const;
  // `link` with the spec's what-if factors for `kind` applied.
  [[nodiscard]] LinkSpec scaled(const LinkSpec& link, LinkKind kind) const;
  std::uint32_t add_local_link(std::uint32_t from, std::uint32_t to, const LinkSpec& spec,
                               LinkKind kind);
  [[nodiscard]] const LocalRoute& local_route(std::uint32_t from, std::uint32_t to) const;
  [[nodiscard]] std::uint32_t nic_of(std::uint32_t local) const;  // local NIC vertex
  [[nodiscard]] VertexId leaf_of(std::int64_t node, std::int64_t nic_index) const;
  void append_local(Route& r, std::int64_t node, const LocalRoute& lr) const;
  // The local NIC vertex of NIC `nic` (-1: the one `local` sends through);
  // throws std::invalid_argument for a NIC the node does not have.
  [[nodiscard]] std::uint32_t chosen_nic(std::int32_t nic, std::uint32_t local) const;
  // Appends one link to `r`: its latency and bandwidth bound the route's.
  void append_link(Route& r, LinkId l) const;
  [[nodiscard]] Route fabric_route(VertexId src, VertexId dst, RouteVia via) const;

  PlatformSpec spec_;
  std::int64_t nodes_ = 0;
  // The node template: local vertices and links, copied per node.
  std::vector<VertexKind> local_kind_;
  std::vector<PlatformLink> local_links_;  // from/to are local vertex indices
  std::vector<std::string> local_vertex_name_;
  std::uint32_t first_cpu_ = 0, first_switch_ = 0, first_nic_ = 0;
  std::int64_t nvswitch_local_ = -1;  // the NVSwitch's local vertex, if any
  std::vector<LocalRoute> local_routes_;  // [from * local_count + to]
  // The whole platform.
  std::vector<VertexKind> vertex_kind_;
  std::vector<PlatformLink> links_;
  LinkId first_fabric_link_ = 0;
  VertexId first_fabric_vertex_ = 0;
  std::int64_t leaves_ = 0;
  // Fabric link indices: NIC (node, i) up and down; leaf up and down.
  [[nodiscard]] LinkId nic_up(std::int64_t node, std::int64_t nic) const;
  [[nodiscard]] LinkId nic_down(std::int64_t node, std::int64_t nic) const;
  [[nodiscard]] LinkId leaf_up(std::int64_t leaf) const;
  [[nodiscard]] LinkId leaf_down(std::int64_t leaf) const;
};

// Routes between pairs of vertices, each computed once: collectives send
// between the same pairs step after step.
class RouteCache {
 public:
  explicit RouteCache(const Platform& platform) : platform_(platform) {}
  const Route& get(VertexId src, VertexId dst) {
    const std::uint64_t key = (static_cast<std::uint64_t>(src) << 32) | dst;
    auto it = routes_.find(key);
    if (it == routes_.end()) it = routes_.emplace(key, platform_.route(src, dst)).first;
    return it->second;
  }
  const Route& get(VertexId src, VertexId dst, RouteVia via) {
    if (via == RouteVia{}) return get(src, dst);
    const ViaKey key{(static_cast<std::uint64_t>(src) << 32) | dst,
                     (static_cast<std::uint64_t>(static_cast<std::uint16_t>(via.src_nic)) << 32) |
                         (static_cast<std::uint64_t>(static_cast<std::uint16_t>(via.dst_nic)) << 16) |
                         static_cast<std::uint16_t>(via.src_proxy)};
    auto it = via_routes_.find(key);
    if (it == via_routes_.end()) it = via_routes_.emplace(key, platform_.route(src, dst, via)).first;
    return it->second;
  }

 private:
  struct ViaKey {
    std::uint64_t ends;
    std::uint64_t nics;
    friend bool operator==(const ViaKey&, const ViaKey&) = default;
  };
  struct ViaHash {
    std::size_t operator()(const ViaKey& k) const {
      return std::hash<std::uint64_t>()(k.ends * 0x9E3779B97F4A7C15ULL ^ k.nics);
    }
  };
  const Platform& platform_;
  std::unordered_map<std::uint64_t, Route> routes_;
  std::unordered_map<ViaKey, Route, ViaHash> via_routes_;
};

}  // namespace ssgd::sim
