#pragma once
// Which records have timestamps a trace can use. CUPTI occasionally reports
// a zero start or end (an activity whose completion it never saw), an end
// before the start, or a value nowhere near the capture (a timestamp from
// another clock or garbage); such records would wreck every duration and
// clock alignment downstream, so the writer drops them and counts them in
// the footer's invalid_timestamps.

#include <cstdint>

#include "tracer/core/activity_record.h"

namespace ssgd::tracer {

// The times a record may have: [begin_ns, end_ns] on the event clock. The
// trace sink makes it from the capture's start and generous slack.
struct SessionWindow {
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
};

enum class TimestampVerdict : std::uint8_t {
  kValid,
  kNoTime,          // a kind without timestamps (external correlation, device)
  kZero,            // start or end is 0
  kEndBeforeStart,  // end < start
  kOutsideWindow,   // start or end outside the session window
};

// The record's [start, end] (a CUDA event's timestamp for both); false for
// kinds without time.
bool record_time_span(const ActivityRecord& record, std::int64_t& start_ns, std::int64_t& end_ns);

// Checks a record's timestamps against the rules above. kValid and kNoTime
// records are kept; the others are invalid.
TimestampVerdict check_timestamps(const ActivityRecord& record, const SessionWindow& window);

}  // namespace ssgd::tracer
