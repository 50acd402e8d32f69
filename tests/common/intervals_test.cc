// common/intervals.h: merging and covering, with the edges that matter
// (touching intervals, an interval inside another, one starting before the
// query, none at all).
#include <gtest/gtest.h>

#include "common/intervals.h"

namespace ssgd {
namespace {

TEST(Intervals, MergesOverlappingAndTouchingOnesInOrder) {
  const Intervals m = merged_intervals({{50, 60}, {0, 10}, {10, 20}, {5, 8}, {30, 40}, {35, 45}});
  const Intervals want = {{0, 20}, {30, 45}, {50, 60}};
  EXPECT_EQ(m, want);
  EXPECT_TRUE(merged_intervals({}).empty());
}

TEST(Intervals, CoversThePartInside) {
  const Intervals m = merged_intervals({{0, 20}, {30, 45}, {50, 60}});
  EXPECT_EQ(covered_ns(m, 0, 100), 20 + 15 + 10);
  EXPECT_EQ(covered_ns(m, 10, 35), 10 + 5);  // starts inside the first
  EXPECT_EQ(covered_ns(m, 20, 30), 0);       // the gap exactly
  EXPECT_EQ(covered_ns(m, 31, 32), 1);       // inside one
  EXPECT_EQ(covered_ns(m, 70, 80), 0);       // after all
  EXPECT_EQ(covered_ns({}, 0, 10), 0);
}

}  // namespace
}  // namespace ssgd
