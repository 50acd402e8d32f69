#pragma once
// The hand-worked four-layer profile of the policy golden tests
// (tests/simulator/policy_test.cc, scheduling_policy_test.cc) and its
// all-reduce cost, so both files' timelines start from the same numbers.

#include <cstdint>

#include <fmt/format.h>

#include "common/time.h"
#include "traces/layer_profile.h"

namespace ssgd::testing {

inline constexpr std::int64_t kMs = 1'000'000;

// Forward 1 ms per layer. Backward (layer 3 first): 1, 2, 3, 4 ms, so the
// gradients of layers 3, 2, 1, 0 are ready 1, 3, 6 and 10 ms into backward
// (5, 7, 10, 14 ms into the iteration). Gradients 2, 1, 1 and 4 MB.
inline trace::LayerProfile four_layer_profile() {
  trace::LayerProfile p;
  const std::int64_t backward[] = {4, 3, 2, 1};
  const std::int64_t bytes[] = {2'000'000, 1'000'000, 1'000'000, 4'000'000};
  for (int l = 0; l < 4; ++l) {
    p.layers.push_back({l, fmt::format("l{}", l), Duration(kMs), Duration(backward[l] * kMs),
                        bytes[l], std::nullopt, std::nullopt, std::nullopt});
  }
  return p;
}

// T(M) = 3 ms + M x 1 ns: 1 MB takes 4 ms, 2 MB 5 ms, 4 MB 7 ms; a merge saves 3 ms.
inline Duration four_layer_allreduce_time(std::int64_t bytes) {
  return bytes == 0 ? Duration::zero() : Duration(3 * kMs + bytes);
}

}  // namespace ssgd::testing
