#include "simulator/platform/link_load.h"

#include <algorithm>

namespace ssgd::sim {

LinkLoad::LinkLoad(const Platform& platform)
    : capacity_(platform.link_capacities()), bytes_(capacity_.size(), 0.0) {}

void LinkLoad::add(const Route& route, double bytes) {
  if (!(bytes > 0)) return;
  for (const LinkId l : route.links) {
    if (bytes_[l] == 0.0) touched_.push_back(l);
    bytes_[l] += bytes;
  }
}

void LinkLoad::clear() {
  for (const auto l : touched_) bytes_[l] = 0.0;
  touched_.clear();
}

double LinkLoad::busiest_seconds() const {
  double worst = 0;
  for (const auto l : touched_) worst = std::max(worst, bytes_[l] / capacity_[l]);
  return worst;
}

void LinkLoad::add_to(std::vector<double>& into, double scale) const {
  for (const auto l : touched_) into[l] += bytes_[l] * scale;
}

}  // namespace ssgd::sim
