#pragma once
// Fits per-size-band alpha-beta costs to measured collective times.
//
// Model: T(P, M) = a(P) alpha + f(P) M beta, with a and f the chosen
// algorithm's terms on a flat network (alpha_beta_terms in
// simulator/collective/collective.h), so that one (alpha, beta) per band
// holds for every rank count measured. Each band is a weighted linear least
// squares fit on relative error (weights 1/T), with alpha >= 0 and beta > 0.
//
// Bands: the sorted distinct sizes are cut into at most max_bands runs of at
// least 3 sizes each by dynamic programming, minimising total squared
// relative error; the number of bands is then chosen by the Bayesian
// information criterion, n ln(SSE/n) + 3 k ln n (two costs and a boundary per
// band), so a band is added only when it pays for itself; errors below
// 0.01% (SSE floor n x 1e-8) count as timer noise. Given boundaries
// skip the search and become the bands' max_bytes; a found band ends halfway
// between its largest size and the next band's smallest.
//
// Validation: with holdout = N, every N-th distinct size of each rank count
// (the N-th, 2N-th, ... in increasing order) stays out of the fit, and the
// fitted bands predict it.

#include <cstdint>
#include <vector>

#include "traces/measurement.h"
#include "simulator/calibration/network_calibration.h"

namespace ssgd::sim {

struct FitOptions {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  std::int64_t max_bands = 4;
  std::vector<double> boundaries;  // explicit band limits in bytes (ascending); empty: search
  std::int64_t holdout = 0;        // keep every holdout-th distinct size out of the fit (0: none)
};

struct HoldoutError {
  std::int64_t ranks = 0;
  std::int64_t points = 0;
  double median_error = 0;
  double max_error = 0;
};

struct FitResult {
  CalibratedCollective collective;
  std::vector<HoldoutError> holdout;       // per rank count, with FitOptions::holdout
  std::vector<HoldoutError> band_holdout;  // per band (ranks = 0: all counts), same order as
                                           // collective.bands; empty without holdout
};

// `points` must all have the same op. Throws std::invalid_argument when there
// are too few distinct sizes for the bands asked for, or when the algorithm
// does not implement the op (alpha_beta_terms' message).
FitResult fit_bands(const std::vector<trace::Measurement>& points, const FitOptions& options);

// The fitted model's time for `ranks` and `bytes`.
Duration predict(const CalibratedCollective& c, std::int64_t ranks, double bytes);

}  // namespace ssgd::sim
