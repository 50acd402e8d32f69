#include "simulator/perturb/gpu_change.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/error.h"

namespace ssgd::sim {
namespace {

using trace::WorkRate;

bool is_gpu_rate(WorkRate r) { return r != WorkRate::kHost; }

// A refusal when the user named the GPU, else a note.
void cannot(GpuChange& c, bool named, const std::string& why) {
  if (named) {
    throw ParameterError("platform.gpu.model",
                         fmt::format("cannot move the input's compute to {}: {}; set "
                                     "platform.gpu.model: capture to replay its times as measured",
                                     c.target, why));
  }
  c.notes.push_back(fmt::format("compute replayed as measured, not on the preset's {}: {}",
                                c.target, why));
}

}  // namespace

std::int64_t time_on_gpu(const trace::RateSplit& split,
                         const std::array<double, trace::kWorkRateCount>& factor,
                         trace::RateSplit* scaled) {
  std::int64_t before = 0;
  std::int64_t after = 0;
  trace::RateSplit out;
  for (int k = 0; k < trace::kWorkRateCount; ++k) {
    const auto r = static_cast<WorkRate>(k);
    if (!is_gpu_rate(r)) continue;
    const std::int64_t v = split[r];
    // At most 2^42 x a factor under 2^10 (checked in plan_gpu_change): no overflow.
    const auto now = static_cast<std::int64_t>(std::llround(static_cast<double>(v) *
                                                            factor[static_cast<std::size_t>(k)]));
    out[r] = now;
    before += v;
    after += now;
  }
  const std::int64_t host = split[WorkRate::kHost];
  const std::int64_t total = after <= before ? after + host : std::max(after, before + host);
  out[WorkRate::kHost] = total - after;
  if (scaled) *scaled = out;
  return total;
}

GpuChange plan_gpu_change(const trace::LayerProfile& profile, const std::string& target,
                          bool named) {
  GpuChange c;
  c.target = target;
  c.target_named = named;
  c.captured = profile.gpu;
  if (target.empty()) return c;
  const GpuSpec* to = find_gpu_preset(target);
  if (to == nullptr) {  // the scenario key checks names; a preset's are the table's
    throw ParameterError("platform.gpu.model", fmt::format("unknown GPU '{}'", target));
  }
  if (profile.gpu.empty()) {
    cannot(c, named,
           fmt::format("{} does not say which GPU it was measured on (a trace's device record, "
                       "a profile's '# gpu:' line)",
                       bounded(profile.source_name())));
    return c;
  }
  const GpuSpec* from = gpu_preset_for_device(profile.gpu);
  if (from == nullptr) {
    cannot(c, named,
           fmt::format("its GPU, '{}', is not one ssgd knows the rates of ({})",
                       bounded(profile.gpu), gpu_preset_names()));
    return c;
  }
  c.captured_preset = std::string(from->name);
  if (from == to) return c;  // the same GPU: nothing to scale
  if (!profile.has_splits() || !profile.update_split) {
    cannot(c, named,
           fmt::format("{} does not split its times by what bounds them (forward_split and "
                       "backward_split columns, '# update_split:'; a trace's profile has them)",
                       bounded(profile.source_name())));
    return c;
  }
  c.factor.fill(1.0);
  bool latency_as_memory = false;
  for (int k = 0; k < trace::kWorkRateCount; ++k) {
    const auto r = static_cast<WorkRate>(k);
    if (r == WorkRate::kHost || r == WorkRate::kOther) continue;
    auto a = gpu_rate(*from, r);
    auto b = gpu_rate(*to, r);
    if (r == WorkRate::kLatency && (!a || !b)) {
      // A clock not published: one wave of memory-bound work scales as the rest of it.
      latency_as_memory = true;
      a = gpu_rate(*from, WorkRate::kMemory);
      b = gpu_rate(*to, WorkRate::kMemory);
    }
    c.factor[static_cast<std::size_t>(k)] = a->value / b->value;
  }
  // Sums over the layers (each part at most 2^42 ns, at most 2^50 in all).
  const auto add = [&](const trace::RateSplit& s) {
    for (int k = 0; k < trace::kWorkRateCount; ++k) {
      const auto r = static_cast<WorkRate>(k);
      c.split[r] += is_gpu_rate(r) ? s[r] : 0;
    }
    c.host_ns += s[WorkRate::kHost];
  };
  for (const auto& row : profile.layers) {
    add(*row.forward_split);
    add(*row.backward_split);
  }
  add(*profile.update_split);
  c.kernel_ns_before = c.split.total();
  for (int k = 0; k < trace::kWorkRateCount; ++k) {
    c.kernel_ns_after += static_cast<std::int64_t>(std::llround(
        static_cast<double>(c.split.ns[static_cast<std::size_t>(k)]) * c.factor[static_cast<std::size_t>(k)]));
  }
  c.applied = true;
  // What was assumed, said where it matters.
  for (const auto r : {WorkRate::kTf32, WorkRate::kBf16, WorkRate::kFp16, WorkRate::kFp8}) {
    if (c.split[r] == 0) continue;
    const auto b = gpu_rate(*to, r);
    if (b && b->as != r) {
      c.notes.push_back(fmt::format("{} has no {} units: that work runs at its {} rate",
                                    to->name, to_string(r), to_string(b->as)));
    }
  }
  if (latency_as_memory && c.split[WorkRate::kLatency] > 0) {
    c.notes.push_back("a GPU's clock is not published: memory-bound kernels of one wave scale "
                      "with memory bandwidth");
  }
  if (c.split[WorkRate::kOther] > 0) {
    const double share = 100.0 * static_cast<double>(c.split[WorkRate::kOther]) /
                         static_cast<double>(std::max<std::int64_t>(1, c.kernel_ns_before));
    // Under 0.1% it changes nothing: the class table (the report's) still lists them.
    if (share >= 0.1) {
      c.notes.push_back(fmt::format("{:.1f}% of the GPU time is kernels in no class, kept at the "
                                    "capture's speed",
                                    share));
    }
  }
  return c;
}

trace::LayerProfile profile_on_gpu(const trace::LayerProfile& profile, const GpuChange& change) {
  if (!change.applied) return profile;
  trace::LayerProfile out = profile;
  for (auto& row : out.layers) {
    row.forward = Duration(time_on_gpu(*row.forward_split, change.factor, &*row.forward_split));
    row.backward = Duration(time_on_gpu(*row.backward_split, change.factor, &*row.backward_split));
  }
  out.update = Duration(time_on_gpu(*out.update_split, change.factor, &*out.update_split));
  if (const GpuSpec* to = find_gpu_preset(change.target)) out.gpu = std::string(to->description);
  return out;
}

}  // namespace ssgd::sim
