#pragma once
// The marker-range names that mark iterations and layers in a trace
// (NVTX ranges in a capture): iteration/<N>, forward/<layer>,
// backward/<layer>. Read by dag/trace_profile.h and dag/iteration_tasks.h.

#include <cstdint>
#include <string>

#include "traces/proto/trace_events.pb.h"

namespace ssgd::dag {

struct MarkerName {
  enum class Kind { kOther, kIteration, kForward, kBackward };
  Kind kind = Kind::kOther;
  std::string layer;        // forward and backward: the layer's name
  std::int64_t number = 0;  // iteration: N
};

// Throws ssgd::InputError (file `source`, record `record`, field
// marker.name or marker.end_ns) for a marked name without a layer or with
// an iteration number that is not an integer, and for a marked range that
// ends before it starts. Other names are kOther and never an error.
MarkerName parse_marker_name(const trace::v1::MarkerRange& marker, const std::string& source,
                             std::int64_t record);

}  // namespace ssgd::dag
