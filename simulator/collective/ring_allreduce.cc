#include "simulator/collective/ring_allreduce.h"

#include <stdexcept>

namespace ssgd::sim {

RingSteps ring_allreduce_steps(std::int64_t workers, std::int64_t bytes) {
  if (workers < 1) throw std::invalid_argument("ring all-reduce needs at least one worker");
  if (bytes < 0) throw std::invalid_argument("ring all-reduce of a negative size");
  if (workers == 1) return {};
  return {2 * (workers - 1), static_cast<double>(bytes) / static_cast<double>(workers)};
}

Duration ring_allreduce_time(std::int64_t workers, std::int64_t bytes, const LinkParams& link) {
  const RingSteps s = ring_allreduce_steps(workers, bytes);
  if (s.steps == 0 || bytes == 0) return Duration::zero();
  const double seconds = static_cast<double>(s.steps) *
                         (static_cast<double>(link.latency.ns()) * 1e-9 +
                          s.bytes_per_step_per_link / link.bandwidth_bytes_per_s);
  return duration_from_seconds(seconds);
}

}  // namespace ssgd::sim
