#pragma once
// What-if perturbations of a replay (the scenario's `perturb` section), and
// the parsers of their list values. Each key is documented in
// scenarios/README.md; what each does to the run:
//
// - compute_time_factor, layer_factors, class_factors, mixed_precision:
//   every forward and backward time of a layer is multiplied by
//   compute_time_factor x (the factors of every layer pattern it matches) x
//   (its class's factor) / (mixed_precision_speedup when mixed precision is
//   on); mixed precision also halves each layer's gradient bytes (rounded
//   up). A factor above 1 is slower. These keep all ranks alike, so ranks
//   still fold and the closed forms still apply (compute_perturbation.h).
// - bandwidth_factors, latency_factors: every link of a kind has its
//   bandwidth (latency) multiplied (PlatformSpec::bandwidth_factor); the nccl
//   class factor t multiplies every link's latency by t and divides its
//   bandwidth by t, which multiplies an alpha-beta collective time by t
//   exactly, under both network models.
// - stragglers, imbalance, jitter: make ranks differ (per-rank compute
//   factors, per-task random factors); they turn rank folding off and the
//   closed form is not reported.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/platform/platform_spec.h"
#include "traces/kernel_class.h"

namespace ssgd::sim {

using trace::classify_kernel;
using trace::kernel_class_names;
using trace::KernelClass;
using trace::kKernelClassCount;
using trace::parse_kernel_class;

// "conv1:2" or "layer?.*:0.5" or "3:1.5": a layer-name glob (* any run, ?
// any one character) or, all digits, the profile's `layer` column.
struct LayerFactor {
  std::string pattern;
  double factor = 1;
  friend bool operator==(const LayerFactor&, const LayerFactor&) = default;
};

// Rank `rank`'s compute `percent` % slower.
struct Straggler {
  std::int64_t rank = 0;
  double percent = 0;
  friend bool operator==(const Straggler&, const Straggler&) = default;
};

// A multiplicative factor per task, drawn independently (jitter.h):
// normal: 1 + cv z; uniform: 1 + h (2u - 1); lognormal: exp(sigma z - sigma^2 / 2)
// (mean 1); each clamped at 0.
enum class JitterKind { kNone, kNormal, kUniform, kLognormal };
const char* to_string(JitterKind kind);

struct JitterSpec {
  JitterKind kind = JitterKind::kNone;
  double spread = 0;  // cv, half-width or sigma
  friend bool operator==(const JitterSpec&, const JitterSpec&) = default;
};

// An assumption, not a measurement: V100 tensor cores peak at 8x the FP32
// rate, but whole-network AMP training runs are typically 1.5-3x faster
// (NVIDIA's mixed-precision training guide quotes "up to 3x"); 2 is the
// middle of that range.
inline constexpr double kDefaultMixedPrecisionSpeedup = 2.0;

struct Perturbation {
  double compute_time_factor = 1;                 // perturb.compute_time_factor
  std::vector<LayerFactor> layer_factors;         // perturb.layer_factors
  std::array<double, kKernelClassCount> class_factors{1, 1, 1, 1, 1, 1, 1, 1};  // perturb.class_factors
  bool mixed_precision = false;                   // perturb.mixed_precision
  double mixed_precision_speedup = kDefaultMixedPrecisionSpeedup;  // perturb.mixed_precision_speedup
  std::array<double, kLinkKindCount> bandwidth_factors{1, 1, 1, 1, 1};  // perturb.bandwidth_factors
  std::array<double, kLinkKindCount> latency_factors{1, 1, 1, 1, 1};    // perturb.latency_factors
  std::vector<Straggler> stragglers;              // perturb.stragglers
  double imbalance = 0;                           // perturb.imbalance
  JitterSpec jitter;                              // perturb.jitter
  // perturb.jitter_draw: class: one draw per task of each class of ranks of
  // equal compute factor, shared by the class's ranks (so they still fold);
  // else (task, the default) one draw per task of every rank.
  bool jitter_per_class = false;
  std::uint64_t seed = 1;                         // perturb.seed
  std::int64_t repeats = 1;                       // perturb.repeats

  // Stragglers, imbalance or jitter: ranks differ, so they cannot be folded.
  [[nodiscard]] bool varies_by_rank() const;
  // Ranks told apart by their compute factor alone (no jitter, or jitter
  // drawn per class): those of equal factor may fold into one a class
  // (simulator/replay/job_graph.h).
  [[nodiscard]] bool ranks_fold_by_class() const;
  // Anything differs from the defaults (seed and repeats aside).
  [[nodiscard]] bool active() const;
  friend bool operator==(const Perturbation&, const Perturbation&) = default;
};

// The active perturbations in a few words, "" when none: for the summary.
std::string describe(const Perturbation& p);

// Parsers of the perturb keys' values. Each throws std::invalid_argument with
// a reason that names the item at fault and not the key (the scenario loader
// adds where the value came from). "none" is the empty list.
std::vector<LayerFactor> parse_layer_factors(std::string_view value);
std::array<double, kKernelClassCount> parse_class_factors(std::string_view value);
std::array<double, kLinkKindCount> parse_link_factors(std::string_view value, bool latency);
std::vector<Straggler> parse_stragglers(std::string_view value);
JitterSpec parse_jitter(std::string_view value);
// A number in [lo, hi] (lo excluded when `lo_open`).
double parse_factor(std::string_view value, double lo, double hi, bool lo_open);

}  // namespace ssgd::sim
