#pragma once
// Moving an event's times: an importer reads times relative to its source's
// own start (a profiler's trace start, an Nsight Systems session) and adds
// the start's absolute time to each event it makes.

#include <cstdint>

#include "traces/proto/trace_events.pb.h"

namespace ssgd::trace {

// Adds `base_ns` to the start and end of a kernel, copy, memset,
// collective, marker or API call (any other payload is left alone); false
// when a sum would overflow int64, and then the event is unchanged.
bool shift_event_times(v1::Event& e, std::int64_t base_ns);

}  // namespace ssgd::trace
