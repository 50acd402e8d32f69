#pragma once
// The what-if to another GPU: a profile measured on one GPU (its '# gpu:',
// from the trace's device record) replayed on the GPU the scenario names
// (platform.gpu.model, or the platform preset's GPU).
//
// Each layer's forward and backward, and the update, carry their time split
// by the rate that bounds it (traces/rate_split.h: matrix and convolution
// kernels by their arithmetic, memory-bound kernels by bandwidth or, when
// their grid fits in one wave, by the SM clock; the host's time; kernels in
// no class). Part r of the GPU's time K becomes part_r x rate_r(from) /
// rate_r(to) (simulator/platform/gpu_preset.h; a GPU without a unit runs the
// work on the one it falls back to); kernels in no class keep their time.
// With K' the GPU's new time and H the host's:
//   K' <= K   the layer takes K' + H: the host launches as it did, and its
//             gaps stay (a faster GPU waits for it as long, or longer, which
//             this leaves out)
//   K' >  K   the layer takes max(K', K + H): the host's launches spanned
//             K + H at most, and a slower GPU fills the gaps it left before
//             the layer is bound by the GPU again
// Measured collectives (comm_ns) keep their times: the network replays them.
//
// The figures come from the GPUs' datasheets (peak rates), not from
// measuring the kernels: a kernel that reaches a different fraction of the
// peak on the other GPU (another algorithm chosen, another tile size) is not
// modelled. docs/validation.md, section 13, holds the check against
// measurements.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "simulator/platform/gpu_preset.h"
#include "traces/layer_profile.h"
#include "traces/rate_split.h"

namespace ssgd::sim {

// The arithmetic FP32 matrix and convolution work runs in on the target
// (key workload.fp32_matmul): as each kernel ran in the capture; on TF32
// tensor cores (PyTorch's allow_tf32, set_float32_matmul_precision("high"));
// or on the FP32 cores (TF32 off). A capture's fp32 and tf32 parts both hold
// FP32 tensors; only the unit that multiplies them changes. The time moves
// by the ratio of the two units' peak rates, which a kernel of the other
// arithmetic need not reach the same share of (docs/validation.md, section
// 13).
enum class Fp32Matmul { kCapture, kFp32, kTf32 };
const char* to_string(Fp32Matmul m);
// The capture's rate the setting moves to the other unit: fp32 for kTf32,
// tf32 for kFp32; none for kCapture.
std::optional<trace::WorkRate> fp32_matmul_moves(Fp32Matmul m);

// Whether and how a profile's compute moves to another GPU.
struct GpuChange {
  std::string target;         // the scenario's GPU preset ("h100-sxm"), or the capture's
                              // (target_captured); empty: none
  bool target_named = false;  // by platform.gpu.model (else by the platform preset)
  bool target_captured = false;  // none named: the capture's own GPU, for fp32_matmul
  Fp32Matmul fp32_matmul = Fp32Matmul::kCapture;
  // With fp32_matmul: the rate the moved part (fp32 for tf32, tf32 for fp32)
  // runs at on the target; its own where the target lacks the other unit.
  std::optional<trace::WorkRate> moved_as;
  std::string captured;    // the profile's GPU as measured ("NVIDIA H200"); empty: unknown
  std::string captured_preset;  // its preset ("h200"); empty: none
  bool applied = false;    // times were scaled
  // Why nothing was scaled, or what was assumed, one line each (empty when
  // applied with nothing to say).
  std::vector<std::string> notes;
  // Time factor per rate (1 for host and other); valid when applied.
  std::array<double, trace::kWorkRateCount> factor{};
  // One iteration of one GPU, summed over layers and the update: the GPU's
  // kernel time before and after, and the host's before.
  std::int64_t kernel_ns_before = 0;
  std::int64_t kernel_ns_after = 0;
  std::int64_t host_ns = 0;
  trace::RateSplit split;  // the GPU time by rate, before
};

// Decides the change for `profile` under a target GPU preset `target` (empty:
// none). `named` is true when the user named it (platform.gpu.model): then a
// profile that cannot be moved to it (no '# gpu:', a GPU the table lacks, no
// split by rate) is refused with a ParameterError naming platform.gpu.model;
// a preset's GPU only gets a note. `fp32_matmul` other than kCapture moves
// the FP32 matrix work to the other unit, on the target or, with none, on
// the capture's own GPU; a profile it cannot apply to is refused with a
// ParameterError naming workload.fp32_matmul.
GpuChange plan_gpu_change(const trace::LayerProfile& profile, const std::string& target, bool named,
                          Fp32Matmul fp32_matmul = Fp32Matmul::kCapture);

// The profile on the target GPU (profile itself when !change.applied); its
// '# gpu:' becomes the target's description.
trace::LayerProfile profile_on_gpu(const trace::LayerProfile& profile, const GpuChange& change);

// One part's new time: see the header (K' <= K: K' + H; else max(K', K + H)).
std::int64_t time_on_gpu(const trace::RateSplit& split,
                         const std::array<double, trace::kWorkRateCount>& factor,
                         trace::RateSplit* scaled);

}  // namespace ssgd::sim
