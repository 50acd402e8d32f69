#include "simulator/perturb/jitter.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace ssgd::sim {

double TaskJitter::uniform() {
  return static_cast<double>(engine_() >> 11) * 0x1.0p-53;
}

double TaskJitter::normal() {
  const double u1 = 1.0 - uniform();  // (0, 1]: log is finite
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double TaskJitter::next() {
  double f = 1;
  switch (spec_.kind) {
    case JitterKind::kNone: return 1;
    case JitterKind::kNormal: f = 1 + spec_.spread * normal(); break;
    case JitterKind::kUniform: f = 1 + spec_.spread * (2 * uniform() - 1); break;
    case JitterKind::kLognormal:
      f = std::exp(spec_.spread * normal() - spec_.spread * spec_.spread / 2);
      break;
  }
  return std::max(0.0, f);
}

ClassJitterTable::ClassJitterTable(JitterSpec spec, std::uint64_t seed, std::size_t classes,
                                   std::size_t iterations, std::size_t layers)
    : iterations_(iterations), layers_(layers) {
  TaskJitter jitter(spec, seed);
  draws_.resize(classes * iterations * 2 * layers);
  for (double& d : draws_) d = jitter.next();  // in the order factor() reads them
}

}  // namespace ssgd::sim
