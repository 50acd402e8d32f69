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

// Intervals that each deliver something at a rate (a quantity a ns), which
// may overlap one another: what they deliver during another interval, each
// its rate times its overlap with it. Add them all, then seal() once before
// amount() (the bytes a rank's collectives moved through it beside a piece
// of compute: walk/trace_profile.cc, simulator/calibration/interference_fit.cc).
class RatedIntervals {
 public:
  void add(std::int64_t start, std::int64_t end, double rate);
  void seal();  // sorts them by start
  [[nodiscard]] double amount(std::int64_t start, std::int64_t end) const;
  [[nodiscard]] bool empty() const { return spans_.empty(); }

 private:
  struct Span {
    std::int64_t start;
    std::int64_t end;
    double rate;
  };
  std::vector<Span> spans_;
  std::int64_t longest_ = 0;  // where amount's search starts: this before its start
};

}  // namespace ssgd
