#include "simulator/calibration/stream_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>

#include "simulator/calibration/fit_error.h"

namespace ssgd::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::int64_t kMaxStreams = 64;
constexpr double kMinRate = 1e6;   // 1 MB/s
constexpr double kMaxRate = 1e12;  // 1 TB/s
constexpr int kGridPoints = 241;   // 25 points a decade
constexpr double kUnbounded = 1e18;  // a level's bandwidth when nothing bounds it
const Duration kProbeLatency = Duration(1'000'000);  // 1 ms, to read off the steps' count

double seconds(Duration d) { return static_cast<double>(d.ns()) * 1e-9; }

// A measurement with what the model needs of it: its closed form, and the
// number of latency terms its steps pay.
struct Point {
  const trace::Measurement* m = nullptr;
  const ClosedForm* form = nullptr;
  double seconds = 0;
  double latency_terms = 0;
};

CollectiveCosts costs_for(std::int64_t streams, double rate, Duration latency, double line_rate) {
  const LevelCost intra{Duration::zero(), kUnbounded};
  const LevelCost inter{latency, line_rate > 0 ? line_rate : kUnbounded};
  return CollectiveCosts(intra, inter, StreamCap{.streams = streams, .stream_rate_bytes_per_s = rate});
}

double model_seconds(const Point& p, std::int64_t streams, double rate, Duration latency,
                     double line_rate) {
  return seconds(p.form->time(p.m->bytes, costs_for(streams, rate, latency, line_rate)));
}

struct RateFit {
  double rate = 0;
  double alpha_s = 0;
  double sse = kInf;
};

// For one stream count and rate: alpha by weighted least squares on
// relative error, at least 0, and the squared relative error.
RateFit fit_alpha(const std::vector<Point>& pts, std::int64_t streams, double rate,
                  double line_rate) {
  std::vector<double> base(pts.size());
  double num = 0, den = 0;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    base[i] = model_seconds(pts[i], streams, rate, Duration::zero(), line_rate);
    const double x = pts[i].latency_terms / pts[i].seconds;
    num += x * (pts[i].seconds - base[i]) / pts[i].seconds;
    den += x * x;
  }
  const double alpha = den > 0 ? std::max(0.0, num / den) : 0.0;
  double sse = 0;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const double e = (base[i] + alpha * pts[i].latency_terms - pts[i].seconds) / pts[i].seconds;
    sse += e * e;
  }
  return {rate, alpha, sse};
}

// The best rate for one stream count: a logarithmic grid, then golden
// section between the best point's neighbours.
RateFit fit_rate(const std::vector<Point>& pts, std::int64_t streams, double line_rate) {
  const double lo = std::log(kMinRate), hi = std::log(kMaxRate);
  const double step = (hi - lo) / (kGridPoints - 1);
  RateFit best;
  int best_i = 0;
  for (int i = 0; i < kGridPoints; ++i) {
    const RateFit f = fit_alpha(pts, streams, std::exp(lo + step * i), line_rate);
    if (f.sse < best.sse) {
      best = f;
      best_i = i;
    }
  }
  double a = lo + step * std::max(0, best_i - 1);
  double b = lo + step * std::min(kGridPoints - 1, best_i + 1);
  const double g = (std::sqrt(5.0) - 1) / 2;
  double c = b - g * (b - a), d = a + g * (b - a);
  RateFit fc = fit_alpha(pts, streams, std::exp(c), line_rate);
  RateFit fd = fit_alpha(pts, streams, std::exp(d), line_rate);
  for (int it = 0; it < 40; ++it) {
    if (fc.sse <= fd.sse) {
      b = d;
      d = c;
      fd = fc;
      c = b - g * (b - a);
      fc = fit_alpha(pts, streams, std::exp(c), line_rate);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + g * (b - a);
      fd = fit_alpha(pts, streams, std::exp(d), line_rate);
    }
  }
  for (const RateFit& f : {fc, fd}) {
    if (f.sse < best.sse) best = f;
  }
  return best;
}


}  // namespace

StreamFitResult fit_streams(const std::vector<trace::Measurement>& points,
                            const StreamFitOptions& options) {
  if (points.empty()) throw std::invalid_argument("no measurements to fit");
  if (options.streams && (*options.streams < 1 || *options.streams > kMaxStreams)) {
    throw std::invalid_argument(
        fmt::format("the stream count must be from 1 to {}, not {}", kMaxStreams, *options.streams));
  }
  if (!(options.line_rate_bytes_per_s >= 0) || !std::isfinite(options.line_rate_bytes_per_s)) {
    throw std::invalid_argument("the line rate must be finite and at least 0 B/s");
  }
  if (options.holdout < 0 || options.holdout == 1) {
    throw std::invalid_argument("the holdout must be 0 (none) or at least 2");
  }
  const CollectiveOp op = points.front().op;
  std::map<std::int64_t, std::unique_ptr<ClosedForm>> forms;
  std::map<std::int64_t, std::set<double>> sizes;  // per rank count
  for (const trace::Measurement& m : points) {
    if (m.op != op) throw std::invalid_argument("measurements of different collectives");
    if (!forms.count(m.ranks)) {
      forms[m.ranks] = std::make_unique<ClosedForm>(op, options.algorithm,
                                                    CollectiveShape{.ranks = m.ranks});
    }
    sizes[m.ranks].insert(m.bytes);
  }
  // Every holdout-th distinct size of each rank count stays out.
  std::map<std::int64_t, std::set<double>> held;
  if (options.holdout >= 2) {
    for (const auto& [ranks, set] : sizes) {
      std::int64_t k = 0;
      for (const double b : set) {
        if (++k % options.holdout == 0) held[ranks].insert(b);
      }
    }
  }
  std::vector<Point> fit_points, held_points;
  std::set<double> fitted_sizes;
  for (const trace::Measurement& m : points) {
    Point p{&m, forms.at(m.ranks).get(), seconds(m.time), 0};
    const ClosedForm& f = *p.form;
    const CollectiveCosts probe = costs_for(1, 0, kProbeLatency, 0);
    const CollectiveCosts none = costs_for(1, 0, Duration::zero(), 0);
    p.latency_terms = (seconds(f.time(m.bytes, probe)) - seconds(f.time(m.bytes, none))) /
                      seconds(kProbeLatency);
    const bool out = held.count(m.ranks) && held.at(m.ranks).count(m.bytes);
    (out ? held_points : fit_points).push_back(p);
    if (!out) fitted_sizes.insert(m.bytes);
  }
  if (fitted_sizes.size() < 3) {
    throw std::invalid_argument(fmt::format(
        "the TCP stream fit needs at least 3 distinct sizes to fit, got {}", fitted_sizes.size()));
  }

  StreamFitResult out;
  out.op = op;
  out.algorithm = options.algorithm;
  for (const auto& [ranks, form] : forms) out.ranks.push_back(ranks);
  const std::int64_t first = options.streams.value_or(1);
  const std::int64_t last = options.streams.value_or(kMaxStreams);
  RateFit best;
  std::int64_t best_streams = first;
  const double n = static_cast<double>(fit_points.size());
  for (std::int64_t s = first; s <= last; ++s) {
    const RateFit f = fit_rate(fit_points, s, options.line_rate_bytes_per_s);
    out.by_streams.emplace_back(s, std::sqrt(f.sse / n));
    if (f.sse < best.sse * 0.99 || best.sse == kInf) {
      best = f;
      best_streams = s;
    }
  }
  out.streams = best_streams;
  out.stream_rate_bytes_per_s = best.rate;
  out.rate_at_grid_edge = best.rate <= kMinRate * 1.01 || best.rate >= kMaxRate * 0.99;
  out.latency = duration_from_seconds(best.alpha_s);
  out.points = static_cast<std::int64_t>(fit_points.size());
  std::vector<double> errors;
  for (const Point& p : fit_points) {
    errors.push_back(std::abs(seconds(predict_streams(out, p.m->ranks, p.m->bytes,
                                                      options.line_rate_bytes_per_s)) -
                              p.seconds) /
                     p.seconds);
  }
  out.median_error = median(errors);
  out.max_error = errors.empty() ? 0 : *std::max_element(errors.begin(), errors.end());
  // Searched: the count shows when every other count fits worse by more
  // than 1%. Given: when some measured step moved less than streams x 64
  // KiB (a step moves M / P for the ring and its relatives).
  if (!options.streams) {
    out.streams_identified = true;
    for (const auto& [s, rms] : out.by_streams) {
      const double sse = rms * rms * n;
      if (s != out.streams && sse <= best.sse * 1.01) out.streams_identified = false;
    }
  } else {
    for (const Point& p : fit_points) {
      const double step_bytes = p.m->bytes / static_cast<double>(p.m->ranks);
      if (step_bytes < static_cast<double>(out.streams) * 65536) out.streams_identified = true;
    }
  }
  if (!held_points.empty()) {
    std::map<std::int64_t, std::vector<double>> by_ranks;
    for (const Point& p : held_points) {
      by_ranks[p.m->ranks].push_back(
          std::abs(seconds(predict_streams(out, p.m->ranks, p.m->bytes,
                                           options.line_rate_bytes_per_s)) -
                   p.seconds) /
          p.seconds);
    }
    for (const auto& [ranks, e] : by_ranks) {
      out.holdout.push_back({ranks, static_cast<std::int64_t>(e.size()), median(e),
                             *std::max_element(e.begin(), e.end())});
    }
  }
  return out;
}

Duration predict_streams(const StreamFitResult& fit, std::int64_t ranks, double bytes,
                         double line_rate_bytes_per_s) {
  const ClosedForm form(fit.op, fit.algorithm, CollectiveShape{.ranks = ranks});
  return form.time(bytes, costs_for(fit.streams, fit.stream_rate_bytes_per_s, fit.latency,
                                    line_rate_bytes_per_s));
}

}  // namespace ssgd::sim
