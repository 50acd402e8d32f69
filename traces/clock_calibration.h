#pragma once
// Clock offsets between hosts, estimated from ping-pong exchanges the way
// NTP does (Mills, RFC 5905, section 8): the reference host sends at t0 (its
// clock), the remote host receives at t1 and answers at t2 (its clock), the
// reference receives the answer at t3. With a symmetric path, the remote
// clock leads the reference by theta = ((t1 - t0) + (t2 - t3)) / 2, and the
// round trip is delta = (t3 - t0) - (t2 - t1). Whatever the asymmetry, the
// true offset lies within theta +- delta / 2, so the exchange with the
// smallest round trip gives the tightest bound: it is the one kept (Mills'
// "minimum filter"), and delta / 2 is its uncertainty.
//
// The tracer's exchanges run the other way round (tracer/core/clock_exchange.h):
// the traced host, whose offset is wanted, sends first and the reference
// host answers. The same bound holds with the roles swapped;
// estimate_offset_of_sender computes it.
//
// With an estimate at the start and one at the end of a capture, the offset
// is taken to drift linearly between them (and beyond them, along the same
// line); its uncertainty is the larger of the two.

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "traces/proto/capture_metadata.pb.h"
#include "traces/proto/trace_file.pb.h"

namespace ssgd::trace {

// One ping-pong exchange, ns: t0, t3 on the reference host's clock, t1, t2
// on the remote host's.
struct ClockExchange {
  std::int64_t t0 = 0;
  std::int64_t t1 = 0;
  std::int64_t t2 = 0;
  std::int64_t t3 = 0;
};

struct OffsetEstimate {
  std::int64_t offset_ns = 0;       // add to remote time to get reference time
  std::int64_t uncertainty_ns = 0;  // half the round trip, rounded up
  std::int64_t measured_at_ns = 0;  // remote time of the exchange's middle, (t1 + t2) / 2
};

// The minimum-round-trip estimate (the first of equals). Throws
// std::invalid_argument when `exchanges` is empty or an exchange is
// impossible (t3 < t0, t2 < t1, or a round trip below 0), naming its index.
OffsetEstimate estimate_offset(std::span<const ClockExchange> exchanges);

// The same minimum filter for exchanges that the remote host started: here
// t0 and t3 are on the remote host's clock (it sent the request at t0 and
// got the answer at t3) and t1, t2 on the reference host's (it received at
// t1 and answered at t2). The offset to add to remote time is then
// ((t1 - t0) + (t2 - t3)) / 2 and measured_at_ns is the remote time
// (t0 + t3) / 2. Throws like estimate_offset.
OffsetEstimate estimate_offset_of_sender(std::span<const ClockExchange> exchanges);

// Maps a remote host's event-clock times to the reference host's.
class ClockMapping {
 public:
  // The identity (same host).
  ClockMapping() = default;
  // A constant offset, or a linear drift from `start` to `end`.
  explicit ClockMapping(OffsetEstimate start, std::optional<OffsetEstimate> end = std::nullopt);
  // From a stored calibration: a linear drift from its start to its end, or
  // a constant offset when it holds only one of them. Throws
  // std::invalid_argument when it holds neither, or its end is measured at
  // or before its start.
  static ClockMapping from_proto(const v1::ClockCalibration& calibration);

  // The offset to add at remote time `remote_ns` (rounded down).
  [[nodiscard]] std::int64_t offset_at(std::int64_t remote_ns) const;
  [[nodiscard]] std::int64_t to_reference(std::int64_t remote_ns) const {
    return remote_ns + offset_at(remote_ns);
  }
  [[nodiscard]] std::int64_t uncertainty_ns() const;
  [[nodiscard]] bool is_identity() const { return !start_.has_value(); }

 private:
  std::optional<OffsetEstimate> start_;
  std::optional<OffsetEstimate> end_;
};

// The stored form of an estimate.
v1::ClockOffsetSample to_proto(const OffsetEstimate& estimate);

// The calibration a rank file holds: the footer's when there is a footer
// with one (the tracer writes it at exit, with the end estimate), else the
// header's (start only: a process killed before exit leaves no footer).
// Null when neither has one.
const v1::ClockCalibration* stored_calibration(const v1::CaptureMetadata& header,
                                               const v1::Footer* footer);

// One line for people: "to 'node0': +1200 ns +- 35 ns at the start,
// +1300 ns +- 40 ns at the end".
std::string describe_calibration(const v1::ClockCalibration& calibration);

}  // namespace ssgd::trace
