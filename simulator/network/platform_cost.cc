#include "simulator/network/platform_cost.h"

#include <algorithm>
#include <cmath>

#include "simulator/platform/link_load.h"

namespace ssgd::sim {
namespace {

// Distinct values, kept sorted; sizes of a step's transfers repeat a lot.
void insert_size(std::vector<double>& sizes, double v) {
  const auto it = std::lower_bound(sizes.begin(), sizes.end(), v);
  if (it == sizes.end() || *it != v) sizes.insert(it, v);
}

double seconds(Duration d) { return static_cast<double>(d.ns()) * 1e-9; }

}  // namespace

PlatformCost::PlatformCost(CollectiveOp op, CollectiveAlgorithm algorithm, const CollectiveShape& shape,
                           const std::vector<VertexId>& endpoints, RouteCache& routes,
                           const Platform& platform) {
  const std::vector<CollectiveStep> steps = decompose(op, algorithm, shape, 1.0);
  LinkLoad step_load(platform);
  std::vector<double> total(platform.links().size(), 0.0);
  for (const CollectiveStep& step : steps) {
    Phase phase;
    phase.repeat = step.repeat;
    step_load.clear();
    for (const Transfer& t : step.transfers) {
      const Route& r = routes.get(endpoints.at(static_cast<std::size_t>(t.src)),
                                  endpoints.at(static_cast<std::size_t>(t.dst)));
      step_load.add(r, t.bytes);
      if (r.crosses_nodes) {
        phase.inter = true;
        phase.inter_latency = max(phase.inter_latency, r.latency);
        insert_size(phase.inter_sizes, t.bytes);
      } else {
        phase.intra = true;
        phase.intra_latency = max(phase.intra_latency, r.latency);
        insert_size(phase.intra_sizes, t.bytes);
      }
    }
    phase.seconds_per_byte = step_load.busiest_seconds();
    step_load.add_to(total, static_cast<double>(step.repeat));
    // A run of steps with the same costs is one phase.
    if (!phases_.empty()) {
      Phase& last = phases_.back();
      if (last.intra_latency == phase.intra_latency && last.inter_latency == phase.inter_latency &&
          last.intra == phase.intra && last.inter == phase.inter &&
          last.seconds_per_byte == phase.seconds_per_byte && last.intra_sizes == phase.intra_sizes &&
          last.inter_sizes == phase.inter_sizes) {
        last.repeat += phase.repeat;
        continue;
      }
    }
    phases_.push_back(std::move(phase));
  }
  for (LinkId l = 0; l < total.size(); ++l) {
    if (total[l] > 0) link_bytes_.emplace_back(l, total[l]);
  }
}

Duration PlatformCost::time(double bytes, const CalibrationBand* band, bool band_inside,
                            const StreamCap& streams) const {
  if (bytes == 0) return Duration::zero();
  double total_s = 0;
  for (const Phase& p : phases_) {
    // The band stands for its level: its latency for that level's routes,
    // its rate a cap on each transfer there.
    const bool band_intra = band != nullptr && band_inside;
    const bool band_inter = band != nullptr && !band_inside;
    Duration latency;
    if (p.intra) latency = max(latency, band_intra ? band->latency : p.intra_latency);
    if (p.inter) latency = max(latency, band_inter ? band->latency : p.inter_latency);
    double data_s = p.seconds_per_byte * bytes;
    if (band_intra) {
      for (const double u : p.intra_sizes) data_s = std::max(data_s, u * bytes / band->bandwidth_bytes_per_s);
    }
    for (const double u : p.inter_sizes) {
      const double b = u * bytes;
      const double rate = band_inter ? band->bandwidth_bytes_per_s : streams.rate(b);
      if (std::isfinite(rate)) data_s = std::max(data_s, b / rate);
    }
    total_s += static_cast<double>(p.repeat) * (seconds(latency) + data_s);
  }
  return duration_from_seconds(total_s);
}

void PlatformCost::add_link_bytes(double bytes, std::vector<double>& into) const {
  for (const auto& [l, b] : link_bytes_) into[l] += b * bytes;
}

}  // namespace ssgd::sim
