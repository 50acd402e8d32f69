#include "traces/clock_calibration.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace ssgd::trace {
namespace {

// 128-bit arithmetic keeps sums and products of int64 times exact (a GCC
// and Clang extension, marked so for -Wpedantic).
__extension__ typedef __int128 Wide;

// floor(a / b) for b > 0.
std::int64_t floor_div(Wide a, Wide b) {
  Wide q = a / b;
  if (a % b != 0 && a < 0) --q;
  return static_cast<std::int64_t>(q);
}

OffsetEstimate from_sample(const v1::ClockOffsetSample& s) {
  return {s.offset_ns(), s.uncertainty_ns(), s.measured_at_ns()};
}

}  // namespace

namespace {

// The index of the exchange with the smallest round trip (the first of
// equals) and that round trip; the same formula whichever host sent first.
std::pair<std::size_t, Wide> minimum_round_trip(std::span<const ClockExchange> exchanges) {
  if (exchanges.empty()) throw std::invalid_argument("no clock exchanges to estimate an offset from");
  std::optional<std::size_t> best;
  Wide best_delay = 0;
  for (std::size_t i = 0; i < exchanges.size(); ++i) {
    const ClockExchange& e = exchanges[i];
    const Wide delay = (Wide{e.t3} - e.t0) - (Wide{e.t2} - e.t1);
    if (e.t3 < e.t0 || e.t2 < e.t1 || delay < 0) {
      throw std::invalid_argument("clock exchange " + std::to_string(i) +
                                  " is impossible: t3 < t0, t2 < t1 or a negative round trip");
    }
    if (!best || delay < best_delay) {
      best = i;
      best_delay = delay;
    }
  }
  return {*best, best_delay};
}

}  // namespace

OffsetEstimate estimate_offset(std::span<const ClockExchange> exchanges) {
  const auto [best, delay] = minimum_round_trip(exchanges);
  const ClockExchange& e = exchanges[best];
  // Offset to add to remote time: -theta = ((t0 - t1) + (t3 - t2)) / 2. It
  // has the parity of the round trip, so rounding the half round trip up
  // covers rounding the offset down.
  const Wide twice = (Wide{e.t0} - e.t1) + (Wide{e.t3} - e.t2);
  OffsetEstimate r;
  r.offset_ns = floor_div(twice, 2);
  r.uncertainty_ns = static_cast<std::int64_t>((delay + 1) / 2);
  r.measured_at_ns = floor_div(Wide{e.t1} + e.t2, 2);
  return r;
}

OffsetEstimate estimate_offset_of_sender(std::span<const ClockExchange> exchanges) {
  const auto [best, delay] = minimum_round_trip(exchanges);
  const ClockExchange& e = exchanges[best];
  // The remote host sent: reference time at its send is t1 minus the
  // forward delay, at its receive t2 plus the back delay; with equal delays
  // the offset is ((t1 - t0) + (t2 - t3)) / 2, within half the round trip
  // whatever the asymmetry. Same parity argument as above.
  const Wide twice = (Wide{e.t1} - e.t0) + (Wide{e.t2} - e.t3);
  OffsetEstimate r;
  r.offset_ns = floor_div(twice, 2);
  r.uncertainty_ns = static_cast<std::int64_t>((delay + 1) / 2);
  r.measured_at_ns = floor_div(Wide{e.t0} + e.t3, 2);
  return r;
}

ClockMapping::ClockMapping(OffsetEstimate start, std::optional<OffsetEstimate> end)
    : start_(start), end_(end) {
  if (end_ && end_->measured_at_ns <= start_->measured_at_ns) {
    throw std::invalid_argument("the end clock offset is measured at " +
                                std::to_string(end_->measured_at_ns) +
                                " ns, not after the start one at " +
                                std::to_string(start_->measured_at_ns) + " ns");
  }
}

ClockMapping ClockMapping::from_proto(const v1::ClockCalibration& calibration) {
  if (!calibration.has_start() && !calibration.has_end()) {
    throw std::invalid_argument("the calibration against '" + calibration.reference_hostname() +
                                "' holds neither a start nor an end estimate");
  }
  if (!calibration.has_start()) return ClockMapping(from_sample(calibration.end()));
  std::optional<OffsetEstimate> end;
  if (calibration.has_end()) end = from_sample(calibration.end());
  return ClockMapping(from_sample(calibration.start()), end);
}

std::int64_t ClockMapping::offset_at(std::int64_t remote_ns) const {
  if (!start_) return 0;
  if (!end_) return start_->offset_ns;
  const Wide span = Wide{end_->measured_at_ns} - start_->measured_at_ns;
  const Wide rise = Wide{end_->offset_ns} - start_->offset_ns;
  const Wide along = Wide{remote_ns} - start_->measured_at_ns;
  return static_cast<std::int64_t>(start_->offset_ns + floor_div(rise * along, span));
}

std::int64_t ClockMapping::uncertainty_ns() const {
  if (!start_) return 0;
  if (!end_) return start_->uncertainty_ns;
  return std::max(start_->uncertainty_ns, end_->uncertainty_ns);
}

v1::ClockOffsetSample to_proto(const OffsetEstimate& estimate) {
  v1::ClockOffsetSample s;
  s.set_offset_ns(estimate.offset_ns);
  s.set_uncertainty_ns(estimate.uncertainty_ns);
  s.set_measured_at_ns(estimate.measured_at_ns);
  return s;
}

const v1::ClockCalibration* stored_calibration(const v1::CaptureMetadata& header,
                                               const v1::Footer* footer) {
  if (footer != nullptr && footer->has_clock_calibration()) return &footer->clock_calibration();
  if (header.hosts_size() > 0 && header.hosts(0).clock().has_calibration()) {
    return &header.hosts(0).clock().calibration();
  }
  return nullptr;
}

std::string describe_calibration(const v1::ClockCalibration& calibration) {
  const auto sample = [](const v1::ClockOffsetSample& s, const char* when) {
    return std::string(s.offset_ns() >= 0 ? "+" : "") + std::to_string(s.offset_ns()) + " ns +- " +
           std::to_string(s.uncertainty_ns()) + " ns at the " + when;
  };
  std::string text = "to '" + calibration.reference_hostname() + "': ";
  if (calibration.has_start()) text += sample(calibration.start(), "start");
  if (calibration.has_start() && calibration.has_end()) text += ", ";
  if (calibration.has_end()) text += sample(calibration.end(), "end");
  if (!calibration.has_start() && !calibration.has_end()) text += "no estimate";
  return text;
}

}  // namespace ssgd::trace
