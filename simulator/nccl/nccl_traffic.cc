#include "simulator/nccl/nccl_traffic.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

#include "simulator/collective/collective.h"

namespace ssgd::sim::nccl {
namespace {

// Adds transfers, one per (src, dst, NICs, proxy, kind), bytes summed.
class Collector {
 public:
  void add(VertexId src, VertexId dst, RouteVia via, double bytes, bool nvls = false) {
    if (!(bytes > 0) || src == dst) return;
    const Key key{(static_cast<std::uint64_t>(src) << 32) | dst,
                  (static_cast<std::uint64_t>(static_cast<std::uint16_t>(via.src_nic)) << 33) |
                      (static_cast<std::uint64_t>(static_cast<std::uint16_t>(via.dst_nic)) << 17) |
                      (static_cast<std::uint64_t>(static_cast<std::uint16_t>(via.src_proxy)) << 1) |
                      (nvls ? 1U : 0U)};
    const auto [it, fresh] = index_.try_emplace(key, out_.transfers.size());
    if (fresh) {
      out_.transfers.push_back({src, dst, via, bytes, nvls, 1});
    } else {
      out_.transfers[it->second].bytes += bytes;
      ++out_.transfers[it->second].connections;
    }
  }
  Traffic take() { return std::move(out_); }

 private:
  struct Key {
    std::uint64_t ends;
    std::uint64_t rest;
    friend bool operator==(const Key&, const Key&) = default;
  };
  struct Hash {
    std::size_t operator()(const Key& k) const {
      return std::hash<std::uint64_t>()(k.ends * 0x9E3779B97F4A7C15ULL ^ (k.rest + 0x632BE59BD9B4E019ULL));
    }
  };
  std::unordered_map<Key, std::size_t, Hash> index_;
  Traffic out_;
};

// A node's NVLink mesh (DGX-1's hybrid cube mesh) by position in the ring
// order: the links between two positions, and paths through every GPU over
// them, as NCCL's search finds its rings.
class NvlinkMesh {
 public:
  static constexpr std::int64_t kPathSearchSteps = 1'000'000;

  NvlinkMesh(const NodeSpec& node, const std::vector<std::int64_t>& local_gpu)
      : g_(static_cast<std::int64_t>(local_gpu.size())),
        links_(static_cast<std::size_t>(g_ * g_), 0),
        used_(static_cast<std::size_t>(g_ * g_), 0) {
    for (std::int64_t a = 0; a < g_; ++a) {
      for (std::int64_t b = 0; b < g_; ++b) {
        for (const NvlinkPair& pair : node.nvlink_pairs) {
          const std::int64_t ga = local_gpu[static_cast<std::size_t>(a)];
          const std::int64_t gb = local_gpu[static_cast<std::size_t>(b)];
          if ((pair.a == ga && pair.b == gb) || (pair.a == gb && pair.b == ga)) at(links_, a, b) = pair.links;
        }
      }
    }
  }

  // From `entry` through every position to `exit` over NVLink alone, the
  // positions' order first (so that the ring order's own path is kept where
  // it serves); with `fresh`, over links no earlier ring took; with `exit` ==
  // `entry`, a ring back to it. Empty when there is none.
  [[nodiscard]] std::vector<std::int64_t> path(std::int64_t entry, std::int64_t exit, bool fresh = false) const {
    std::vector<std::int64_t> out{entry};
    std::vector<bool> visited(static_cast<std::size_t>(g_));
    visited[static_cast<std::size_t>(entry)] = true;
    const auto usable = [&](std::int64_t a, std::int64_t b) {
      return at(links_, a, b) > 0 && !(fresh && at(used_, a, b) != 0);
    };
    // Depth first, within a budget of steps: 8 GPUs take a few thousand; a
    // larger mesh that needs more gets no path (the ring order serves).
    std::int64_t budget = kPathSearchSteps;
    const std::function<bool()> extend = [&]() -> bool {
      if (--budget < 0) return false;
      const std::int64_t here = out.back();
      if (static_cast<std::int64_t>(out.size()) == g_) return exit == entry ? usable(here, entry) : here == exit;
      for (std::int64_t i = 1; i < g_; ++i) {
        const std::int64_t q = (here + i) % g_;
        if (visited[static_cast<std::size_t>(q)] || !usable(here, q)) continue;
        if (q == exit && static_cast<std::int64_t>(out.size()) + 1 < g_) continue;
        visited[static_cast<std::size_t>(q)] = true;
        out.push_back(q);
        if (extend()) return true;
        out.pop_back();
        visited[static_cast<std::size_t>(q)] = false;
      }
      return false;
    };
    if (g_ < 2 || !extend()) return {};
    return out;
  }

  // Rings through every GPU over links no other takes, the ring order's
  // first, each with the links its narrowest hop bundles (its share of the
  // channels: NCCL's search gives a faster ring more).
  [[nodiscard]] std::vector<std::pair<std::vector<std::int64_t>, std::int64_t>> rings() {
    std::vector<std::pair<std::vector<std::int64_t>, std::int64_t>> out;
    std::vector<std::int64_t> ring(static_cast<std::size_t>(g_));
    for (std::int64_t p = 0; p < g_; ++p) ring[static_cast<std::size_t>(p)] = p;
    bool ring_order = g_ > 2;
    for (std::int64_t p = 0; p < g_; ++p) ring_order = ring_order && at(links_, p, (p + 1) % g_) > 0;
    if (!ring_order) ring = path(0, 0, true);
    while (!ring.empty()) {
      std::int64_t narrowest = std::numeric_limits<std::int64_t>::max();
      for (std::size_t i = 0; i < ring.size(); ++i) {
        const std::int64_t a = ring[i];
        const std::int64_t b = ring[(i + 1) % ring.size()];
        narrowest = std::min(narrowest, at(links_, a, b));
        at(used_, a, b) = at(used_, b, a) = 1;
      }
      out.emplace_back(ring, narrowest);
      ring = path(0, 0, true);
    }
    return out;
  }

 private:
  template <typename T>
  T& at(std::vector<T>& v, std::int64_t a, std::int64_t b) const {
    return v[static_cast<std::size_t>(a * g_ + b)];
  }
  template <typename T>
  [[nodiscard]] T at(const std::vector<T>& v, std::int64_t a, std::int64_t b) const {
    return v[static_cast<std::size_t>(a * g_ + b)];
  }
  std::int64_t g_;
  std::vector<std::int64_t> links_;
  std::vector<char> used_;  // links a ring took
};

}  // namespace

Structure::Structure(const Platform& platform, std::vector<VertexId> ranks, const System& system,
                     const Graphs& graphs)
    : platform_(platform), ranks_(std::move(ranks)), system_(system) {
  const std::int64_t g = system_.local_ranks;
  const std::int64_t n = system_.nodes;
  if (static_cast<std::int64_t>(ranks_.size()) != g * n || g < 1) {
    throw std::logic_error("an NCCL structure of ranks that are not whole nodes");
  }
  for (std::int64_t p = 0; p < g; ++p) local_gpu_.push_back(platform_.local_gpu(ranks_[static_cast<std::size_t>(p)]));
  if (n > 1) {
    std::set<std::int64_t> rails;
    for (std::int64_t p = 0; p < g; ++p) rails.insert(platform_.nic_of_gpu(local_gpu_[static_cast<std::size_t>(p)]));
    rails_.assign(rails.begin(), rails.end());
    for (const std::int64_t rail : rails_) {
      for (std::int64_t p = 0; p < g; ++p) {
        if (platform_.nic_of_gpu(local_gpu_[static_cast<std::size_t>(p)]) == rail) {
          head_positions_.push_back(p);
          break;
        }
      }
    }
  } else {
    for (std::int64_t p = 0; p < g; ++p) head_positions_.push_back(p);
  }
  const int c_count = std::max(1, graphs.coll_channels);
  const int search = std::max(1, graphs.ring.channels);
  const auto nic_at = [this](std::int64_t pos) {
    return platform_.nic_of_gpu(local_gpu_[static_cast<std::size_t>(pos)]);
  };
  // One node of an NVLink mesh: NCCL's rings go over every NVLink, each
  // ring both ways, a ring's channels in proportion to its links.
  std::optional<NvlinkMesh> mesh;
  if (platform_.spec().node.nvlink == NvlinkTopology::kMesh && g > 2) mesh.emplace(platform_.spec().node, local_gpu_);
  std::vector<std::pair<std::vector<std::int64_t>, bool>> mesh_rings;  // (order, reversed)
  if (n == 1 && mesh) {
    for (const auto& [ring, links] : mesh->rings()) {
      for (std::int64_t k = 0; k < links; ++k) {
        mesh_rings.emplace_back(ring, false);
        mesh_rings.emplace_back(ring, true);
      }
    }
  }
  for (int c = 0; c < c_count; ++c) {
    ChannelShape ch;
    const int s = c % search;
    ch.second_tree = (c / search) % 2 == 1;
    if (n == 1) {
      const std::int64_t start = c % g;
      if (!mesh_rings.empty()) {
        const auto& [ring, reversed] = mesh_rings[static_cast<std::size_t>(c) % mesh_rings.size()];
        for (std::int64_t i = 0; i < g; ++i) ch.order[0].push_back(ring[static_cast<std::size_t>((start + i) % g)]);
        if (reversed) std::reverse(ch.order[0].begin(), ch.order[0].end());
      } else {
        for (std::int64_t i = 0; i < g; ++i) ch.order[0].push_back((start + i) % g);
      }
      ch.order[1] = ch.order[0];
      channels_.push_back(std::move(ch));
      continue;
    }
    const auto rails_n = static_cast<int>(rails_.size());
    ch.rail = rails_[static_cast<std::size_t>(s % rails_n)];
    std::vector<std::int64_t> on_rail;
    for (std::int64_t p = 0; p < g; ++p) {
      if (nic_at(p) == ch.rail) on_rail.push_back(p);
    }
    const std::int64_t entry = on_rail[static_cast<std::size_t>((s / rails_n) % static_cast<int>(on_rail.size()))];
    // The exit: another GPU that reaches the rail's NIC within a PCIe switch
    // or two, the entry's predecessor first; else the predecessor itself,
    // through its own NIC.
    std::int64_t exit = entry;
    if (g > 1) {
      exit = (entry - 1 + g) % g;
      std::int64_t best = -1;
      for (std::int64_t back = 1; back < g && best < 0; ++back) {
        const std::int64_t q = (entry - back + g) % g;
        const std::int64_t lg = local_gpu_[static_cast<std::size_t>(q)];
        if (nic_at(q) == ch.rail || platform_.nic_path(lg, ch.rail) <= PciePath::kPxb) best = q;
      }
      if (best >= 0) {
        exit = best;
      } else {
        ch.cross_nic = nic_at(exit) != ch.rail;
      }
    }
    std::vector<std::int64_t> order;
    if (exit != entry && mesh) order = mesh->path(entry, exit);
    if (order.empty()) {
      order.push_back(entry);
      for (std::int64_t i = 1; i < g; ++i) {
        const std::int64_t q = (entry + i) % g;
        if (q != exit) order.push_back(q);
      }
      if (exit != entry) order.push_back(exit);
    }
    ch.order[0] = order;
    ch.in_nic[0] = ch.rail;
    // PXN: an exit that reaches the rail's NIC only through a CPU hands the
    // data over NVLink to the entry, the NIC's own GPU.
    if (!ch.cross_nic && exit != entry && system_.intra_nvlink &&
        platform_.nic_path(local_gpu_[static_cast<std::size_t>(exit)], ch.rail) > PciePath::kPxb) {
      ch.out_proxy = {static_cast<std::int32_t>(local_gpu_[static_cast<std::size_t>(entry)]),
                      static_cast<std::int32_t>(local_gpu_[static_cast<std::size_t>(entry)])};
    }
    if (ch.cross_nic) {
      // Odd nodes run the pair's ring: in by the exit's NIC, the GPUs the
      // other way round, out by the entry's.
      ch.out_nic[0] = nic_at(exit);
      ch.order[1].assign(order.rbegin(), order.rend());
      ch.in_nic[1] = ch.out_nic[0];
      ch.out_nic[1] = ch.rail;
    } else {
      ch.out_nic[0] = ch.rail;
      ch.order[1] = order;
      ch.in_nic[1] = ch.rail;
      ch.out_nic[1] = ch.rail;
    }
    channels_.push_back(std::move(ch));
  }
}

const ChannelShape& Structure::channel(int c) const {
  return channels_[static_cast<std::size_t>(c % static_cast<int>(channels_.size()))];
}

Traffic Structure::traffic(Func f, Algo a, int channels, std::int64_t root) const {
  const std::int64_t g = system_.local_ranks;
  const std::int64_t nodes = system_.nodes;
  const std::int64_t p = system_.ranks;
  Collector out;
  if (p <= 1) return out.take();
  const auto rank = [&](std::int64_t node, std::int64_t pos) {
    return ranks_[static_cast<std::size_t>(node * g + pos)];
  };
  const auto rank_index = [&](std::int64_t node, std::int64_t pos) { return node * g + pos; };
  const int nc = std::max(1, channels);
  const double d = 1.0 / nc;
  const auto pd = static_cast<double>(p);
  switch (a) {
    case Algo::kRing: {
      double edge = 0;
      if (f == Func::kAllReduce) edge = 2 * (pd - 1) / pd * d;
      if (f == Func::kReduceScatter || f == Func::kAllGather) edge = (pd - 1) / pd * d;
      if (f == Func::kBroadcast || f == Func::kReduce) edge = d;
      for (int c = 0; c < nc; ++c) {
        const ChannelShape& ch = channel(c);
        const auto add = [&](std::int64_t sn, std::int64_t sp, std::int64_t dn, std::int64_t dp, RouteVia via) {
          const std::int64_t from = rank_index(sn, sp), to = rank_index(dn, dp);
          if (f == Func::kBroadcast && to == root) return;
          if (f == Func::kReduce && from == root) return;
          out.add(rank(sn, sp), rank(dn, dp), via, edge);
        };
        for (std::int64_t n = 0; n < nodes; ++n) {
          const auto& order = ch.order[static_cast<std::size_t>(n % 2)];
          for (std::size_t i = 0; i + 1 < order.size(); ++i) add(n, order[i], n, order[i + 1], {});
          if (nodes > 1) {
            const std::int64_t next = (n + 1) % nodes;
            const auto& next_order = ch.order[static_cast<std::size_t>(next % 2)];
            const RouteVia via{static_cast<std::int32_t>(ch.out_nic[static_cast<std::size_t>(n % 2)]),
                               static_cast<std::int32_t>(ch.in_nic[static_cast<std::size_t>(next % 2)]),
                               ch.out_proxy[static_cast<std::size_t>(n % 2)]};
            add(n, order.back(), next, next_order.front(), via);
          } else {
            add(n, order.back(), n, order.front(), {});
          }
        }
      }
      break;
    }
    case Algo::kTree: {
      if (f != Func::kAllReduce) throw std::logic_error("NCCL runs trees for all-reduce only");
      const std::array parents = {nccl_tree_parents(nodes, false), nccl_tree_parents(nodes, true)};
      for (int c = 0; c < nc; ++c) {
        const ChannelShape& ch = channel(c);
        const RouteVia rail{static_cast<std::int32_t>(ch.rail), static_cast<std::int32_t>(ch.rail), -1};
        const auto& parent = parents[ch.second_tree ? 1 : 0];
        // A chain through every node from the channel's entry GPU, which
        // meets the other nodes' on its rail.
        const auto& order = ch.order[0];
        for (std::int64_t n = 0; n < nodes; ++n) {
          for (std::size_t i = 0; i + 1 < order.size(); ++i) {
            out.add(rank(n, order[i + 1]), rank(n, order[i]), {}, d);
            out.add(rank(n, order[i]), rank(n, order[i + 1]), {}, d);
          }
          const std::int64_t up = parent[static_cast<std::size_t>(n)];
          if (up < 0) continue;
          out.add(rank(n, order.front()), rank(up, order.front()), rail, d);
          out.add(rank(up, order.front()), rank(n, order.front()), rail, d);
        }
      }
      break;
    }
    case Algo::kNvls: {
      if (nodes > 1) throw std::logic_error("NVLS between nodes needs CollNet: not modelled");
      const double inv = 1.0 / static_cast<double>(g);
      double up = 1 + inv, down = 1 + inv;
      if (f == Func::kReduceScatter) {
        up = 1;
        down = inv;
      } else if (f == Func::kAllGather) {
        up = inv;
        down = 1;
      } else if (f != Func::kAllReduce) {
        throw std::logic_error("NVLS runs all-reduce, reduce-scatter and all-gather only");
      }
      const VertexId sw = platform_.nvswitch(platform_.node_of(rank(0, 0)));
      for (std::int64_t q = 0; q < g; ++q) {
        out.add(rank(0, q), sw, {}, up, true);
        out.add(sw, rank(0, q), {}, down, true);
      }
      break;
    }
    case Algo::kNvlsTree:
    case Algo::kCollNetDirect:
    case Algo::kCollNetChain: {
      if (f != Func::kAllReduce) throw std::logic_error("NCCL runs this algorithm for all-reduce only");
      const auto h = static_cast<double>(head_positions_.size());
      const double share = 1.0 / h;
      std::vector<bool> is_head(static_cast<std::size_t>(g), false);
      for (const auto q : head_positions_) is_head[static_cast<std::size_t>(q)] = true;
      for (std::int64_t n = 0; n < nodes; ++n) {
        // Inside the node: onto the heads and back.
        if (a == Algo::kNvlsTree) {
          const VertexId sw = platform_.nvswitch(platform_.node_of(rank(n, 0)));
          for (std::int64_t q = 0; q < g; ++q) {
            const double extra = is_head[static_cast<std::size_t>(q)] ? share : 0.0;
            out.add(rank(n, q), sw, {}, 1 + extra, true);
            out.add(sw, rank(n, q), {}, 1 + extra, true);
          }
        } else if (a == Algo::kCollNetDirect) {
          for (std::int64_t q = 0; q < g; ++q) {
            for (const auto hq : head_positions_) {
              out.add(rank(n, q), rank(n, hq), {}, share);
              out.add(rank(n, hq), rank(n, q), {}, share);
            }
          }
        } else {  // a chain through the node, reduce up and broadcast down
          for (std::int64_t q = 0; q + 1 < g; ++q) {
            out.add(rank(n, q + 1), rank(n, q), {}, 1);
            out.add(rank(n, q), rank(n, q + 1), {}, 1);
          }
        }
      }
      if (a == Algo::kNvlsTree) {
        const std::array parents = {nccl_tree_parents(nodes, false), nccl_tree_parents(nodes, true)};
        for (std::size_t i = 0; i < head_positions_.size(); ++i) {
          const std::int64_t hq = head_positions_[i];
          const auto r = static_cast<std::int32_t>(rails_[i]);
          for (const auto& parent : parents) {
            for (std::int64_t n = 0; n < nodes; ++n) {
              const std::int64_t up = parent[static_cast<std::size_t>(n)];
              if (up < 0) continue;
              out.add(rank(n, hq), rank(up, hq), {r, r, -1}, share / 2);
              out.add(rank(up, hq), rank(n, hq), {r, r, -1}, share / 2);
            }
          }
        }
      } else {
        // SHARP: each head's share up to its leaf and back; leaves that hold
        // part of the job send their reduced share on to the spine.
        std::set<std::pair<VertexId, std::int64_t>> leaves;
        for (std::size_t i = 0; i < head_positions_.size(); ++i) {
          const std::int64_t hq = head_positions_[i];
          const auto r = static_cast<std::int32_t>(rails_[i]);
          for (std::int64_t n = 0; n < nodes; ++n) {
            const std::int64_t platform_node = platform_.node_of(rank(n, hq));
            const VertexId leaf = platform_.leaf(platform_node, r);
            leaves.insert({leaf, r});
            out.add(rank(n, hq), leaf, {r, -1, -1}, share);
            out.add(leaf, rank(n, hq), {-1, r, -1}, share);
          }
        }
        std::set<VertexId> distinct;
        for (const auto& [leaf, r] : leaves) distinct.insert(leaf);
        if (platform_.spine() >= 0 && distinct.size() > 1) {
          const auto spine = static_cast<VertexId>(platform_.spine());
          for (const auto& [leaf, r] : leaves) {
            out.add(leaf, spine, {}, share);
            out.add(spine, leaf, {}, share);
          }
        }
      }
      break;
    }
    case Algo::kPat: {
      if (g != 1) throw std::logic_error("NCCL runs PAT with one GPU a node only");
      if (f != Func::kAllGather && f != Func::kReduceScatter) {
        throw std::logic_error("NCCL runs PAT for all-gather and reduce-scatter only");
      }
      for (std::int64_t dist = 1; dist < p; dist *= 2) {
        const double bytes = static_cast<double>(std::min(dist, p - dist)) / pd;
        for (std::int64_t r = 0; r < p; ++r) {
          const std::int64_t to = f == Func::kAllGather ? (r + dist) % p : (r - dist + p) % p;
          out.add(ranks_[static_cast<std::size_t>(r)], ranks_[static_cast<std::size_t>(to)], {}, bytes);
        }
      }
      break;
    }
  }
  return out.take();
}

}  // namespace ssgd::sim::nccl
