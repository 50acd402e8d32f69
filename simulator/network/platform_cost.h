#pragma once
// A textbook algorithm's time on the platform itself, the analytical model
// (network.model: analytical) for collectives not run by NCCL. Each lock-step
// step of the algorithm's decomposition (simulator/collective/collective.h)
// is routed over the platform's links and takes
//   repeat x (the slowest route's latency
//             + max(the busiest link's bytes / its capacity,
//                   the slowest transfer's bytes / its own cap))
// so links that several transfers share cost what sharing costs: eight GPUs
// of a node sending through one NIC take eight times as long as one, where
// the two-level closed forms (ClosedForm) gave every endpoint a port of its
// own. The caps are a calibrated band's rate (a transfer at the band's
// level, between or inside nodes) and the TCP stream bound on transfers
// between nodes, as in the flow model, whose step this is with every flow
// at its bottleneck's fair share: where nothing but the step's own
// transfers contends the two agree (tests/simulator/network_model_test.cc).
// Every step is linear in the buffer, so the phases are worked out once for
// a buffer of one byte.

#include <cstdint>
#include <utility>
#include <vector>

#include "common/time.h"
#include "simulator/calibration/network_calibration.h"
#include "simulator/collective/collective.h"
#include "simulator/platform/platform.h"

namespace ssgd::sim {

class PlatformCost {
 public:
  // Same errors as decompose().
  PlatformCost(CollectiveOp op, CollectiveAlgorithm algorithm, const CollectiveShape& shape,
               const std::vector<VertexId>& endpoints, RouteCache& routes, const Platform& platform);

  // Rounded once to whole nanoseconds. `band` (or null) at its level,
  // `streams` between nodes.
  [[nodiscard]] Duration time(double bytes, const CalibrationBand* band, bool band_inside,
                              const StreamCap& streams) const;
  // Adds the bytes every link carries in a call of `bytes` to `into`.
  void add_link_bytes(double bytes, std::vector<double>& into) const;

 private:
  struct Phase {
    std::int64_t repeat = 1;
    Duration intra_latency;  // the slowest route inside a node (zero: none)
    Duration inter_latency;  // between nodes
    bool intra = false;
    bool inter = false;
    double seconds_per_byte = 0;     // the busiest link's, for M = 1
    std::vector<double> intra_sizes;  // distinct transfer sizes, for M = 1
    std::vector<double> inter_sizes;
  };
  std::vector<Phase> phases_;
  std::vector<std::pair<LinkId, double>> link_bytes_;  // for M = 1, the whole call
};

}  // namespace ssgd::sim
