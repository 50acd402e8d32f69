#pragma once
// Builds a layer profile from a trace whose iterations and layers are marked
// by marker ranges (NVTX ranges in a capture, or written by hand):
//   iteration/<N>          one training iteration
//   forward/<layer>        the forward pass of one layer
//   backward/<layer>       the backward pass of one layer
// Each GPU kernel belongs to the innermost forward/backward range holding the
// time its launch call started (found through the correlation id of its
// runtime or driver API call), or, without a launch record, its own start. A
// layer's forward_ns and backward_ns are its kernels' summed durations per
// iteration. Collectives belong to the backward range they were launched in,
// or to the latest layer whose backward had ended by then; their sizes
// become grad_bytes and their durations comm_ns, replayed as measured.
// NCCL kernels are never compute: beside Collective records (ssgd's tracer
// writes both) they are left out; on a rank without any they are its
// collectives, of unknown size (traces/kernel_names.h).
// Values are averaged over all ranks and over every iteration but the first
// (warm-up) when there are several. The profile then builds the DAG as any
// other.
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

namespace ssgd::dag {

struct TraceProfileResult {
  trace::LayerProfile profile;
  std::int64_t ranks = 0;
  std::int64_t iterations_seen = 0;
  std::int64_t iterations_used = 0;
  std::int64_t kernels_assigned = 0;
  std::int64_t kernels_unassigned = 0;    // outside any forward/backward range
  std::int64_t collectives = 0;
  // NCCL kernels (names starting with "nccl") left out because the rank has
  // Collective records of the same operations; on a rank without any, NCCL
  // kernels are its collectives (sizes unknown, with a warning). NCCL
  // kernels never count as compute.
  std::int64_t nccl_kernels_dropped = 0;
  std::vector<std::string> warnings;
};

// Throws ssgd::InputError (file and the offending marker) when the trace has
// no forward markers, a marker name without a layer, or no iterations (no
// markers and neither fallback applies).
TraceProfileResult profile_from_trace(trace::TraceReader& reader, const std::string& source);

}  // namespace ssgd::dag
