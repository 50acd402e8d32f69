#pragma once
// Fits the TCP stream model (platform.nic.tcp_streams, tcp_stream_rate and
// the NIC's latency; docs/platforms.md, "TCP streams") to measured collective
// times, for `ssgd calibrate --tcp-streams` (docs/calibration.md).
//
// Model: the closed form of the chosen algorithm with one rank per node
// (ClosedForm in simulator/collective/collective.h), every step paying the
// latency alpha and moving its bytes at
//   min(line_rate, connections x min(streams, ceil(transfer / 64 KiB)) x
//       stream_rate),
// the rate StreamCap gives the transfers of a step between nodes (one
// connection for the ring and its relatives). For each candidate
// stream count (the one given, or 1 to 64) the stream rate is searched on a
// logarithmic grid from 1 MB/s to 1 TB/s and refined by golden section; for
// each rate alpha is the weighted least-squares solution (weights 1/T, so
// the error is relative, as in band_fit.h), at least 0. The stream count with
// the smallest squared relative error wins; a larger count must lower it by
// more than 1% to be preferred, so that counts the data cannot tell apart
// (when every measured step moves at least streams x 64 KiB, only the
// product streams x stream_rate shows) resolve to the smallest.
//
// Validation: with holdout = N, every N-th distinct size of each rank count
// stays out of the fit and is predicted, as in band_fit.h.

#include <cstdint>
#include <optional>
#include <vector>

#include "simulator/calibration/band_fit.h"
#include "traces/measurement.h"

namespace ssgd::sim {

struct StreamFitOptions {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  std::optional<std::int64_t> streams;  // fixed (1 to 64); none: search 1 to 64
  double line_rate_bytes_per_s = 0;     // the NIC's line rate; 0: no bound
  std::int64_t holdout = 0;             // keep every holdout-th distinct size out (0: none)
};

struct StreamFitResult {
  CollectiveOp op = CollectiveOp::kAllReduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  std::vector<std::int64_t> ranks;  // the rank counts fitted, ascending
  std::int64_t streams = 1;
  double stream_rate_bytes_per_s = 0;
  Duration latency;              // alpha, per step
  std::int64_t points = 0;
  double median_error = 0;       // relative, of the fitted points
  double max_error = 0;
  // Whether the stream count shows in the data. Searched: every other count
  // fits worse by more than 1%. Given: some measured step moved less than
  // streams x 64 KiB (M / P for the ring). Else only streams x rate does.
  bool streams_identified = false;
  // The best rate lies at the edge of the searched range (1 MB/s or 1 TB/s).
  bool rate_at_grid_edge = false;
  // The stream count's error curve: per count tried, the fit's root mean
  // square relative error.
  std::vector<std::pair<std::int64_t, double>> by_streams;
  std::vector<HoldoutError> holdout;  // per rank count, with holdout
};

// `points` must all have the same op, with ranks >= 2. Throws
// std::invalid_argument when there are fewer than 3 distinct sizes to fit,
// when the algorithm does not implement the op, or on options out of range.
StreamFitResult fit_streams(const std::vector<trace::Measurement>& points,
                            const StreamFitOptions& options);

// The fitted model's time for `ranks` and `bytes`.
Duration predict_streams(const StreamFitResult& fit, std::int64_t ranks, double bytes,
                         double line_rate_bytes_per_s);

}  // namespace ssgd::sim
