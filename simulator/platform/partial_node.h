#pragma once
// A job on fewer GPUs than a node has: `cluster.gpus_per_node: 4` on an
// 8-GPU preset uses GPUs 0..3 of every node, as a scheduler handing out part
// of a node does. The node is cut to those GPUs and what they use: each keeps
// its place in the PCIe tree, its NVLinks to the others kept, its place in the
// ring order and its NIC (GPU g sends through NIC g x nics / gpus, the NICs
// they use kept where they hang). The links' rates are the whole node's: a
// job that shares the node with another sees no contention from it.

#include <cstdint>

#include "simulator/platform/platform_spec.h"

namespace ssgd::sim {

// The first `gpus` GPUs of `full` (1 <= gpus <= full.gpus) as a node of their
// own. When the cut node cannot send each GPU through the NIC it has in the
// whole node (a NIC shared by GPUs on both sides of the cut, with more than
// one node), a ParameterError on cluster.gpus_per_node says so.
NodeSpec partial_node(const NodeSpec& full, std::int64_t gpus, std::int64_t nodes);

// One rail of `full`: its GPU 0 alone, sending through the NIC it uses, at
// the node's NIC bandwidth split evenly over its GPUs (a NIC's line x nics /
// gpus). A communicator of one GPU a node on this node stands for one of the
// node's `gpus` communicators that run at once over the same nodes, each GPU
// on its own rail, sharing the NICs as they do: HSDP's all-reduces across
// the shard groups (docs/sharding.md). Everything else is the node's.
NodeSpec rail_node(const NodeSpec& full);

}  // namespace ssgd::sim
