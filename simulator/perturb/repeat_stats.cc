#include "simulator/perturb/repeat_stats.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

namespace ssgd::sim {

double student_t_975(std::int64_t df) {
  if (df < 1) throw std::invalid_argument("Student's t needs at least one degree of freedom");
  static constexpr std::array<double, 30> kTable = {
      12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
      2.2010,  2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
      2.0796,  2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423};
  if (df <= 30) return kTable[static_cast<std::size_t>(df - 1)];
  const double z = 1.959964;
  const double n = static_cast<double>(df);
  const double z3 = z * z * z, z5 = z3 * z * z;
  return z + (z3 + z) / (4 * n) + (5 * z5 + 16 * z3 + 3 * z) / (96 * n * n);
}

RepeatStats repeat_stats(const std::vector<Duration>& runs) {
  if (runs.empty()) throw std::invalid_argument("no runs to summarise");
  RepeatStats s;
  s.count = static_cast<std::int64_t>(runs.size());
  const double n = static_cast<double>(runs.size());
  double sum = 0;
  for (auto d : runs) sum += static_cast<double>(d.ns());
  const double mean = sum / n;
  double squares = 0;
  for (auto d : runs) squares += (static_cast<double>(d.ns()) - mean) * (static_cast<double>(d.ns()) - mean);
  s.mean = Duration(static_cast<std::int64_t>(std::llround(mean)));
  if (runs.size() > 1) {
    const double sd = std::sqrt(squares / (n - 1));
    s.ci95_half_width = Duration(static_cast<std::int64_t>(
        std::llround(student_t_975(s.count - 1) * sd / std::sqrt(n))));
  }
  s.min = *std::min_element(runs.begin(), runs.end());
  s.max = *std::max_element(runs.begin(), runs.end());
  return s;
}

}  // namespace ssgd::sim
