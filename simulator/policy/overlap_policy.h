#pragma once
// Overlap policies: when gradient communication may start relative to the
// backward pass. Each policy turns a layer profile into a CommPlan (see
// dag/comm_plan.h); the DAG builder does the rest.
//
//   bsp   Bulk synchronous, no overlap: every layer's all-reduce waits for the
//         whole backward pass, then they run one after another in backward
//         order. t_iter = t_io + t_h2d + t_f + t_b + sum(t_c) + t_u.
//   wfbp  Wait-free backpropagation (Zhang et al., "Poseidon", USENIX ATC
//         2017; the S-SGD DAG model of Shi et al., ICPADS 2018): layer l's
//         all-reduce starts as soon as its backward ends and the previous
//         all-reduce is done, overlapping the backward of earlier layers.
//
// A layer takes part when it has gradients (grad_bytes > 0) or a measured
// communication time above zero.

#include <span>
#include <string_view>

#include "dag/comm_plan.h"
#include "simulator/scenario.h"
#include "traces/layer_profile.h"

namespace ssgd::sim {

struct PolicyInfo {
  OverlapPolicy policy;
  std::string_view name;
  std::string_view description;
  std::string_view source;
};

std::span<const PolicyInfo> overlap_policies();

dag::CommPlan make_comm_plan(OverlapPolicy policy, const trace::LayerProfile& profile);

}  // namespace ssgd::sim
