#pragma once
// An NCCL communicator over a job's GPUs: what NCCL builds (its channels,
// nccl_system.h and nccl_traffic.h), what it would choose for a call
// (algorithm, protocol, channels: nccl_tuner.h) and how long the call takes.
//
// The choice is NCCL's own: the algorithm and protocol its model (tuning.cc
// ncclTopoGetAlgoTime: its latency plus the bytes over its graphs'
// bandwidth, with its tree correction) gives the least time among those it
// enables, ties to the first in NCCL's order, then the channels NCCL runs a
// call of that size on.
//
// The time of that call is NCCL's latency plus the data's time on the
// platform's links, not on NCCL's graphs: a simulator has the links
// themselves, so a what-if that changes them (8 NICs or 1, another NIC, a
// slower NVLink) changes the time as it would on that machine.
//
//   time = latency(a, p, M)
//        + max(M x busiest link's seconds per byte / (factor(a, p) x
//              correction(a, p, M)),  M / cap(a, p, channels))
//        x (1 + fill(a, p, M))
//
// factor: the payload share of what the links carry (LL 1/2, LL128 120/128,
// NVLS at NCCL's NVLS efficiency); correction: NCCL's tree correction for
// trees, CollNet and PAT; cap: NCCL's per-channel caps at the call's share
// of the channels; fill: the pipeline's fill, for NVLS, NVLS trees and LL128
// trees, in rounds of NCCL's chunks (pipeline_fill). Between nodes over TCP,
// each channel's connection moves at most its streams' rate.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "common/time.h"
#include "simulator/collective/collective.h"
#include "simulator/nccl/nccl_system.h"
#include "simulator/nccl/nccl_tables.h"
#include "simulator/nccl/nccl_traffic.h"
#include "simulator/nccl/nccl_tuner.h"
#include "simulator/platform/platform.h"

namespace ssgd::sim::nccl {

struct Settings {
  std::string algorithms;         // NCCL_ALGO's syntax; empty: NCCL's defaults
  std::string protocols;          // NCCL_PROTO's syntax; empty: NCCL's defaults
  std::optional<int> channels;    // NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS
};

struct Choice {
  Algo algo = Algo::kRing;
  Proto proto = Proto::kSimple;
  int channels = 1;
  Duration latency;            // before any data moves
  double efficiency = 1;       // payload share of what links carry (NCCL's factor x size correction)
  double nvls_efficiency = 1;  // on top, for what goes through the NVSwitch's reduction
  Duration fill;               // of `time`, the pipeline's fill (NVLS and its trees)
  Duration time;               // alone on the platform, by this model
};

// The CollectiveOp NCCL names for `op`; all_to_all has none.
std::optional<Func> func_of(CollectiveOp op);
CollectiveAlgorithm to_collective(Algo a);
std::optional<Algo> algo_of(CollectiveAlgorithm a);

class Communicator {
 public:
  // `ranks`: each rank's GPU, node after node, `local_ranks` a node.
  // Throws std::invalid_argument for a list that does not parse (naming it).
  Communicator(const Platform& platform, std::vector<VertexId> ranks, std::int64_t local_ranks,
               const Settings& settings);
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  [[nodiscard]] const System& system() const { return system_; }
  [[nodiscard]] const Graphs& graphs() const { return graphs_; }
  [[nodiscard]] const Tuner& tuner() const { return *tuner_; }

  // NCCL's choice for `f` on a buffer of `bytes`. Throws std::invalid_argument
  // when NCCL has no algorithm and protocol left for it (as NCCL errs "no
  // algorithm/protocol available").
  [[nodiscard]] Choice choose(Func f, double bytes) const;
  // The traffic of a call (payload bytes for a call of one byte).
  [[nodiscard]] Traffic traffic(Func f, Algo a, int channels, std::int64_t root = 0) const {
    return structure_->traffic(f, a, channels, root);
  }
  // Adds what every link carries in `times` calls of `bytes` made as
  // `choice` (payload over the efficiency) into `into`, one entry per link.
  void add_link_bytes(Func f, const Choice& choice, double bytes, std::vector<double>& into,
                      double times = 1) const;

 private:
  // What a call of one byte puts on the links, apart through the NVSwitch's
  // reduction and not; and its busiest link's seconds.
  struct UnitLoad {
    std::vector<std::pair<LinkId, double>> plain;
    std::vector<std::pair<LinkId, double>> nvls;
    double seconds_per_byte = 0;
    // Transfers between nodes, as (bytes for a call of one byte,
    // connections), each distinct once: what TCP's streams bound.
    std::vector<std::pair<double, int>> crossing;
  };
  [[nodiscard]] const UnitLoad& unit_load(Func f, Algo a, int channels) const;
  [[nodiscard]] std::optional<Choice> evaluate(Func f, Algo a, Proto p, double bytes) const;
  [[nodiscard]] int structural_channels(Algo a, int channels) const;
  // The pipeline's fill of a call, in multiples of its data's time.
  [[nodiscard]] double pipeline_fill(Func f, Algo a, Proto p, int channels, double bytes) const;
  static constexpr int kNvlsStages = 3;

  const Platform& platform_;
  System system_;
  Graphs graphs_;
  std::unique_ptr<Tuner> tuner_;
  std::unique_ptr<Structure> structure_;
  mutable std::mutex mutex_;
  mutable RouteCache routes_;
  mutable std::map<std::tuple<int, int, int>, UnitLoad> unit_loads_;
};

}  // namespace ssgd::sim::nccl
