#include "simulator/calibration/band_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "simulator/calibration/fit_error.h"

namespace ssgd::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::int64_t kMinSizesPerBand = 3;

// Sums for the 2x2 normal equations of one run of sizes: with x1 = a/T and
// x2 = f M / T, minimise sum (x1 alpha + x2 beta - 1)^2.
struct Sums {
  double s11 = 0, s12 = 0, s22 = 0, s1 = 0, s2 = 0, n = 0;
  Sums& operator+=(const Sums& o) {
    s11 += o.s11;
    s12 += o.s12;
    s22 += o.s22;
    s1 += o.s1;
    s2 += o.s2;
    n += o.n;
    return *this;
  }
  Sums operator-(const Sums& o) const {
    return {s11 - o.s11, s12 - o.s12, s22 - o.s22, s1 - o.s1, s2 - o.s2, n - o.n};
  }
};

struct Solution {
  double alpha = 0;  // seconds
  double beta = 0;   // seconds per byte
  double sse = kInf;
};

double sse_of(const Sums& s, double a, double b) {
  return a * a * s.s11 + 2 * a * b * s.s12 + b * b * s.s22 - 2 * a * s.s1 - 2 * b * s.s2 + s.n;
}

Solution solve(const Sums& s) {
  Solution best;
  const double det = s.s11 * s.s22 - s.s12 * s.s12;
  if (std::abs(det) > 1e-12 * s.s11 * s.s22) {
    const double a = (s.s1 * s.s22 - s.s2 * s.s12) / det;
    const double b = (s.s2 * s.s11 - s.s1 * s.s12) / det;
    if (a >= 0 && b > 0) return {a, b, sse_of(s, a, b)};
  }
  // On the boundary: alpha = 0 with beta alone, or beta tiny with alpha alone.
  if (s.s22 > 0) {
    const double b = std::max(s.s2 / s.s22, 1e-18);
    best = {0.0, b, sse_of(s, 0.0, b)};
  }
  if (s.s11 > 0) {
    const double a = std::max(s.s1 / s.s11, 0.0);
    const double b = 1e-18;
    const double e = sse_of(s, a, b);
    if (e < best.sse) best = {a, b, e};
  }
  return best;
}

AlphaBetaTerms terms(CollectiveOp op, CollectiveAlgorithm algorithm, std::int64_t ranks) {
  return alpha_beta_terms(op, algorithm, ranks);
}

double model_seconds(const AlphaBetaTerms& t, double bytes, double alpha, double beta) {
  return t.alpha_count * alpha + t.beta_factor * bytes * beta;
}


// Held back: every holdout-th distinct size of each rank count.
std::set<std::pair<std::int64_t, double>> held_back(const std::vector<trace::Measurement>& points,
                                                    CollectiveOp op, std::int64_t holdout) {
  std::map<std::int64_t, std::set<double>> sizes_of_ranks;
  for (const auto& m : points) {
    if (m.op != op)
      throw std::invalid_argument("measurements of different operations cannot share one fit");
    sizes_of_ranks[m.ranks].insert(m.bytes);
  }
  std::set<std::pair<std::int64_t, double>> held;
  if (holdout > 1) {
    for (const auto& [ranks, set] : sizes_of_ranks) {
      std::int64_t i = 0;
      for (const double s : set) {
        if (++i % holdout == 0) held.insert({ranks, s});
      }
    }
  }
  return held;
}

// The fitted (not held-back) points by distinct size, as prefix sums of the
// least-squares terms, so that any run of sizes fits in O(1).
struct SizeSums {
  std::vector<double> sizes;  // distinct fitted sizes, ascending
  std::vector<Sums> prefix;   // prefix[i]: the sums of sizes[0..i-1]
  [[nodiscard]] std::int64_t count() const { return static_cast<std::int64_t>(sizes.size()); }
  // The fit of sizes i..j (indices, inclusive).
  [[nodiscard]] Solution run(std::int64_t i, std::int64_t j) const {
    return solve(prefix[static_cast<std::size_t>(j + 1)] - prefix[static_cast<std::size_t>(i)]);
  }
};

template <typename IsHeld>
SizeSums size_sums(const std::vector<trace::Measurement>& points, CollectiveOp op,
                   CollectiveAlgorithm algorithm, const IsHeld& is_held) {
  std::set<double> size_set;
  for (const auto& m : points) {
    if (!is_held(m)) size_set.insert(m.bytes);
  }
  SizeSums out;
  out.sizes.assign(size_set.begin(), size_set.end());
  std::map<double, std::size_t> index;
  for (std::size_t i = 0; i < out.sizes.size(); ++i) index[out.sizes[i]] = i;
  std::vector<Sums> per_size(out.sizes.size());
  for (const auto& m : points) {
    if (is_held(m)) continue;
    const auto it = index.find(m.bytes);
    const AlphaBetaTerms t = terms(op, algorithm, m.ranks);
    const double T = static_cast<double>(m.time.ns()) * 1e-9;
    const double x1 = t.alpha_count / T, x2 = t.beta_factor * m.bytes / T;
    Sums& s = per_size[it->second];
    s.s11 += x1 * x1;
    s.s12 += x1 * x2;
    s.s22 += x2 * x2;
    s.s1 += x1;
    s.s2 += x2;
    s.n += 1;
  }
  out.prefix.resize(out.sizes.size() + 1);
  for (std::size_t i = 0; i < out.sizes.size(); ++i) {
    out.prefix[i + 1] = out.prefix[i];
    out.prefix[i + 1] += per_size[i];
  }
  return out;
}

using Cuts = std::vector<std::pair<std::int64_t, std::int64_t>>;  // bands as [first, last] size indices

// The bands the user's boundaries make; each must hold at least 2 sizes.
Cuts given_cuts(const SizeSums& sums, const std::vector<double>& boundaries) {
  const std::int64_t n = sums.count();
  Cuts cuts;
  std::int64_t start = 0;
  for (double limit : boundaries) {
    std::int64_t end = start;
    while (end < n && sums.sizes[static_cast<std::size_t>(end)] <= limit) ++end;
    if (end - start < 2) {
      throw std::invalid_argument(fmt::format(
          "the band ending at {} B holds {} measured size(s); a band needs at least 2", limit,
          end - start));
    }
    cuts.push_back({start, end - 1});
    start = end;
  }
  if (n - start < 2) throw std::invalid_argument("the last band holds fewer than 2 measured sizes");
  cuts.push_back({start, n - 1});
  return cuts;
}

// The least-squares bands for 1..max_bands by dynamic programming, and the
// count the BIC prefers.
Cuts best_cuts(const SizeSums& sums, std::int64_t max_bands_wanted) {
  const std::int64_t n = sums.count();
  const std::int64_t max_bands =
      std::max<std::int64_t>(1, std::min(max_bands_wanted, n / kMinSizesPerBand));
  if (n < kMinSizesPerBand) {
    throw std::invalid_argument(
        fmt::format("{} distinct sizes; a fit needs at least {}", n, kMinSizesPerBand));
  }
  // best[k][j]: least SSE covering sizes 0..j with k+1 bands;
  // from[k][j]: first index of the last of them.
  const auto N = static_cast<std::size_t>(n);
  std::vector<std::vector<double>> best(static_cast<std::size_t>(max_bands),
                                        std::vector<double>(N, kInf));
  std::vector<std::vector<std::int64_t>> from(static_cast<std::size_t>(max_bands),
                                              std::vector<std::int64_t>(N, -1));
  for (std::int64_t j = kMinSizesPerBand - 1; j < n; ++j)
    best[0][static_cast<std::size_t>(j)] = sums.run(0, j).sse;
  for (std::int64_t k = 1; k < max_bands; ++k) {
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t i = kMinSizesPerBand * k; i + kMinSizesPerBand - 1 <= j; ++i) {
        const double prev = best[static_cast<std::size_t>(k - 1)][static_cast<std::size_t>(i - 1)];
        if (!std::isfinite(prev)) continue;
        const double e = prev + sums.run(i, j).sse;
        if (e < best[static_cast<std::size_t>(k)][static_cast<std::size_t>(j)]) {
          best[static_cast<std::size_t>(k)][static_cast<std::size_t>(j)] = e;
          from[static_cast<std::size_t>(k)][static_cast<std::size_t>(j)] = i;
        }
      }
    }
  }
  const double pts = std::max(1.0, sums.prefix.back().n);
  std::int64_t chosen = 0;
  double best_bic = kInf;
  for (std::int64_t k = 0; k < max_bands; ++k) {
    const double sse = best[static_cast<std::size_t>(k)][N - 1];
    if (!std::isfinite(sse)) continue;
    // Relative errors below 0.01% are below any timer's resolution: a band
    // that only removes those is not worth its parameters.
    const double bic = pts * std::log(std::max(sse, pts * 1e-8) / pts) +
                       3.0 * static_cast<double>(k + 1) * std::log(pts);
    if (bic < best_bic) {
      best_bic = bic;
      chosen = k;
    }
  }
  Cuts cuts;
  std::int64_t j = n - 1;
  for (std::int64_t k = chosen; k >= 0; --k) {
    const std::int64_t i = k == 0 ? 0 : from[static_cast<std::size_t>(k)][static_cast<std::size_t>(j)];
    cuts.push_back({i, j});
    j = i - 1;
  }
  std::reverse(cuts.begin(), cuts.end());
  return cuts;
}

double max_of(const std::vector<double>& v) {
  return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
}

}  // namespace

Duration predict(const CalibratedCollective& c, std::int64_t ranks, double bytes) {
  const CalibrationBand& band = c.band_for(bytes);
  const AlphaBetaTerms t = terms(c.op, c.algorithm, ranks);
  return duration_from_seconds(model_seconds(
      t, bytes, static_cast<double>(band.latency.ns()) * 1e-9, 1.0 / band.bandwidth_bytes_per_s));
}

FitResult fit_bands(const std::vector<trace::Measurement>& points, const FitOptions& options) {
  if (points.empty()) throw std::invalid_argument("no measurements to fit");
  const CollectiveOp op = points.front().op;
  const auto held = held_back(points, op, options.holdout);
  const auto is_held = [&](const trace::Measurement& m) { return held.contains({m.ranks, m.bytes}); };
  const SizeSums sums = size_sums(points, op, options.algorithm, is_held);
  const Cuts cuts = options.boundaries.empty() ? best_cuts(sums, options.max_bands)
                                               : given_cuts(sums, options.boundaries);

  FitResult out;
  CalibratedCollective& c = out.collective;
  c.op = op;
  c.algorithm = options.algorithm;
  std::set<std::int64_t> ranks_seen;
  std::set<std::string> sources;
  for (const auto& m : points) {
    ranks_seen.insert(m.ranks);
    sources.insert(std::filesystem::path(m.source).filename().string());
  }
  c.ranks.assign(ranks_seen.begin(), ranks_seen.end());
  c.sources.assign(sources.begin(), sources.end());
  for (std::size_t b = 0; b < cuts.size(); ++b) {
    const auto [i, j] = cuts[b];
    const Solution s = sums.run(i, j);
    CalibrationBand band;
    if (b + 1 == cuts.size()) {
      band.max_bytes = kInf;
    } else if (!options.boundaries.empty()) {
      band.max_bytes = options.boundaries[b];
    } else {
      band.max_bytes = std::floor(0.5 * (sums.sizes[static_cast<std::size_t>(j)] +
                                         sums.sizes[static_cast<std::size_t>(j + 1)]));
    }
    band.latency = duration_from_seconds(s.alpha);
    band.bandwidth_bytes_per_s = 1.0 / s.beta;
    c.bands.push_back(band);
  }
  // Errors of the fitted points per band, and of the held-back points per rank count.
  std::vector<std::vector<double>> band_errors(c.bands.size());
  std::vector<std::vector<double>> band_held_errors(c.bands.size());
  std::map<std::int64_t, std::vector<double>> held_errors;
  for (const auto& m : points) {
    const double measured = static_cast<double>(m.time.ns());
    const double err =
        std::abs(static_cast<double>(predict(c, m.ranks, m.bytes).ns()) - measured) / measured;
    const auto band = static_cast<std::size_t>(&c.band_for(m.bytes) - c.bands.data());
    if (is_held(m)) {
      held_errors[m.ranks].push_back(err);
      band_held_errors[band].push_back(err);
    } else {
      band_errors[band].push_back(err);
    }
  }
  for (std::size_t b = 0; b < c.bands.size(); ++b) {
    c.bands[b].points = static_cast<std::int64_t>(band_errors[b].size());
    c.bands[b].median_error = median(band_errors[b]);
    c.bands[b].max_error = max_of(band_errors[b]);
    if (!held.empty()) {
      out.band_holdout.push_back({0, static_cast<std::int64_t>(band_held_errors[b].size()),
                                  median(band_held_errors[b]), max_of(band_held_errors[b])});
    }
  }
  for (const auto& [ranks, errs] : held_errors) {
    out.holdout.push_back(
        {ranks, static_cast<std::int64_t>(errs.size()), median(errs), max_of(errs)});
  }
  return out;
}

}  // namespace ssgd::sim
