#pragma once
// Exact decimal text of an integer count of small units in a larger unit,
// with no floating point: format_fixed_decimal(1500, 3) == "1.500" (ns as
// us), format_fixed_decimal(-1, 6) == "-0.000001" (ns as ms). Outputs that
// must keep whole nanoseconds (Chrome-trace timestamps, `ssgd diff`) use it.

#include <cstdint>
#include <string>

namespace ssgd {

// `value` / 10^decimals with exactly `decimals` digits after the point;
// decimals in 0..18.
std::string format_fixed_decimal(std::int64_t value, int decimals);

}  // namespace ssgd
