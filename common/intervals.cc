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

void RatedIntervals::add(std::int64_t start, std::int64_t end, double rate) {
  spans_.push_back({start, end, rate});
  longest_ = std::max(longest_, end - start);
}

void RatedIntervals::seal() {
  std::sort(spans_.begin(), spans_.end(),
            [](const Span& a, const Span& b) { return a.start < b.start; });
}

double RatedIntervals::amount(std::int64_t start, std::int64_t end) const {
  auto it = std::lower_bound(spans_.begin(), spans_.end(), start - longest_,
                             [](const Span& s, std::int64_t t) { return s.start < t; });
  double sum = 0;
  for (; it != spans_.end() && it->start < end; ++it) {
    const std::int64_t overlap = std::min(it->end, end) - std::max(it->start, start);
    if (overlap > 0) sum += it->rate * static_cast<double>(overlap);
  }
  return sum;
}

}  // namespace ssgd
