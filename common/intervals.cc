#include "common/intervals.h"

#include <algorithm>

namespace ssgd {

Intervals merged_intervals(Intervals v) {
  std::sort(v.begin(), v.end());
  Intervals out;
  for (const auto& iv : v) {
    if (!out.empty() && iv.first <= out.back().second) {
      out.back().second = std::max(out.back().second, iv.second);
    } else {
      out.push_back(iv);
    }
  }
  return out;
}

std::int64_t covered_ns(const Intervals& merged, std::int64_t start, std::int64_t end) {
  // The last interval starting at or before `start` may reach into it.
  auto it = std::upper_bound(merged.begin(), merged.end(), start,
                             [](std::int64_t t, const auto& iv) { return t < iv.first; });
  if (it != merged.begin()) --it;
  std::int64_t sum = 0;
  for (; it != merged.end() && it->first < end; ++it) {
    sum += std::max<std::int64_t>(0, std::min(end, it->second) - std::max(start, it->first));
  }
  return sum;
}

}  // namespace ssgd
