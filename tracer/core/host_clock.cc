#include "tracer/core/host_clock.h"

#include <time.h>
#include <unistd.h>

#include <array>
#include <limits>

namespace ssgd::tracer {

namespace v1 = trace::v1;

namespace {

std::int64_t read(clockid_t id) noexcept {
  timespec ts{};
  if (clock_gettime(id, &ts) != 0) return 0;
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

std::int64_t read_clock_ns(v1::ClockDomain::Kind kind) noexcept {
  switch (kind) {
    case v1::ClockDomain::MONOTONIC_RAW: return read(CLOCK_MONOTONIC_RAW);
    case v1::ClockDomain::MONOTONIC: return read(CLOCK_MONOTONIC);
    case v1::ClockDomain::REALTIME: return read(CLOCK_REALTIME);
    default: return 0;
  }
}

HostClockSample sample_host_clock(v1::ClockDomain::Kind kind) {
  HostClockSample s;
  s.kind = kind;
  std::int64_t best_window = std::numeric_limits<std::int64_t>::max();
  // The tightest of a few samples: a preemption between the reads widens
  // one window, rarely all of them.
  for (int i = 0; i < 5; ++i) {
    const std::int64_t before = read(CLOCK_REALTIME);
    const std::int64_t event = read_clock_ns(kind);
    const std::int64_t after = read(CLOCK_REALTIME);
    if (after - before < best_window) {
      best_window = after - before;
      s.realtime_ns = before + (after - before) / 2;
      s.event_clock_ns = event;
      s.uncertainty_ns = (after - before + 1) / 2;
    }
  }
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) == 0) s.hostname = host.data();
  s.process_id = static_cast<std::int64_t>(getpid());
  return s;
}

}  // namespace ssgd::tracer
