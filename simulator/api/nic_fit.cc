#include "simulator/api/nic_fit.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "common/error.h"
#include "simulator/calibration/fit_error.h"
#include "simulator/platform/link_preset.h"
#include "simulator/scenario/scenario_network.h"
#include "simulator/scenario/scenario_platform.h"

namespace ssgd::sim {
namespace {

constexpr double kLatencyLowNs = 100;        // 100 ns
constexpr double kLatencyHighNs = 1'000'000;  // 1 ms
constexpr int kBandwidthGrid = 25;
constexpr int kLatencyGrid = 25;
constexpr int kRefineRounds = 3;
constexpr int kGoldenSteps = 24;


// The curves of `measurements` by (op, ranks), each size once (the median
// of its times).
std::vector<NicFitCurve> curves_of(const std::vector<trace::Measurement>& measurements, bool fitted,
                                   std::int64_t gpus_per_node) {
  std::map<std::pair<CollectiveOp, std::int64_t>, std::map<double, std::vector<double>>> times;
  std::map<std::pair<CollectiveOp, std::int64_t>, std::vector<std::string>> sources;
  for (const trace::Measurement& m : measurements) {
    if (m.ranks % gpus_per_node != 0) {
      throw InputError(
          InputLocation{m.source, m.line > 0 ? std::optional<std::int64_t>(m.line) : std::nullopt,
                        std::nullopt, "nranks"},
          fmt::format("{} ranks are not whole nodes of the scenario's {} GPUs (cluster.gpus_per_node, "
                      "or the platform preset's)",
                      m.ranks, gpus_per_node));
    }
    const auto key = std::make_pair(m.op, m.ranks);
    times[key][m.bytes].push_back(static_cast<double>(m.time.ns()));
    auto& s = sources[key];
    if (std::find(s.begin(), s.end(), m.source) == s.end()) s.push_back(m.source);
  }
  std::vector<NicFitCurve> out;
  for (auto& [key, by_size] : times) {
    NicFitCurve c;
    c.op = key.first;
    c.ranks = key.second;
    c.nodes = key.second / gpus_per_node;
    c.fitted = fitted;
    c.sources = sources[key];
    for (auto& [bytes, ns] : by_size) {
      NicFitCurve::Point p;
      p.bytes = bytes;
      p.measured = Duration(static_cast<std::int64_t>(std::llround(median(ns))));
      c.points.push_back(std::move(p));
    }
    out.push_back(std::move(c));
  }
  return out;
}

class Search {
 public:
  Search(const Scenario& base, std::vector<NicFitCurve>& curves) : base_(base), curves_(curves) {}

  // The sum of squared relative errors of the fitted curves with the NIC's
  // bandwidth and latency times these factors; with `keep`, every curve's
  // predictions are kept.
  double error(double bandwidth, double latency, bool keep = false) {
    ++evaluations_;
    double sum = 0;
    std::map<std::int64_t, CommModel> models;  // one a node count: its curves share it
    for (NicFitCurve& c : curves_) {
      if (!c.fitted && !keep) continue;
      auto it = models.find(c.nodes);
      if (it == models.end()) {
        Scenario s = base_;
        s.nodes = c.nodes;
        const auto nic = static_cast<std::size_t>(LinkKind::kNic);
        s.perturb.bandwidth_factors[nic] = bandwidth;
        s.perturb.latency_factors[nic] = latency;
        it = models.emplace(c.nodes, scenario_comm_model(s)).first;
      }
      const CommModel& comm = it->second;
      std::vector<double> sizes;
      for (const auto& p : c.points) sizes.push_back(p.bytes);
      comm.prepare_isolated(c.op, sizes, CommModel::isolated_threads());
      for (auto& p : c.points) {
        const Duration t = comm.isolated_time(c.op, p.bytes);
        const double e = (static_cast<double>(t.ns()) - static_cast<double>(p.measured.ns())) /
                         static_cast<double>(p.measured.ns());
        if (c.fitted) sum += e * e;
        if (!keep) continue;
        p.predicted = t;
        auto run = comm.run_description(c.op, p.bytes);
        p.algorithm = std::move(run.algorithm);
        p.protocol = std::move(run.protocol);
        p.channels = run.channels;
      }
    }
    return sum;
  }

  [[nodiscard]] std::int64_t evaluations() const { return evaluations_; }

 private:
  const Scenario& base_;
  std::vector<NicFitCurve>& curves_;
  std::int64_t evaluations_ = 0;
};

// The minimum of f over [lo, hi] (logarithms), by golden sections.
double golden(const std::function<double(double)>& f, double lo, double hi) {
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = lo, b = hi;
  double c = b - g * (b - a), d = a + g * (b - a);
  double fc = f(c), fd = f(d);
  for (int i = 0; i < kGoldenSteps; ++i) {
    if (fc < fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - g * (b - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + g * (b - a);
      fd = f(d);
    }
  }
  return fc < fd ? c : d;
}

}  // namespace

NicFitResult fit_nic(const Scenario& scenario, const std::vector<trace::Measurement>& fit,
                     const std::vector<trace::Measurement>& predict) {
  if (fit.empty()) throw std::invalid_argument("fit_nic: nothing to fit");
  return with_located_errors(scenario, [&] {
    NicFitResult r;
    const std::int64_t gpus = scenario_gpus_per_node(scenario);
    const PlatformSpec spec = scenario_platform_spec(scenario);
    r.platform = spec.name.empty() ? std::string("generic") : spec.name;
    r.nics = spec.node.nics;
    r.base_bandwidth = spec.node.nic.bandwidth_bytes_per_s;
    r.base_latency = spec.node.nic.latency;
    r.curves = curves_of(fit, true, gpus);
    for (auto& c : curves_of(predict, false, gpus)) r.curves.push_back(std::move(c));
    Search search(scenario, r.curves);

    // Factors on the NIC's bandwidth and latency (NCCL's detection keeps
    // seeing the NIC the platform names): a logarithmic grid, then golden
    // sections on each in turn. A NIC without latency keeps its factor.
    const auto nic = static_cast<std::size_t>(LinkKind::kNic);
    const double b0 = scenario.perturb.bandwidth_factors[nic];
    const double l0 = scenario.perturb.latency_factors[nic];
    r.base_bandwidth *= b0;
    r.base_latency = Duration(static_cast<std::int64_t>(std::llround(static_cast<double>(r.base_latency.ns()) * l0)));
    const double nic_ns = static_cast<double>(spec.node.nic.latency.ns());
    const bool fit_latency = nic_ns > 0;
    // At most the line's rate: the NIC cannot carry more than it signals.
    r.line_factor = 1 / payload_share(spec.node.nic_preset);
    const double b_lo = std::log(b0 * kNicFitBandwidthLow);
    const double b_hi = std::log(r.line_factor);
    const double l_lo = fit_latency ? std::log(kLatencyLowNs / nic_ns) : std::log(l0);
    const double l_hi = fit_latency ? std::log(kLatencyHighNs / nic_ns) : std::log(l0);
    const int l_grid = fit_latency ? kLatencyGrid : 1;
    double best = std::numeric_limits<double>::infinity();
    double lb = 0, ll = l_lo;
    for (int i = 0; i < kBandwidthGrid; ++i) {
      const double xb = b_lo + (b_hi - b_lo) * i / (kBandwidthGrid - 1);
      for (int j = 0; j < l_grid; ++j) {
        const double xl = l_grid > 1 ? l_lo + (l_hi - l_lo) * j / (l_grid - 1) : l_lo;
        const double e = search.error(std::exp(xb), std::exp(xl));
        if (e < best) {
          best = e;
          lb = xb;
          ll = xl;
        }
      }
    }
    const double step_b = (b_hi - b_lo) / (kBandwidthGrid - 1);
    const double step_l = fit_latency ? (l_hi - l_lo) / (kLatencyGrid - 1) : 0.0;
    for (int round = 0; round < kRefineRounds; ++round) {
      lb = golden([&](double x) { return search.error(std::exp(x), std::exp(ll)); },
                  std::max(b_lo, lb - step_b), std::min(b_hi, lb + step_b));
      if (!fit_latency) continue;
      ll = golden([&](double x) { return search.error(std::exp(lb), std::exp(x)); },
                  std::max(l_lo, ll - step_l), std::min(l_hi, ll + step_l));
    }
    r.bandwidth_factor = std::exp(lb);
    r.latency_factor = std::exp(ll);
    r.bandwidth = spec.node.nic.bandwidth_bytes_per_s * r.bandwidth_factor;
    r.latency = Duration(static_cast<std::int64_t>(std::llround(nic_ns * r.latency_factor)));
    r.latency_fitted = fit_latency;
    r.bandwidth_at_edge = lb - b_lo < 0.01 * step_b || b_hi - lb < 0.01 * step_b;
    r.latency_at_edge = fit_latency && (ll - l_lo < 0.01 * step_l || l_hi - ll < 0.01 * step_l);
    search.error(r.bandwidth_factor, r.latency_factor, true);
    for (NicFitCurve& c : r.curves) {
      std::vector<double> errors;
      for (const auto& p : c.points) {
        errors.push_back(std::abs(static_cast<double>(p.predicted.ns()) - static_cast<double>(p.measured.ns())) /
                         static_cast<double>(p.measured.ns()));
      }
      c.median_error = median(errors);
      c.max_error = *std::max_element(errors.begin(), errors.end());
    }
    r.evaluations = search.evaluations();
    return r;
  });
}

}  // namespace ssgd::sim
