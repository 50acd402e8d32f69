#pragma once
// Interference between communication and the computation it overlaps (the
// scenario's `interference` section, scenarios/README.md).
//
// A collective that runs while a rank computes takes resources from it, and
// the computation takes resources from the collective:
//   - NCCL's kernels occupy SMs (one per channel) and move two to three
//     bytes through HBM per byte on the wire (NCCL's maintainer in
//     NVIDIA/nccl#1428 and #689), so a GPU's compute-bound kernels lose SMs
//     and its memory-bound kernels lose bandwidth;
//   - a host-side library such as gloo runs on CPU threads that share the
//     rank's cores with the framework's operators.
// The model `contention` (the only one besides `none`, the default) stretches
// each piece of work by a constant factor for as long as the other kind runs
// beside it: while a collective of a rank runs, the rank's compute runs at
// 1 / (1 + f), where f mixes the class's factors by the share of the task's
// time each rate bounds (traces/rate_split.h); while any of a collective's
// ranks computes, the collective runs at 1 / (1 + comm). A host library runs
// several collectives of one process group at once on its worker threads
// (gloo: two a process group in PyTorch), which share the rank's cores and
// wait on each other there; ssgd runs a process group's collectives one at a
// time, so a collective that waited for its process group behind another
// takes 1 + host.concurrent times its time alone: the cost, in the group's
// serial time, of the library having run it beside the other
// (docs/validation.md, 8c and 14). Nothing is guessed:
// every factor defaults to 0, and `ssgd calibrate --interference` fits them
// from captures (simulator/calibration/interference_fit.h).
//
// The model `demand` (host class only) follows the CPU a host-side
// library's collectives take rather than a factor for as long as they run.
// A rank's operators and its library's worker threads share one CPU budget
// (a core, or a quota). A collective that moves b bytes through the rank
// (sent plus received, ssgd::bytes_through_rank) in its time alone T takes
// c b of that CPU (c = interference.host.cpu_per_byte: the network stack,
// the library's copies and reductions), a demand u = min(1, c b / T) while
// it runs. The budget is shared max-min fairly, as Linux's fair scheduler
// shares a core among runnable threads: a compute task wants all of it, a
// collective u; a thread that wants less than an equal share gets what it
// wants, the others split the rest. A compute task runs at its share, a
// collective at its share over u. One of each: compute at 1 - min(u, 1/2),
// the collective at min(u, 1/2) / u. So a collective the CPU bounds alone
// (u = 1) and the compute beside it each run at half speed (processor
// sharing), and on a slow link (small u) the compute loses u and the
// collective nothing: one constant c gives both, where `contention`'s
// factor must be fitted per network (docs/validation.md, section 12).
//
// Which class applies (interference.resource): gpu, host, or auto: gpu when
// the input's compute ran on a GPU (it names one, or its rate splits hold GPU
// kernels), host when it comes from a trace without GPU kernels or its
// splits hold host time alone, and gpu otherwise (a layer CSV without
// splits), said in the replay's output.

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "traces/layer_profile.h"

namespace ssgd::sim {

enum class InterferenceModel { kNone, kContention, kDemand };
enum class InterferenceResource { kAuto, kGpu, kHost };
const char* to_string(InterferenceModel m);
const char* to_string(InterferenceResource r);
std::optional<InterferenceModel> parse_interference_model(std::string_view name);
std::optional<InterferenceResource> parse_interference_resource(std::string_view name);

// Fractions: 0.25 = 25% slower while the other kind runs. Unset: 0.
struct InterferenceSpec {
  InterferenceModel model = InterferenceModel::kNone;
  InterferenceResource resource = InterferenceResource::kAuto;
  std::optional<double> gpu_compute;  // interference.gpu.compute: SM-bound kernels
  std::optional<double> gpu_memory;   // interference.gpu.memory: memory-bound kernels
  std::optional<double> gpu_comm;     // interference.gpu.comm: the collective itself
  std::optional<double> host_compute; // interference.host.compute: the rank's operators
  std::optional<double> host_comm;    // interference.host.comm: the collective itself
  std::optional<double> host_concurrent;  // interference.host.concurrent: a collective
                                          // that waited behind another of its group
  std::optional<double> host_cpu_per_byte;  // interference.host.cpu_per_byte (model demand), ns

  [[nodiscard]] bool active() const { return model != InterferenceModel::kNone; }
  friend bool operator==(const InterferenceSpec&, const InterferenceSpec&) = default;
};

// The largest factor a key takes: 10 (eleven times as slow).
inline constexpr double kMaxInterferenceFactor = 10;
// The largest interference.host.cpu_per_byte: 100 ns a byte (10 MB/s of a core).
inline constexpr double kMaxCpuPerByteNs = 100;

// How one replay applies the spec: the class, why, and each compute task's
// factor by layer (forward, backward) and for the update.
struct InterferencePlan {
  bool active = false;
  InterferenceResource resource = InterferenceResource::kGpu;  // gpu or host
  std::string why;                    // the class's reason, in words
  double compute = 0;                 // the class's factors as applied
  double memory = 0;
  double comm = 0;
  double concurrent = 0;              // host: a collective that waited behind another
  // Model demand (host only): the CPU ns a byte through the rank takes, and
  // each comm group's bytes through a rank (ssgd::bytes_through_rank of its
  // operation, buffer and ranks; by dag::Task::group), which the replay fills.
  bool demand = false;
  double cpu_per_byte = 0;
  std::vector<double> comm_through;
  std::vector<double> forward;        // per profile row
  std::vector<double> backward;
  double update = 0;
  std::vector<std::string> notes;     // what was assumed or left out
};

// Throws std::invalid_argument naming the key when the model is on and no
// factor of its class is set (it would change nothing), or when factors of
// the class that does not apply are set and none of the one that does;
// under demand, when the class is gpu or interference.host.cpu_per_byte is
// not set.
InterferencePlan plan_interference(const InterferenceSpec& spec,
                                   const trace::LayerProfile& profile);

// The factor of work split as `split` (GPU class): each rate's share of the
// time times its factor: `memory` for memory-bound kernels, `compute` for
// matrix kernels, one-wave kernels and kernels in no class (all need SMs);
// host time is not slowed by SMs or bandwidth taken, and counts 0. Without
// a split (total 0): `compute` for the whole.
double split_factor(const trace::RateSplit& split, double compute, double memory);

// What a capture already holds: where it ran its own collectives beside its
// compute (LayerRow::forward_beside_comm and the like, from a trace), its
// compute times hold the slowdown the plan's factors stand for. Replayed as
// they are, that slowdown would count twice; this takes it out: a part p of
// a time t that ran beside a collective, slowed by f, took p t, of which the
// work alone takes p t / (1 + f), so t becomes t (1 - p f / (1 + f)). Under
// the model demand the compute lost the CPU the capture's collectives used
// while they overlapped it: c times the bytes they moved through the rank
// meanwhile (LayerRow::forward_beside_comm_rate r, a ns of t), at most half
// the overlapped time (one collective beside it), so t becomes
// t (1 - min(c r, p / 2)). Rate splits are scaled alike. Returns the profile
// unchanged when nothing ran beside a collective; adds a note saying how
// much was taken out otherwise.
trace::LayerProfile profile_without_interference(const trace::LayerProfile& captured,
                                                 InterferencePlan& plan);

// First principles for interference.gpu.memory: a collective moving
// `wire_bytes_per_s` over its links makes `hbm_bytes_per_byte` times as
// many bytes of HBM traffic (2 to 3 for NCCL: its maintainer in
// NVIDIA/nccl#1428), and memory-bound work keeps the rest of
// `hbm_bytes_per_s`: f = 1 / (1 - share) - 1, the share taken capped at 90%.
// Throws std::invalid_argument on a bandwidth that is not positive.
double hbm_contention_factor(double wire_bytes_per_s, double hbm_bytes_per_s,
                             double hbm_bytes_per_byte);

}  // namespace ssgd::sim
