#include "traces/event_shift.h"

namespace ssgd::trace {

bool shift_event_times(v1::Event& e, std::int64_t base_ns) {
  auto add = [base_ns](auto* m) {
    std::int64_t s = 0, t = 0;
    if (__builtin_add_overflow(m->start_ns(), base_ns, &s) ||
        __builtin_add_overflow(m->end_ns(), base_ns, &t)) {
      return false;
    }
    m->set_start_ns(s);
    m->set_end_ns(t);
    return true;
  };
  switch (e.payload_case()) {
    case v1::Event::kKernel: return add(e.mutable_kernel());
    case v1::Event::kMemcpy: return add(e.mutable_memcpy());
    case v1::Event::kMemset: return add(e.mutable_memset());
    case v1::Event::kCollective: return add(e.mutable_collective());
    case v1::Event::kMarker: return add(e.mutable_marker());
    case v1::Event::kApiCall: return add(e.mutable_api_call());
    default: return true;
  }
}

}  // namespace ssgd::trace
