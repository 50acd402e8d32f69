#include "common/time.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace ssgd {

Duration duration_from_seconds(double seconds) {
  const double ns = std::round(seconds * 1e9);
  if (!std::isfinite(ns) || std::fabs(ns) >= 9.2e18) {
    throw std::out_of_range("duration of " + std::to_string(seconds) +
                            " s does not fit in int64 nanoseconds");
  }
  return Duration(static_cast<std::int64_t>(ns));
}

Duration scale(Duration d, double factor) {
  const double ns = std::round(static_cast<double>(d.ns()) * factor);
  if (!std::isfinite(ns) || std::fabs(ns) >= 9.2e18) {
    throw std::out_of_range(std::to_string(d.ns()) + " ns x " + std::to_string(factor) +
                            " does not fit in int64 nanoseconds");
  }
  return Duration(static_cast<std::int64_t>(ns));
}

}  // namespace ssgd
