#pragma once
// Time intervals [start, end) in nanoseconds: merged into a sorted, disjoint
// set, and the part of another interval such a set covers. Used where work
// is matched with what ran beside it (a trace's compute beside its
// collectives: dag/trace_profile.cc, simulator/calibration/interference_fit.cc).

#include <cstdint>
#include <utility>
#include <vector>

namespace ssgd {

using Intervals = std::vector<std::pair<std::int64_t, std::int64_t>>;

// Sorted by start, overlapping and touching intervals joined.
Intervals merged_intervals(Intervals v);

// The nanoseconds of [start, end) that `merged` (merged_intervals' result) covers.
std::int64_t covered_ns(const Intervals& merged, std::int64_t start, std::int64_t end);

}  // namespace ssgd
