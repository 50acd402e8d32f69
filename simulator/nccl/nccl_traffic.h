#pragma once
// The data a communicator moves for one call, as NCCL's algorithms move it
// (src/device/*.h, src/graph/connect.cc), over the platform's links.
//
// Channels. A call's bytes are split evenly over its channels. On one node
// every channel's ring visits the GPUs in the platform's ring order. Between
// nodes each channel keeps to one rail (a NIC index, the same on every
// node). Search channel s enters each node at a GPU of rail s mod R (R: the
// NICs a node's GPUs use) and leaves it for the next node:
//   - through the same NIC, from another GPU that sends through it or sits
//     on its PCIe switch (NCCL_CROSS_NIC 0, a PIX or PXB path), where there is
//     one;
//   - else from the GPU before the entry in the ring order, through its own
//     NIC, and the next node, visiting its GPUs the other way round, enters
//     at that NIC's GPU: NCCL's default NCCL_CROSS_NIC=2, whose channel pairs
//     swap on odd nodes (search.cc, connect.cc), so that every crossing stays
//     on one rail (the wrap-around of an odd number of nodes crosses rails);
//   - where that NIC is the entry's own too (fewer NICs than GPUs' switches)
//     and the exit reaches it only through a CPU, over NVLink to the entry,
//     which hands the data to the NIC (PXN).
// Execution channel c runs search channel c mod S and, for trees, NCCL's
// first tree for c < S and its second for the next S (connect.cc).
//
// Algorithms (M: the call's buffer, nccl-tests' size; D = M / channels):
//   Ring       every channel a ring over all ranks; each ring edge carries
//              2(P-1)/P D for all-reduce, (P-1)/P D for reduce-scatter and
//              all-gather, D for broadcast (not into the root) and reduce
//              (not out of the root). Pipelined: every edge at once.
//   Tree       (all-reduce) a chain through each node's GPUs from the
//              channel's entry GPU, and NCCL's double binary tree over the
//              nodes between those GPUs: D up and D down every edge.
//   NVLS       (one node) each GPU sends to the NVSwitch and receives from
//              it: all-reduce (1 + 1/g) M each way, reduce-scatter M up and
//              M/g down, all-gather M/g up and M down (the switch reduces and
//              multicasts; g GPUs).
//   NVLSTree   (all-reduce between nodes) NVLS inside each node onto one head
//              GPU per rail (M up and down each GPU, a head M/h more each
//              way, h heads), each head's share M/h over NCCL's two trees
//              between the nodes' heads of its rail, half on each.
//   CollNet    (all-reduce, SHARP) each head's share M/h up to its leaf
//              switch and back, and between leaves and the spine when the
//              job spans leaves; inside a node direct (each GPU to every
//              head) or a chain (CollNetChain).
//   PAT        (all-gather, reduce-scatter, one GPU a node) distances 1, 2,
//              4, ...: rank r to r + d carries min(d, P - d) M / P.
// Every transfer of a call runs at once, as NCCL's pipeline does; transfers
// between the same two vertices through the same NICs are one.

#include <array>
#include <cstdint>
#include <vector>

#include "simulator/nccl/nccl_system.h"
#include "simulator/nccl/nccl_tables.h"
#include "simulator/platform/platform.h"

namespace ssgd::sim::nccl {

struct RoutedTransfer {
  VertexId src = 0;
  VertexId dst = 0;
  RouteVia via;
  double bytes = 0;   // payload, for a call of one byte
  bool nvls = false;  // to or from the NVSwitch's reduction and multicast
  // The channels' transfers it stands for, each its own connection (what
  // TCP's per-connection bound counts).
  int connections = 1;
};

struct Traffic {
  std::vector<RoutedTransfer> transfers;
};

// One execution channel: the order its ring visits the GPUs of an even and
// of an odd node (positions in the ring order; entry first, exit last), the
// NIC each enters and leaves by, and the rail (the entry NIC of even nodes,
// where trees meet).
struct ChannelShape {
  std::array<std::vector<std::int64_t>, 2> order;  // [even node, odd node]
  std::array<std::int64_t, 2> in_nic{-1, -1};
  std::array<std::int64_t, 2> out_nic{-1, -1};
  // The GPU (local index) the exit hands its data to over NVLink when it
  // reaches the NIC only through a CPU (PXN), or -1.
  std::array<std::int32_t, 2> out_proxy{-1, -1};
  std::int64_t rail = -1;  // NIC index; -1 on one node
  bool cross_nic = false;  // leaves by another NIC than it entered by
  bool second_tree = false;
};

class Structure {
 public:
  // `ranks`: the vertex of each rank, node after node, `system.local_ranks`
  // a node (consecutive nodes of the platform).
  Structure(const Platform& platform, std::vector<VertexId> ranks, const System& system,
            const Graphs& graphs);

  [[nodiscard]] const ChannelShape& channel(int c) const;
  // The call's transfers (bytes per byte of payload) with `channels`
  // channels; `root` for broadcast and reduce.
  [[nodiscard]] Traffic traffic(Func f, Algo a, int channels, std::int64_t root = 0) const;

 private:
  const Platform& platform_;
  std::vector<VertexId> ranks_;
  System system_;
  std::vector<std::int64_t> rails_;
  std::vector<std::int64_t> head_positions_;  // per rail: the heads of NVLS trees and CollNet
  std::vector<std::int64_t> local_gpu_;       // per position
  std::vector<ChannelShape> channels_;
};

}  // namespace ssgd::sim::nccl
