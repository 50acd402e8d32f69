#pragma once
// The host's clock domain, written into every trace header: which clock the
// event timestamps follow, how it relates to the wall clock (one
// CLOCK_REALTIME / event-clock sample at the start of the capture), the host
// name and the process id. `ssgd merge` needs the sample to put ranks on
// one time line before it refines the offsets.

#include <cstdint>
#include <string>

#include "traces/proto/capture_metadata.pb.h"

namespace ssgd::tracer {

struct HostClockSample {
  // The clock event timestamps are read from (MONOTONIC_RAW, MONOTONIC or REALTIME).
  trace::v1::ClockDomain::Kind kind = trace::v1::ClockDomain::MONOTONIC_RAW;
  // The same instant on both clocks, ns.
  std::int64_t realtime_ns = 0;
  std::int64_t event_clock_ns = 0;
  // Half the time the sample took, ns.
  std::int64_t uncertainty_ns = 0;
  std::string hostname;
  std::int64_t process_id = 0;
};

// Reads `kind`'s clock now, ns; 0 for a kind that is not a host clock.
std::int64_t read_clock_ns(trace::v1::ClockDomain::Kind kind) noexcept;

// Samples CLOCK_REALTIME around a read of `kind` (the tightest of a few
// tries) and reads the host name and process id.
HostClockSample sample_host_clock(trace::v1::ClockDomain::Kind kind);

}  // namespace ssgd::tracer
