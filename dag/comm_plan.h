#pragma once
// How gradients are communicated in one iteration: which layers' gradients
// travel together, in what order, and when each collective may start. An
// overlap policy (simulator/policy) produces the plan; the DAG builder turns
// it into comm tasks and edges. Later policies (MG-WFBP, fusion buckets,
// priority) only produce other plans.

#include <cstdint>
#include <optional>
#include <vector>

#include "common/time.h"

namespace ssgd::dag {

// The operation a collective task runs (sharded data parallelism adds
// reduce-scatters of gradients and all-gathers of parameters to the
// replicated all-reduce), and over which ranks: the whole job; one shard
// group (HSDP: the G ranks a shard spans, each group running its own copy
// at once); or across the shard groups (HSDP's all-reduce of each shard over
// the P / G replicas, G such collectives at once). kReduce: the buffer
// reduced to its shards' owners by one reduce per owner, each of bytes / P
// (DeepSpeed's ZeRO-1/2), one after the other.
enum class CommOp : std::uint8_t { kAllReduce, kReduceScatter, kAllGather, kReduce };
enum class CommScope : std::uint8_t { kJob, kShardGroup, kReplicas };

struct CommGroup {
  std::vector<std::int32_t> layers;  // profile rows whose gradients (or parameters) it carries
  std::int64_t bytes = 0;            // the whole buffer: reduced, scattered or gathered
  std::optional<Duration> replayed;  // measured time to replay as given; else modelled
  CommOp op = CommOp::kAllReduce;
  CommScope scope = CommScope::kJob;
};

struct CommPlan {
  // Issued one at a time in this order; each waits for the previous one.
  std::vector<CommGroup> groups;
  // false (WFBP): a group may start once every worker finished the backward
  // of all its layers. true (BSP): only once every worker finished the whole
  // backward pass.
  bool wait_for_full_backward = false;
  // Priority scheduling (P3, ByteScheduler): the groups are not issued in
  // plan order but by priority. Whenever the network is free it starts the
  // ready group of the earliest iteration and, within it, of the front-most
  // layer (the one the next forward needs first); then, while less than
  // credit_bytes are in flight, the next ready groups in the same order
  // (credit 0: one at a time). A group already started is never interrupted.
  bool prioritized = false;
  std::int64_t credit_bytes = 0;
  // The scheduler's own costs (ByteScheduler's): each round that starts
  // ready groups takes round_overhead on the network before their bytes
  // move; each group costs group_overhead of host time on every worker,
  // which the builder adds to the backward of the layer that releases it,
  // delaying the backward after it (a framework operation per partition,
  // enqueued from the training loop's thread).
  Duration round_overhead;
  Duration group_overhead;
};

}  // namespace ssgd::dag
