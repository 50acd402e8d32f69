#include "tracer/core/capture_calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace ssgd::tracer {

namespace v1 = trace::v1;

CaptureCalibration::CaptureCalibration(ClockCalibrationSettings settings, ClockReader clock,
                                       LogCallback log)
    : settings_(std::move(settings)), clock_(std::move(clock)), log_(std::move(log)) {}

void CaptureCalibration::log(const std::string& message) const noexcept {
  try {
    if (log_) log_(message);
  } catch (...) {
  }
}

std::optional<trace::OffsetEstimate> CaptureCalibration::measure(const char* when,
                                                                 std::string& reference) noexcept {
  try {
    if (!settings_.server) return std::nullopt;
    const ClockServerAddress& server = *settings_.server;
    ClockExchangeOptions options;
    options.budget = settings_.budget;
    options.reply_timeout = std::min(options.reply_timeout, settings_.budget);
    options.clock = clock_;
    const ClockExchangeResult r = measure_clock_offset(server, options);
    if (!r.estimate) {
      log(fmt::format("clock calibration at the {}: {}", when, r.failure));
      if (start_ == std::nullopt && note_.empty()) note_ = "no clock calibration: " + r.failure;
      return std::nullopt;
    }
    // The name to store: the one asked for, else the server's own, else
    // the address it was reached at.
    reference = !settings_.reference.empty()      ? settings_.reference
                : !r.reference_hostname.empty() ? r.reference_hostname
                                                : server.host;
    if (!settings_.reference.empty() && !r.reference_hostname.empty() &&
        r.reference_hostname != settings_.reference) {
      log(fmt::format("the clock server at {} calls itself '{}'; storing '{}' "
                      "(SSGD_TRACER_CLOCK_REFERENCE) as the reference host",
                      server.to_string(), r.reference_hostname, settings_.reference));
    }
    log(fmt::format("clock offset to '{}' at the {}: {:+} ns +- {} ns ({} of {} requests answered, "
                    "{} replies ignored)",
                    reference, when, r.estimate->offset_ns, r.estimate->uncertainty_ns, r.replies,
                    r.sent, r.ignored));
    return r.estimate;
  } catch (...) {
    return std::nullopt;
  }
}

std::optional<v1::ClockCalibration> CaptureCalibration::measure_start() noexcept {
  try {
    std::string reference;
    start_ = measure("start", reference);
    if (!start_) return std::nullopt;
    reference_ = reference;
    v1::ClockCalibration c;
    c.set_reference_hostname(reference_);
    *c.mutable_start() = trace::to_proto(*start_);
    return c;
  } catch (...) {
    return std::nullopt;
  }
}

std::optional<v1::ClockCalibration> CaptureCalibration::measure_end() noexcept {
  try {
    std::string reference;
    std::optional<trace::OffsetEstimate> end = measure("end", reference);
    if (end && start_ && reference != reference_) {
      log(fmt::format("the clock reference changed from '{}' to '{}' during the capture; the end "
                      "estimate is not stored",
                      reference_, reference));
      end.reset();
    }
    if (end && start_ && end->measured_at_ns <= start_->measured_at_ns) end.reset();
    if (!start_ && !end) return std::nullopt;
    v1::ClockCalibration c;
    c.set_reference_hostname(start_ ? reference_ : reference);
    if (start_) *c.mutable_start() = trace::to_proto(*start_);
    if (end) *c.mutable_end() = trace::to_proto(*end);
    return c;
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace ssgd::tracer
