#pragma once
// NCCL's tuning model (src/graph/tuning.cc, ncclTopoTuneModel and
// ncclTopoGetAlgoTime; src/enqueue.cc, topoGetAlgoInfo), NCCL 2.30.7: for
// every function, algorithm and protocol a latency and a bandwidth, which
// algorithms and protocols are enabled (NCCL's own rules, then NCCL_ALGO and
// NCCL_PROTO), and how many channels a call of a given size runs on.
//
// NCCL predicts a call's time as latency + bytes / bandwidth, with the
// bandwidth of its topology graphs (channels x per-channel speed) times
// per-algorithm and per-protocol factors, capped per channel. This model
// keeps NCCL's latencies, factors and caps, and takes the bandwidth the
// communicator's traffic gets on the platform's links in place of the graphs'
// (nccl_communicator.h): that is what makes "the same job on 1 NIC or 8"
// come out right. The factors and caps are exposed separately for that.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "simulator/nccl/nccl_system.h"
#include "simulator/nccl/nccl_tables.h"

namespace ssgd::sim::nccl {

// Which algorithms and protocols each function may use. Starts from NCCL's
// defaults; restrict() applies a list in NCCL_ALGO / NCCL_PROTO syntax.
struct Enabled {
  std::array<std::array<bool, kAlgoCount>, kFuncCount> algo{};
  std::array<std::array<bool, kProtoCount>, kFuncCount> proto{};
  Enabled();
};
// NCCL's list syntax (tuning.cc parseList): comma-separated names, "^" in
// front for all but these, and "function:list" entries separated by ";"
// for one function (the first entry may leave the function out, for all).
// Names match without regard to case. Throws std::invalid_argument naming
// the token that is not an algorithm, protocol or function.
void restrict_algorithms(Enabled& enabled, std::string_view list);
void restrict_protocols(Enabled& enabled, std::string_view list);

class Tuner {
 public:
  Tuner(const System& system, const Graphs& graphs, const Enabled& enabled = Enabled{});

  // Whether NCCL may run `f` with `a` and `p` here (its rules and the lists).
  [[nodiscard]] bool available(Func f, Algo a, Proto p) const;
  // NCCL's latency, microseconds (without the size-dependent plateau).
  [[nodiscard]] double latency_us(Func f, Algo a, Proto p) const { return latency_[idx(f, a, p)]; }
  // The latency a call of `bytes` pays: ring, Simple, all-reduce between
  // nodes pays 1.4 times (1.9 before Ampere) once a rank's share of a
  // channel reaches 64 B (the "plateau effect", ncclTopoGetAlgoTime).
  [[nodiscard]] double call_latency_us(Func f, Algo a, Proto p, double bytes) const;
  // NCCL's factor on the bandwidth for `a` and `p` (LL's 0.5, LL128's 0.92,
  // trees' 0.92, ...): the share of the links the protocol's payload gets.
  [[nodiscard]] double efficiency(Func f, Algo a, Proto p) const { return efficiency_[idx(f, a, p)]; }
  // The highest bus bandwidth (GB/s) NCCL's model allows `a` and `p` with
  // all its channels: the per-channel caps times the channels, and the
  // graphs' own bandwidth. A call on fewer channels gets its share.
  [[nodiscard]] double bus_cap(Func f, Algo a, Proto p) const { return bus_cap_[idx(f, a, p)]; }
  // algbw = busbw x this (NCCL's "convert bus BW to algorithm BW").
  [[nodiscard]] double bus_to_alg(Func f, Algo a) const;
  // NCCL's own predicted bandwidth (algbw, GB/s) from its graphs.
  [[nodiscard]] double model_bandwidth(Func f, Algo a, Proto p) const { return model_bw_[idx(f, a, p)]; }
  // NCCL's tree correction at `bytes`, for trees, CollNet and PAT (1 for
  // rings and NVLS, and where the table has no entry).
  [[nodiscard]] double size_correction(Func f, Algo a, Proto p, double bytes) const;
  // Channels a call of `bytes` runs on (enqueue.cc: fewer for small calls).
  [[nodiscard]] int channels(Func f, Algo a, Proto p, double bytes) const;

 private:
  static std::size_t idx(Func f, Algo a, Proto p) {
    return (static_cast<std::size_t>(f) * kAlgoCount + static_cast<std::size_t>(a)) * kProtoCount +
           static_cast<std::size_t>(p);
  }
  void tune();
  System system_;
  Graphs graphs_;
  Enabled enabled_;
  static constexpr std::size_t kCells = kFuncCount * kAlgoCount * kProtoCount;
  std::array<bool, kCells> available_{};
  std::array<double, kCells> latency_{};
  std::array<double, kCells> efficiency_{};
  std::array<double, kCells> bus_cap_{};
  std::array<double, kCells> model_bw_{};
};

}  // namespace ssgd::sim::nccl
