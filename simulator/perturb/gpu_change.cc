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
    const bool math = c.fp32_matmul != Fp32Matmul::kCapture;
    throw ParameterError(
        "platform.gpu.model",
        fmt::format("cannot move the input's compute to {}: {}; set "
                    "platform.gpu.model: capture{} to replay its times as measured",
                    c.target, why, math ? " and workload.fp32_matmul: capture" : ""));
  }
  c.notes.push_back(fmt::format("compute replayed as measured, not on the preset's {}: {}",
                                c.target, why));
}

// The rate a capture's part bounded by `r` runs at on the target: the other
// of fp32 and tf32 where the setting moves it.
WorkRate rate_on_target(WorkRate r, Fp32Matmul math) {
  if (fp32_matmul_moves(math) != r) return r;
  return r == WorkRate::kFp32 ? WorkRate::kTf32 : WorkRate::kFp32;
}

}  // namespace

std::optional<WorkRate> fp32_matmul_moves(Fp32Matmul m) {
  switch (m) {
    case Fp32Matmul::kCapture: return std::nullopt;
    case Fp32Matmul::kFp32: return WorkRate::kTf32;
    case Fp32Matmul::kTf32: return WorkRate::kFp32;
  }
  return std::nullopt;
}

const char* to_string(Fp32Matmul m) {
  switch (m) {
    case Fp32Matmul::kCapture: return "capture";
    case Fp32Matmul::kFp32: return "fp32";
    case Fp32Matmul::kTf32: return "tf32";
  }
  return "capture";
}

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

GpuChange plan_gpu_change(const trace::LayerProfile& profile, const std::string& target, bool named,
                          Fp32Matmul fp32_matmul) {
  GpuChange c;
  c.target = target;
  c.target_named = named;
  c.captured = profile.gpu;
  c.fp32_matmul = fp32_matmul;
  const bool moves_math = fp32_matmul != Fp32Matmul::kCapture;
  // Where the FP32 matrix work cannot move, the key that asked is refused.
  // `math_refused`: whether fp32_matmul, not platform.gpu.model, is the key
  // that cannot be honoured.
  const auto cannot_move = [&](const std::string& why, bool math_refused) {
    if (moves_math && math_refused) {
      throw ParameterError("workload.fp32_matmul",
                           fmt::format("cannot run the input's FP32 matrix work as {}: {}; set "
                                       "workload.fp32_matmul: capture to replay it as measured",
                                       to_string(fp32_matmul), why));
    }
    cannot(c, named, why);
  };
  if (target.empty() && !moves_math) return c;
  const GpuSpec* to = nullptr;
  if (!target.empty()) {
    to = find_gpu_preset(target);
    if (to == nullptr) {  // the scenario key checks names; a preset's are the table's
      throw ParameterError("platform.gpu.model", fmt::format("unknown GPU '{}'", target));
    }
  }
  if (profile.gpu.empty()) {
    const std::string why = fmt::format(
        "{} does not say which GPU it was measured on (a trace's device record, "
        "a profile's '# gpu:' line)",
        bounded(profile.source_name()));
    cannot_move(why, to == nullptr || !named);
    return c;
  }
  const GpuSpec* from = gpu_preset_for_device(profile.gpu);
  if (from == nullptr) {
    const std::string why = fmt::format("its GPU, '{}', is not one ssgd knows the rates of ({})",
                                        bounded(profile.gpu), gpu_preset_names());
    cannot_move(why, to == nullptr || !named);
    return c;
  }
  c.captured_preset = std::string(from->name);
  if (to == nullptr) {  // no GPU named: the arithmetic changes on the capture's own
    to = from;
    c.target = std::string(from->name);
    c.target_captured = true;
  }
  if (from == to && !moves_math) return c;  // the same GPU: nothing to scale
  if (!profile.has_splits() || !profile.update_split) {
    const std::string why = fmt::format(
        "{} does not split its times by what bounds them (forward_split and "
        "backward_split columns, '# update_split:'; a trace's profile has them)",
        bounded(profile.source_name()));
    cannot_move(why, from == to || !named);
    return c;
  }
  c.factor.fill(1.0);
  bool latency_as_memory = false;
  for (int k = 0; k < trace::kWorkRateCount; ++k) {
    const auto r = static_cast<WorkRate>(k);
    if (r == WorkRate::kHost || r == WorkRate::kOther) continue;
    auto a = gpu_rate(*from, r);
    auto b = gpu_rate(*to, rate_on_target(r, fp32_matmul));
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
  // Percent of the GPU time before.
  const auto share = [&](std::int64_t ns) {
    return 100.0 * static_cast<double>(ns) /
           static_cast<double>(std::max<std::int64_t>(1, c.kernel_ns_before));
  };
  if (moves_math) {
    const WorkRate moved = *fp32_matmul_moves(fp32_matmul);
    const WorkRate as = rate_on_target(moved, fp32_matmul);
    const auto b = gpu_rate(*to, as);
    c.moved_as = b ? b->as : moved;
    if (c.split[moved] == 0) {
      c.notes.push_back(
          fmt::format("workload.fp32_matmul {}: the input has no {} matrix work; "
                      "nothing moves",
                      to_string(fp32_matmul), to_string(moved)));
    } else if (b && b->as != as) {
      c.notes.push_back(fmt::format(
          "workload.fp32_matmul {}: {} has no {} units; its {} matrix "
          "work runs at its {} rate",
          to_string(fp32_matmul), to->name, to_string(as), to_string(moved), to_string(b->as)));
    } else {
      c.notes.push_back(fmt::format(
          "workload.fp32_matmul {}: the {} matrix work ({:.1f}% of the GPU time) runs on {}'s "
          "{} units, by the ratio of the peak rates (a kernel of the other arithmetic may reach "
          "another share of its peak: docs/validation.md, section 13)",
          to_string(fp32_matmul), to_string(moved), share(c.split[moved]), to->name,
          to_string(as)));
    }
    // Matrix kernels whose names state no arithmetic were split as fp32
    // (traces/rate_split.h): they may be BF16 or TF32 work already.
    const std::int64_t unknown = profile.kernel_classes.math_unknown_ns;
    if (fp32_matmul == Fp32Matmul::kTf32 && c.split[moved] > 0 && unknown > 0) {
      c.notes.push_back(fmt::format(
          "workload.fp32_matmul tf32: {:.1f}% of the GPU time is matrix kernels whose names state "
          "no arithmetic, counted as fp32 and moved too; where they already ran on tensor cores "
          "(bf16, fp16, tf32) the move overstates their speed-up",
          share(unknown)));
    }
  }
  for (const auto r : {WorkRate::kTf32, WorkRate::kBf16, WorkRate::kFp16, WorkRate::kFp8}) {
    if (c.split[r] == 0) continue;
    if (fp32_matmul_moves(fp32_matmul) == r) continue;  // said above
    const auto b = gpu_rate(*to, r);
    if (b && b->as != r) {
      c.notes.push_back(fmt::format(
          "{} has no {} units: that work runs at its {} rate, by the ratio of the peaks{}",
          to->name, to_string(r), to_string(b->as),
          r == WorkRate::kTf32 ? " (for ResNet-50's convolutions about twice the slowdown "
                                 "measured: docs/validation.md, section 13)"
                               : ""));
    }
  }
  // FP32 convolutions moved to a GPU with TF32 units stay FP32 unless asked:
  // PyTorch would run them in TF32 there (cuDNN's default), its matmuls not.
  const std::int64_t conv_ns =
      profile.kernel_classes.ns[static_cast<std::size_t>(trace::KernelClass::kConv)];
  if (!moves_math && c.split[WorkRate::kFp32] > 0 && conv_ns > 0 && from->tf32_tflops <= 0 &&
      to->tf32_tflops > 0) {
    c.notes.push_back(fmt::format(
        "the input's FP32 matrix work ({:.1f}% of the GPU time; convolutions {:.1f}%) stays on "
        "{}'s FP32 units, where PyTorch would run convolutions on TF32 tensor cores by default "
        "(torch.backends.cudnn.allow_tf32) and matmuls not: workload.fp32_matmul: tf32 moves "
        "all of it (docs/validation.md, section 13: a V100 capture moved to an A100 that way "
        "came out 18% fast, kept FP32 90% slow)",
        share(c.split[WorkRate::kFp32]), share(conv_ns), to->name));
  }
  if (latency_as_memory && c.split[WorkRate::kLatency] > 0) {
    c.notes.push_back("a GPU's clock is not published: memory-bound kernels of one wave scale "
                      "with memory bandwidth");
  }
  if (c.split[WorkRate::kOther] > 0) {
    const double other = share(c.split[WorkRate::kOther]);
    // Under 0.1% it changes nothing: the class table (the report's) still lists them.
    if (other >= 0.1) {
      c.notes.push_back(
          fmt::format("{:.1f}% of the GPU time is kernels in no class, kept at the "
                      "capture's speed",
                      other));
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
  // FP32 matrix work moved to the other unit is that unit's work from now on
  // (where the target has it: moved_as, decided by the plan).
  const auto moved = fp32_matmul_moves(change.fp32_matmul);
  if (moved && change.moved_as && *change.moved_as != *moved) {
    const auto move = [&](trace::RateSplit& s) {
      s[*change.moved_as] += s[*moved];
      s[*moved] = 0;
    };
    for (auto& row : out.layers) {
      move(*row.forward_split);
      move(*row.backward_split);
    }
    move(*out.update_split);
  }
  if (const GpuSpec* to = find_gpu_preset(change.target)) out.gpu = std::string(to->description);
  return out;
}

}  // namespace ssgd::sim
