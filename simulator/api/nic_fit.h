#pragma once
// `ssgd calibrate --nic`: the NIC of a scenario's platform fitted to
// measured collective curves (nccl-tests, OSU, traces) through the
// scenario's own communication model (NCCL's communicator on the platform,
// unless the scenario says otherwise): the sustained bandwidth and the
// latency of one NIC, as factors on the NIC the platform names
// (perturb.bandwidth_factors and perturb.latency_factors), which a replay
// then uses as they are. Curves of other
// node counts of the same system are predicted, not fitted, to say how far
// the fit carries (docs/calibration.md, "Fitting the NIC").

#include <cstdint>
#include <string>
#include <vector>

#include "common/time.h"
#include "traces/measurement.h"
#include "simulator/collective/collective.h"
#include "simulator/scenario/scenario.h"

namespace ssgd::sim {

// One measured curve: an op over a rank count, fitted or predicted.
struct NicFitCurve {
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::int64_t ranks = 0;
  std::int64_t nodes = 0;
  bool fitted = false;
  std::vector<std::string> sources;  // the files, each once, in order
  struct Point {
    double bytes = 0;
    Duration measured;
    Duration predicted;   // with the fitted NIC
    std::string algorithm;
    std::string protocol;  // NCCL's; empty when NCCL does not run it
    int channels = 0;      // NCCL's; 0 when NCCL does not run it
  };
  std::vector<Point> points;  // by size; a size measured twice keeps its median
  double median_error = 0;    // |predicted - measured| / measured
  double max_error = 0;
};

struct NicFitResult {
  std::string platform;          // the scenario's platform, described
  std::int64_t nics = 0;         // a node's
  double base_bandwidth = 0;     // the scenario's NIC before the fit, B/s
  Duration base_latency;
  // The fit, as factors on the platform's NIC (perturb.bandwidth_factors
  // and perturb.latency_factors for `nic`, which NCCL's topology detection
  // does not see: its channels stay those of the NIC the platform names) and
  // as what they make of it.
  double bandwidth_factor = 1;
  double latency_factor = 1;
  double bandwidth = 0;          // B/s
  Duration latency;
  bool latency_fitted = true;    // false: the NIC has no latency to scale
  double line_factor = 1;          // the factor at the NIC's line rate, the search's top
  bool bandwidth_at_edge = false;  // at a bound of the search: the curve may not be bound by the NIC
  bool latency_at_edge = false;
  std::vector<NicFitCurve> curves;  // the fitted ones first, each by op and ranks
  std::int64_t evaluations = 0;    // models built during the search
};

// The search: bandwidths from 1/8 of the scenario's NIC to its line rate (the
// preset's sustained bandwidth over its payload share), latencies from 100
// ns to 1 ms (none for a NIC of no latency), on a logarithmic grid refined by golden sections,
// minimising the sum of squared relative errors of the fitted points.
inline constexpr double kNicFitBandwidthLow = 1.0 / 8;

// Throws InputError naming the measurement's file, line and field for a rank
// count that is not whole nodes of the scenario's GPUs per node, and naming
// the scenario key for a platform that cannot run the collective; `fit`
// must not be empty.
NicFitResult fit_nic(const Scenario& scenario, const std::vector<trace::Measurement>& fit,
                     const std::vector<trace::Measurement>& predict);

}  // namespace ssgd::sim
