#pragma once
// A sweep's charts: iteration time and throughput against one key that
// varies, never joining into one line points that differ in another key.
// x is the first varying key whose values are all numbers (else the first
// varying key); colour is the next varying key; every other varying key
// splits the points into charts, one per combination of their values
// (sharing their axes and colours). With more combinations than
// kMaxSweepPanels, one chart draws them all, a line per combination of every
// varying key but x. docs/report.md.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "presentation/html/report_input.h"

namespace ssgd::html {

inline constexpr std::size_t kMaxSweepPanels = 12;

struct SweepLayout {
  std::vector<std::size_t> varying;  // indices into SweepReport::keys, in its order
  std::optional<std::size_t> x, colour;
  std::vector<std::size_t> split;  // the other varying keys
  bool numeric_x = false;
  // The combinations of the split keys' values ("k=v, k=v"), in point order;
  // empty: one chart.
  std::vector<std::string> panels;
};

SweepLayout sweep_layout(const SweepReport& sweep);

// The charts of one figure (iteration time, or throughput): one per panel,
// or one.
std::vector<Json> sweep_charts(const SweepReport& sweep, const SweepLayout& layout,
                               bool throughput);

}  // namespace ssgd::html
