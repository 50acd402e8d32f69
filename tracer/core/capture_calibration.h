#pragma once
// The clock calibration of one traced process: a ping-pong exchange with
// the clock server (clock_exchange.h) when the capture starts, for the
// header, and another when it ends, for the footer. The header is written
// at open, so it can hold only the start estimate; the footer holds the
// full calibration (start and end: drift), and a reader prefers it
// (trace::stored_calibration). A process killed before exit keeps the
// header's.
//
// What goes wrong (no server, no reply, a server that changed its name) is
// logged and leaves the calibration without that estimate; the capture goes
// on. note() says, for the trace's provenance, why the start estimate is
// missing.

#include <chrono>
#include <optional>
#include <string>

#include "tracer/core/clock_exchange.h"
#include "tracer/core/trace_sink.h"
#include "traces/proto/capture_metadata.pb.h"

namespace ssgd::tracer {

struct ClockCalibrationSettings {
  // SSGD_TRACER_CLOCK_SERVER; nothing: no calibration.
  std::optional<ClockServerAddress> server;
  // SSGD_TRACER_CLOCK_REFERENCE: the reference host name to store, when it
  // should not be the name the server sends.
  std::string reference;
  // SSGD_TRACER_CLOCK_TIMEOUT_MS: the time budget of each measurement.
  std::chrono::milliseconds budget{500};
};

class CaptureCalibration {
 public:
  // `clock` is the event clock of the trace; `log` gets one line per
  // measurement (its result or why there is none).
  CaptureCalibration(ClockCalibrationSettings settings, ClockReader clock, LogCallback log);

  // Measures the start offset. The calibration for the header (start only),
  // or nothing when none was measured (then note() says why).
  std::optional<trace::v1::ClockCalibration> measure_start() noexcept;
  // Measures the end offset. The calibration for the footer: start and end,
  // or whichever of them was measured; nothing when neither was.
  std::optional<trace::v1::ClockCalibration> measure_end() noexcept;

  // Why the header has no calibration, e.g. "no clock calibration: no
  // reply from node0:4791 within 500 ms (16 requests sent)"; empty if it has one.
  [[nodiscard]] const std::string& note() const noexcept { return note_; }

 private:
  // One measurement: the estimate and the reference name to store.
  std::optional<trace::OffsetEstimate> measure(const char* when, std::string& reference) noexcept;
  void log(const std::string& message) const noexcept;

  ClockCalibrationSettings settings_;
  ClockReader clock_;
  LogCallback log_;
  std::string reference_;  // the name the start estimate was stored with
  std::optional<trace::OffsetEstimate> start_;
  std::string note_;
};

}  // namespace ssgd::tracer
