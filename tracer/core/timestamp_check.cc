#include "tracer/core/timestamp_check.h"

#include <type_traits>

namespace ssgd::tracer {

bool record_time_span(const ActivityRecord& record, std::int64_t& start_ns, std::int64_t& end_ns) {
  return std::visit(
      [&](const auto& a) {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, ExternalCorrelationActivity> ||
                      std::is_same_v<T, DeviceActivity> || std::is_same_v<T, LinkActivity>) {
          return false;
        } else if constexpr (std::is_same_v<T, CudaEventActivity>) {
          start_ns = end_ns = a.timestamp_ns;
          return true;
        } else {
          start_ns = a.start_ns;
          end_ns = a.end_ns;
          return true;
        }
      },
      record.payload);
}

TimestampVerdict check_timestamps(const ActivityRecord& record, const SessionWindow& window) {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  if (!record_time_span(record, start_ns, end_ns)) return TimestampVerdict::kNoTime;
  if (start_ns == 0 || end_ns == 0) return TimestampVerdict::kZero;
  if (end_ns < start_ns) return TimestampVerdict::kEndBeforeStart;
  if (start_ns < window.begin_ns || end_ns > window.end_ns) return TimestampVerdict::kOutsideWindow;
  return TimestampVerdict::kValid;
}

}  // namespace ssgd::tracer
