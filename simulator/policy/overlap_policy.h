#pragma once
// Overlap and scheduling policies: which gradients travel together and when
// their collective may start relative to the backward pass. Each policy
// turns a layer profile into a CommPlan (dag/comm_plan.h); the DAG builder
// does the rest. Layers are numbered 1..L in forward order below; backward
// runs L down to 1, and "ready" is the end of a layer's backward, counted
// from the start of the backward pass on one worker.
//
//   bsp      Bulk synchronous, no overlap: every layer's all-reduce waits for
//            the whole backward pass, then they run one after another in
//            backward order. t_iter = t_io + t_h2d + t_f + t_b + sum(t_c) + t_u.
//   wfbp     Wait-free backpropagation (Zhang et al., "Poseidon", USENIX ATC
//            2017; the S-SGD DAG model of Shi et al., ICPADS 2018): layer l's
//            all-reduce starts as soon as its backward ends and the previous
//            all-reduce is done, overlapping the backward of earlier layers.
//   mgwfbp   Merged-gradient WFBP (Shi, Chu and Li, INFOCOM 2019; the rule of
//            the authors' code, HKBU-HPML/MG-WFBP _generate_groups_mgwfbp).
//            Walking backward order with the WFBP recurrence, the current
//            group (which would start at tau_c and take T(bytes)) takes in
//            the next gradient, ready at e, iff
//              (A) e < tau_c + T(bytes)   it is ready before the group ends, and
//              (B) e - tau_c < saved      the wait is shorter than what one
//                                         start-up fewer saves,
//            saved = T(group) + T(next) - T(group + next), which is the
//            start-up cost a under alpha-beta (or policy.merge_startup).
//   ddp      PyTorch DDP buckets (torch/csrc/distributed/c10d/reducer.cpp,
//            compute_bucket_assignment_by_size and rebuild_buckets): gradients
//            in backward order fill a bucket until its size reaches the cap
//            (checked after adding, so a bucket may exceed it by one tensor);
//            the first bucket's cap is policy.first_bucket (1 MiB), the rest
//            policy.bucket_cap (25 MiB). A bucket's all-reduce starts when its
//            last gradient is ready, buckets in order.
//   horovod  Horovod tensor fusion (horovod/common/operations.cc and
//            controller.cc FuseResponses): every policy.cycle_time (1 ms)
//            from the start of backward, the gradients ready and not yet sent
//            are packed in ready order into buffers of at most
//            policy.fusion_threshold (128 MiB; checked before adding, a larger
//            tensor goes alone). Approximation: a buffer's all-reduce starts
//            when its last gradient is ready, not at the cycle tick, which
//            understates Horovod's wait by up to one cycle per buffer.
//   single   One all-reduce of every gradient after the backward pass
//            ("SyncEASGD" in the MG-WFBP paper's experiments).
//   priority Priority scheduling with tensor partitioning (P3, Jayarajan et
//            al., SysML 2019; ByteScheduler, Peng et al., SOSP 2019, whose
//            bytecore.py scheduler this follows): each gradient is cut into
//            ceil(bytes / policy.partition_size) nearly equal partitions;
//            whenever the network is free it starts the ready partitions of
//            the front-most layers first, together until policy.credit_size
//            bytes are in flight (the last may overshoot; 0: one at a time),
//            and a started batch runs to its end: front layers preempt back
//            layers at partition granularity. With the per-layer update
//            (its default) the next forward of a layer waits only for that
//            layer's partitions. Approximation: partitions in flight
//            together run as one collective of their total size (their
//            start-ups overlap, their bytes share the links) and end together.
//            The scheduler's costs: policy.partition_overhead (85 us,
//            priority.cc) of host time per partition, added to the backward
//            of the layer that releases it, and policy.schedule_overhead per
//            round on the network before the round's bytes move.
//
// Orthogonal to the policy: policy.update (global or per_layer, dag/
// profile_dag_builder.h) and policy.prefetch_depth (I/O read ahead).
//
// A layer takes part when it has gradients (grad_bytes > 0) or, for bsp and
// wfbp, a measured communication time above zero. The merging policies
// (mgwfbp, ddp, horovod, single, priority) model every collective: a measured per-layer
// time cannot be split or merged, so the input's comm_ns are not replayed.

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include "common/time.h"
#include "dag/comm_plan.h"
#include "simulator/policy/policy_params.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {

struct PolicyInfo {
  OverlapPolicy policy;
  std::string_view name;
  std::string_view description;
  std::string_view source;
};

std::span<const PolicyInfo> overlap_policies();

// The time of one gradient all-reduce of `bytes` with nothing else on the
// network, which mgwfbp's rule needs; 0 for 0 bytes.
using AllReduceTime = std::function<Duration(std::int64_t bytes)>;

// Whether `policy` merges gradients (and so models every collective).
bool merges_gradients(OverlapPolicy policy);

// The comm plan of `policy` with parameters `params` for `profile`.
dag::CommPlan make_comm_plan(OverlapPolicy policy, const PolicyParams& params,
                             const trace::LayerProfile& profile,
                             const AllReduceTime& allreduce_time);

}  // namespace ssgd::sim
