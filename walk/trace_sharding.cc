#include "walk/trace_sharding.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>

#include "common/checked_math.h"

namespace ssgd::walk {

namespace v1 = trace::v1;
using Phase = trace::ShardingRange::Phase;

namespace {

constexpr std::string_view kRootUnit = "(root)";

std::string unit_name(const trace::ShardingRange& r) {
  return r.unit.empty() ? std::string(kRootUnit) : r.unit;
}

// The profile's dtype names ("# grad_dtype:") for a trace datatype.
std::string profile_dtype(const std::string& datatype) {
  if (datatype == "float32") return "fp32";
  if (datatype == "bfloat16") return "bf16";
  if (datatype == "float16") return "fp16";
  return {};
}

// The key with the most counts (the first on ties).
template <typename Key>
std::optional<Key> most_common(const std::map<Key, std::int64_t>& counts) {
  std::optional<Key> best;
  std::int64_t n = 0;
  for (const auto& [key, count] : counts) {
    if (count > n) {
      best = key;
      n = count;
    }
  }
  return best;
}

bool is_kernel(const TaskWork& w) {
  return w.kind == dag::TaskKind::kForward || w.kind == dag::TaskKind::kBackward ||
         w.kind == dag::TaskKind::kUpdate;
}

}  // namespace

TraceSharding::TraceSharding(std::size_t layers, std::int32_t world_size)
    : world_size_(world_size), layer_unit_(layers, -1) {}

std::int32_t TraceSharding::unit_index(const std::string& name) {
  const auto [it, fresh] =
      unit_by_name_.emplace(name, static_cast<std::int32_t>(units_.size()));
  if (fresh) {
    units_.push_back(name);
    unit_stats_.emplace_back();
  }
  return it->second;
}

void TraceSharding::add(const IterationWork& work) {
  const auto& spans = work.sharding;
  if (!spans.empty()) framework_seen_ = true;
  // The units of this iteration and their forward windows, by pre-forward.
  struct Window {
    std::int64_t start_ns, end_ns;
    std::int32_t unit;
  };
  std::vector<Window> windows;
  std::vector<std::int32_t> span_unit(spans.size(), -1);  // pre-forward spans: their unit
  std::vector<std::int32_t> forward_order;                // this iteration's units
  std::vector<std::size_t> open_fsdp1;                    // FSDP1 pre-forwards awaiting a post
  std::int64_t backward_start = std::numeric_limits<std::int64_t>::max();
  std::int64_t backward_end = std::numeric_limits<std::int64_t>::min();
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const auto& r = spans[i].range;
    if (r.phase == Phase::kPreBackward || r.phase == Phase::kBackwardPrefetch) {
      backward_start = std::min(backward_start, spans[i].start_ns);
    }
    if (r.phase == Phase::kPostBackward || r.phase == Phase::kPreBackward) {
      backward_end = std::max(backward_end, spans[i].end_ns);
    }
    if (r.framework == trace::ShardingRange::Framework::kFsdp1) {
      fsdp1_ = true;
      if (r.phase == Phase::kPreForward) {
        const auto k = forward_order.size();
        span_unit[i] = unit_index(fmt::format("unit{}", k));
        forward_order.push_back(span_unit[i]);
        windows.push_back({spans[i].start_ns, spans[i].end_ns, span_unit[i]});
        open_fsdp1.push_back(windows.size() - 1);
      } else if (r.phase == Phase::kPostForward && !open_fsdp1.empty()) {
        windows[open_fsdp1.back()].end_ns = spans[i].end_ns;
        open_fsdp1.pop_back();
      }
    } else if (r.phase == Phase::kPreForward && r.named) {
      const std::int32_t u = unit_index(unit_name(r));
      span_unit[i] = u;
      if (std::find(forward_order.begin(), forward_order.end(), u) != forward_order.end()) continue;
      forward_order.push_back(u);
      std::int64_t end = spans[i].end_ns;
      for (std::size_t j = i + 1; j < spans.size(); ++j) {
        if (spans[j].range.phase == Phase::kPostForward && spans[j].range.named &&
            unit_name(spans[j].range) == units_[static_cast<std::size_t>(u)]) {
          end = spans[j].end_ns;
          break;
        }
      }
      windows.push_back({spans[i].start_ns, end, u});
    }
  }
  for (const auto& r : work.ranges) {
    if (r.kind == dag::TaskKind::kBackward) {
      backward_start = std::min(backward_start, r.start_ns);
      backward_end = std::max(backward_end, r.end_ns);
    }
  }
  // Layers to units: the innermost (latest-starting) window holding the
  // start of the layer's forward range.
  for (const auto& r : work.ranges) {
    if (r.kind != dag::TaskKind::kForward) continue;
    const Window* in = nullptr;
    for (const auto& w : windows) {
      if (w.start_ns <= r.start_ns && r.start_ns < w.end_ns && (!in || w.start_ns >= in->start_ns)) {
        in = &w;
      }
    }
    if (in == nullptr) continue;
    auto& slot = layer_unit_[static_cast<std::size_t>(r.layer)];
    if (slot < 0) {
      slot = in->unit;
    } else if (slot != in->unit) {
      ++layer_unit_conflicts_;
    }
  }
  // The unit the innermost sharding range open at `t` names, or -1.
  const auto unit_at = [&](std::int64_t t, bool* in_backward_unshard) -> std::int32_t {
    std::optional<std::size_t> inner;
    for (std::size_t i = 0; i < spans.size() && spans[i].start_ns <= t; ++i) {
      const auto& r = spans[i].range;
      const bool places = r.framework == trace::ShardingRange::Framework::kFsdp2
                              ? r.named
                              : r.phase != Phase::kOther && r.phase != Phase::kPostForward;
      if (places && t < spans[i].end_ns) inner = i;
    }
    if (!inner) return -1;
    const auto& r = spans[*inner].range;
    if (in_backward_unshard != nullptr) {
      *in_backward_unshard =
          r.phase == Phase::kPreBackward || r.phase == Phase::kBackwardPrefetch;
    }
    if (r.framework == trace::ShardingRange::Framework::kFsdp2) {
      return r.named ? unit_index(unit_name(r)) : -1;
    }
    if (r.phase == Phase::kPreForward) return span_unit[*inner];
    if (r.phase == Phase::kForwardPrefetch) {  // the next unit's, in forward order
      for (std::size_t i = *inner; i-- > 0;) {
        if (spans[i].range.phase == Phase::kPreForward && spans[i].end_ns > t) {
          const auto at = std::find(forward_order.begin(), forward_order.end(), span_unit[i]);
          return at + 1 < forward_order.end() ? *(at + 1) : -1;
        }
      }
    }
    return -1;
  };
  // This iteration's gradient bytes by unit, and the collectives left to order.
  std::vector<std::int64_t> bytes(units_.size(), 0);
  std::vector<char> has_gradient(units_.size(), 0), gathered(units_.size(), 0);
  std::vector<const TaskWork*> unplaced_gathers, unplaced_gradients;
  bool any_reduce_scatter = false;
  for (const TaskWork& w : work.work) {
    if (w.kind != dag::TaskKind::kComm) {
      bool backward_unshard = false;
      const std::int32_t u = is_kernel(w) ? unit_at(w.launch_ns, &backward_unshard) : -1;
      if (u >= 0 && backward_unshard) {
        ++backward_copy_ins_;
        if (gathers_ == 0) unit_stats_[static_cast<std::size_t>(u)].gathered_backward = true;
      }
      continue;
    }
    const auto op = static_cast<v1::Collective::Op>(w.op);
    const bool forward = w.launch_ns < backward_start;
    const bool after = !forward && w.launch_ns >= backward_end;
    const std::int32_t u = unit_at(w.launch_ns, nullptr);
    if (op == v1::Collective::ALL_GATHER) {
      ++gathers_;
      ++(forward ? gathers_forward_ : after ? gathers_after_ : gathers_backward_);
      if (w.nranks > 0) ++gather_groups_[w.nranks];
      if (w.bytes == 0 && gathers_without_size_++ == 0) first_unsized_gather_ = w.record;
      if (u >= 0) {
        auto& unit = unit_stats_[static_cast<std::size_t>(u)];
        (forward ? unit.gathered_forward : unit.gathered_backward) = true;
        if (forward) gathered[static_cast<std::size_t>(u)] = 1;
      } else if (forward) {
        unplaced_gathers.push_back(&w);
      }
    } else if (op == v1::Collective::REDUCE_SCATTER) {
      any_reduce_scatter = true;
      ++reduce_scatters_;
      if (!w.datatype.empty()) ++gradient_dtypes_[w.datatype];
      if (w.bytes == 0 && reduce_scatters_without_size_++ == 0) {
        first_unsized_reduce_scatter_ = w.record;
      }
      if (u >= 0) {
        bytes[static_cast<std::size_t>(u)] += w.bytes;
        has_gradient[static_cast<std::size_t>(u)] = 1;
      } else {
        unplaced_gradients.push_back(&w);
      }
    } else if (op == v1::Collective::REDUCE) {
      ++reduces_;
      if (!w.datatype.empty()) ++gradient_dtypes_[w.datatype];
      if (world_size_ > 1 && w.nranks > 1 && w.nranks < world_size_) ++small_group_reduces_;
    } else if (op == v1::Collective::ALL_REDUCE) {
      ++all_reduces_;
      if (!w.datatype.empty()) ++all_reduce_dtypes_[w.datatype];
      if (world_size_ > 1 && w.nranks > 1 && w.nranks < world_size_) ++small_group_all_reduces_;
    }
  }
  // Without a reduce-scatter, the reduces to the owners are the gradients'
  // collectives (ZeRO-1/2 reducing per owner), else the all-reduces (zero1
  // over all-reduces).
  if (!any_reduce_scatter) {
    const bool reduced = std::any_of(work.work.begin(), work.work.end(), [](const TaskWork& w) {
      return w.kind == dag::TaskKind::kComm && w.op == v1::Collective::REDUCE;
    });
    const auto gradient_op = reduced ? v1::Collective::REDUCE : v1::Collective::ALL_REDUCE;
    for (const TaskWork& w : work.work) {
      if (w.kind != dag::TaskKind::kComm || w.op != gradient_op) continue;
      const std::int32_t u = unit_at(w.launch_ns, nullptr);
      if (u >= 0) {
        bytes[static_cast<std::size_t>(u)] += w.bytes;
        has_gradient[static_cast<std::size_t>(u)] = 1;
      } else {
        unplaced_gradients.push_back(&w);
      }
    }
  }
  // By order: forward gathers to the units without one, in forward order;
  // gradients to the units without any, in backward order.
  auto next_gather = forward_order.begin();
  for (const TaskWork* w : unplaced_gathers) {
    while (next_gather != forward_order.end() && gathered[static_cast<std::size_t>(*next_gather)]) {
      ++next_gather;
    }
    if (next_gather == forward_order.end()) break;
    unit_stats_[static_cast<std::size_t>(*next_gather)].gathered_forward = true;
    gathered[static_cast<std::size_t>(*next_gather)] = 1;
    static_cast<void>(w);
  }
  auto next_gradient = forward_order.rbegin();
  for (const TaskWork* w : unplaced_gradients) {
    while (next_gradient != forward_order.rend() &&
           has_gradient[static_cast<std::size_t>(*next_gradient)]) {
      ++next_gradient;
    }
    if (next_gradient == forward_order.rend()) {
      ++unplaced_gradients_;
      gradient_bytes_unplaced_ += w->bytes;
      continue;
    }
    bytes[static_cast<std::size_t>(*next_gradient)] += w->bytes;
    has_gradient[static_cast<std::size_t>(*next_gradient)] = 1;
  }
  for (std::size_t u = 0; u < bytes.size(); ++u) {
    auto& unit = unit_stats_[u];
    unit.gradient_bytes = checked_add(unit.gradient_bytes, bytes[u]).value_or(unit.gradient_bytes);
    unit.gradient_ops += has_gradient[u];
  }
}

void TraceSharding::fill(trace::LayerProfile& p, std::int64_t samples,
                         std::vector<std::string>& warnings) const {
  if (!sharded()) return;
  const bool any_backward_gather =
      std::any_of(unit_stats_.begin(), unit_stats_.end(),
                  [](const Unit& u) { return u.gathered_backward; });
  // The strategy.
  if (hsdp()) {
    p.sharding = "hsdp";
  } else if (gathers_backward_ > 0 || (gathers_ == 0 && any_backward_gather)) {
    p.sharding = "zero3";
  } else if (gathers_forward_ > 0 || (gathers_ == 0 && framework_seen_ && !fsdp1_)) {
    p.sharding = "zero2";
  } else if (gathers_after_ > 0) {
    p.sharding = "zero1";
  } else {
    warnings.push_back(
        "FSDP1 ranges without collectives (FSDP1 on one GPU runs NO_SHARD): the sharding "
        "strategy is not recorded");
  }
  if (gathers_ == 0 && !p.sharding.empty()) {
    warnings.push_back(fmt::format(
        "the trace has FSDP ranges but no all-gather (world size 1?): sharding {} recovered from "
        "the ranges ({}); the shard group, gradient dtype and sizes are unknown",
        p.sharding,
        p.sharding == "zero3" ? "parameters copied in again before the backward"
                              : "no parameters copied in before the backward"));
  }
  if (const auto group = most_common(gather_groups_)) {
    p.shard_group = *group;
    if (gather_groups_.size() > 1) {
      warnings.push_back(fmt::format("all-gathers over {} different group sizes; shard_group {} "
                                     "is the most common",
                                     gather_groups_.size(), *group));
    }
  }
  // How the gradients reached their owners, where not by reduce-scatters.
  if (reduce_scatters_ == 0 && !p.sharding.empty() && p.sharding != "none") {
    if (reduces_ > 0) {
      p.gradient_reduction = "reduce";
    } else if (all_reduces_ > 0) {
      p.gradient_reduction = "all_reduce";
    }
  }
  const auto& dtypes = reduce_scatters_ > 0 || reduces_ > 0 ? gradient_dtypes_ : all_reduce_dtypes_;
  if (const auto dtype = most_common(dtypes)) {
    p.grad_dtype = profile_dtype(*dtype);
    if (p.grad_dtype.empty()) {
      warnings.push_back(fmt::format("the gradients' collectives are of {}, which a profile's "
                                     "grad_dtype cannot name (fp32, bf16, fp16): grad_bytes are "
                                     "its bytes, read as fp32",
                                     *dtype));
    }
    if (dtypes.size() > 1) {
      warnings.push_back(fmt::format("the gradients' collectives have {} datatypes; grad_dtype "
                                     "is the most common's",
                                     dtypes.size()));
    }
  }
  if (gathers_without_size_ > 0) {
    warnings.push_back(fmt::format("{} all-gather(s) had no size (first: record {}); they never "
                                   "count as gradients, and the parameters' sizes stay unknown",
                                   gathers_without_size_, first_unsized_gather_));
  }
  if (reduce_scatters_without_size_ > 0) {
    warnings.push_back(fmt::format("{} reduce-scatter(s) had no size (first: record {}): their "
                                   "units' grad_bytes are short by them",
                                   reduce_scatters_without_size_, first_unsized_reduce_scatter_));
  }
  if (units_.empty() || p.layers.empty()) {
    if (gathers_ > 0) {
      warnings.push_back(
          "sharded, but the trace has no FSDP ranges naming its units: no unit column; each "
          "layer's grad_bytes are the gradient collectives its backward launched");
    }
    return;
  }
  // Rows to units; a row in no window takes the unit of the row before.
  const std::size_t L = p.layers.size();
  std::vector<std::int32_t> unit_of(L, -1);
  std::int64_t unplaced_rows = 0;
  for (std::size_t l = 0; l < L; ++l) {
    unit_of[l] = l < layer_unit_.size() ? layer_unit_[l] : -1;
    if (unit_of[l] < 0) {
      ++unplaced_rows;
      unit_of[l] = l > 0 ? unit_of[l - 1] : -1;
    }
  }
  for (std::size_t l = L; l-- > 0;) {  // leading rows in no window: the first placed row's
    if (unit_of[l] < 0 && l + 1 < L) unit_of[l] = unit_of[l + 1];
  }
  if (unit_of.front() < 0) unit_of.assign(L, 0);
  if (unplaced_rows > 0) {
    warnings.push_back(fmt::format("{} layer(s) in no FSDP unit's forward; given the unit of the "
                                   "layer before them",
                                   unplaced_rows));
  }
  if (layer_unit_conflicts_ > 0) {
    warnings.push_back(fmt::format("{} forward range(s) fell in another unit than their layer's "
                                   "first; the first is kept",
                                   layer_unit_conflicts_));
  }
  // The unit column numbers runs of rows: a unit split around others (the
  // root's embeddings and head) is two units of the profile.
  std::int64_t column = 0;
  for (std::size_t l = 0; l < L; ++l) {
    if (l > 0 && unit_of[l] != unit_of[l - 1]) ++column;
    p.layers[l].unit = column;
  }
  // grad_bytes from the units' gradient collectives, when there are any.
  const bool sized = std::any_of(unit_stats_.begin(), unit_stats_.end(),
                                 [](const Unit& u) { return u.gradient_bytes > 0; });
  if (!sized) {
    if (gathers_ > 0 || reduce_scatters_ > 0) {
      warnings.push_back("no sized reduce-scatter or all-reduce gives the units' gradients: "
                         "grad_bytes are not from the sharded collectives");
    }
    return;
  }
  const auto average = [samples](std::int64_t v) {
    return samples > 0 ? v / samples + (v % samples >= samples - samples / 2) : v;
  };
  std::vector<std::int64_t> unit_bytes(units_.size());
  for (std::size_t u = 0; u < units_.size(); ++u) unit_bytes[u] = average(unit_stats_[u].gradient_bytes);
  for (auto& row : p.layers) row.grad_bytes = 0;
  std::vector<std::vector<std::size_t>> rows(units_.size());
  for (std::size_t l = 0; l < L; ++l) rows[static_cast<std::size_t>(unit_of[l])].push_back(l);
  std::int64_t rowless = 0;
  for (std::size_t u = 0; u < units_.size(); ++u) {
    if (unit_bytes[u] == 0) continue;
    if (rows[u].empty()) {
      ++rowless;
      std::size_t to = 0;
      for (std::size_t l = 0; l < L; ++l) {
        if (static_cast<std::size_t>(unit_of[l]) < u) to = l;
      }
      p.layers[to].grad_bytes += unit_bytes[u];
      continue;
    }
    std::int64_t weight = 0;
    for (const auto l : rows[u]) weight += p.layers[l].backward.ns();
    std::int64_t given = 0;
    for (std::size_t i = 0; i < rows[u].size(); ++i) {
      const auto l = rows[u][i];
      std::int64_t share = 0;
      if (i + 1 == rows[u].size()) {
        share = unit_bytes[u] - given;
      } else if (weight > 0) {
        share = static_cast<std::int64_t>(static_cast<long double>(unit_bytes[u]) *
                                          p.layers[l].backward.ns() / weight);
      } else {
        share = unit_bytes[u] / static_cast<std::int64_t>(rows[u].size());
      }
      p.layers[l].grad_bytes += share;
      given += share;
    }
  }
  if (rowless > 0) {
    warnings.push_back(fmt::format("{} unit(s) with gradients hold no layer of the profile; their "
                                   "bytes go to the last row of a unit before them",
                                   rowless));
  }
  if (unplaced_gradients_ > 0) {
    warnings.push_back(fmt::format("{} gradient collective(s) ({} bytes) fell to no unit; left out "
                                   "of grad_bytes",
                                   unplaced_gradients_, gradient_bytes_unplaced_));
  }
}

}  // namespace ssgd::walk
