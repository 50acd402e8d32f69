#pragma once
// Builds a layer profile from a trace whose iterations and layers are marked
// by marker ranges (NVTX ranges in a capture, record_function ranges in a
// PyTorch one, or written by hand):
//   iteration/<N>          one training iteration
//   forward/<layer>        the forward pass of one layer
//   backward/<layer>       the backward pass of one layer
// The trace is read by the walker (walk/trace_walk.h), which gives every
// kernel, collective and copy of an iteration its task; `ssgd diff` reads
// traces through the same walker, so both see the same tasks. Per rank and
// iteration, a layer's forward_ns and backward_ns are the summed durations
// of the kernels (GPU kernels, device-to-device copies and memsets, and the
// host's CPU ops alike) the walker gives its forward and backward, each with
// the idle time before it that the walker gives it (host-bound launch gaps,
// the interpreter's time between host operators), which includes the work
// launched outside every range that the walker's glue rule gives to the
// layer; marked iterations that launched nothing, or ran no layer range on
// a rank whose other iterations have them, are left out, with a warning;
// the update is the
// work it gives the update (after the last backward range), and becomes
// LayerProfile::update. Collectives give each layer, the one whose backward
// launched them, comm_ns (replayed as measured) and, unless the trace has
// ssgd/grad_bytes/<layer> marks, grad_bytes; with those marks a layer's
// grad_bytes are its mark's (0 for a layer without one), whether or not the
// trace has collectives. A collective no backward launched counts for the
// first layer. NCCL kernels are never compute (walk/trace_walk.h).
// ssgd/activation_bytes/<layer> marks (tracer/python/ssgd_marks.py: what
// the layer's forward saved for backward) give every layer activation_bytes
// (0, with a warning, for a layer without one), which the memory estimate
// counts; without them the profile has no activations.
// Only collectives of the whole group on one buffer (all-reduce,
// reduce-scatter, all-gather, broadcast, reduce) give grad_bytes; send,
// receive, all-to-all and UNKNOWN, and collectives without a size (unless
// ssgd/grad_bytes marks give the sizes), count in comm_ns only: they are
// replayed at their measured durations, with a warning, and counted in
// LayerProfile::measured_only, which a replay that models collectives from
// grad_bytes refuses (simulator/replay/job_graph.h). A layer's averaged
// time is bounded as a layer profile's (traces/layer_profile.h).
// Values are averaged over all ranks and over every iteration but the first
// (warm-up) when there are several. The profile then builds the DAG as any
// other.
//
// Sharded runs (FSDP1, FSDP2, ZeRO: all-gathers, or FSDP's ranges in the
// trace) are read by walk/trace_sharding.h: the profile gets '# sharding:',
// '# shard_group:', '# grad_dtype:' and a unit column where the ranges name
// the units, and grad_bytes from each unit's reduce-scatters (split over its
// rows by backward time). All-gathers never count as gradients: neither
// their bytes nor their time go to grad_bytes or comm_ns.
//
// A rank without iteration markers has its iterations split, with a
// warning, after each optimizer step (a run of kernels named like adam,
// sgd or multi_tensor_apply), or else every K collectives, K being the
// period with which their sizes repeat (at least twice). Layers always come
// from the forward/backward markers.

#include <string>
#include <vector>

#include "traces/layer_profile.h"
#include "traces/trace_reader.h"

namespace ssgd::walk {

struct TraceProfileResult {
  trace::LayerProfile profile;
  std::int64_t ranks = 0;
  std::int64_t iterations_seen = 0;
  std::int64_t iterations_used = 0;
  std::int64_t kernels_in_ranges = 0;       // launched inside a forward/backward range
  std::int64_t kernels_outside_ranges = 0;  // outside every one: placed by the glue rule
  std::int64_t kernels_update = 0;          // of those, the update's
  std::int64_t collectives = 0;
  std::int64_t gathers = 0;  // of them, all-gathers: parameters, not gradients
  // Sharded runs: the units (FSDP's wrapped modules) by first forward, as
  // the trace names them ("(root)", "encoder.layers.0"; FSDP1's "unit<k>").
  std::vector<std::string> units;
  // NCCL kernels (names starting with "nccl") left out because the rank has
  // Collective records of the same operations; on a rank without any, NCCL
  // kernels are its collectives (sizes unknown, with a warning). NCCL
  // kernels never count as compute.
  std::int64_t nccl_kernels_dropped = 0;
  std::vector<std::string> warnings;
};

// Throws ssgd::InputError (file and the offending marker) when the trace has
// no forward markers, a marker name without a layer, a malformed
// ssgd/grad_bytes mark, or no iterations (no markers and neither fallback
// applies).
TraceProfileResult profile_from_trace(trace::TraceReader& reader, const std::string& source);

}  // namespace ssgd::walk
