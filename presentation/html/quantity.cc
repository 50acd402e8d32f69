#include "presentation/html/quantity.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "common/units.h"

namespace ssgd::html {
namespace {

struct Unit {
  double scale;
  const char* name;
};

constexpr std::array<Unit, 5> kSizes = {{{1, "B"},
                                         {1024.0, "KiB"},
                                         {1024.0 * 1024, "MiB"},
                                         {1024.0 * 1024 * 1024, "GiB"},
                                         {1024.0 * 1024 * 1024 * 1024, "TiB"}}};
constexpr std::array<Unit, 4> kDurations = {{{1, "ns"}, {1e3, "us"}, {1e6, "ms"}, {1e9, "s"}}};
// Decimal, as the command line prints rates.
constexpr std::array<Unit, 5> kRates = {
    {{1, "B/s"}, {1e3, "kB/s"}, {1e6, "MB/s"}, {1e9, "GB/s"}, {1e12, "TB/s"}}};

template <std::size_t N>
Unit pick(const std::array<Unit, N>& units, double magnitude) {
  Unit u = units[0];
  for (const Unit& x : units) {
    if (magnitude >= x.scale) u = x;
  }
  return u;
}

Unit unit_for(QuantityKind kind, double magnitude) {
  switch (kind) {
    case QuantityKind::kSize: return pick(kSizes, magnitude);
    case QuantityKind::kDuration: return pick(kDurations, magnitude);
    case QuantityKind::kRate: return pick(kRates, magnitude);
    case QuantityKind::kNumber: break;
  }
  return {1, ""};
}

}  // namespace

std::optional<Quantity> parse_quantity(std::string_view text) {
  if (text.empty()) return std::nullopt;
  {
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc() && end == text.data() + text.size() && std::isfinite(v)) {
      return Quantity{QuantityKind::kNumber, v};
    }
  }
  try {
    return Quantity{QuantityKind::kSize, static_cast<double>(parse_bytes(text))};
  } catch (const std::exception&) {
  }
  try {
    return Quantity{QuantityKind::kDuration, static_cast<double>(parse_duration(text).ns())};
  } catch (const std::exception&) {
  }
  try {
    return Quantity{QuantityKind::kRate, parse_rate_bytes_per_s(text)};
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

QuantityAxis quantity_axis(QuantityKind kind, const std::vector<double>& values) {
  double largest = 0;
  for (double v : values) largest = std::max(largest, std::abs(v));
  const Unit u = unit_for(kind, largest);
  return {kind, u.scale, u.name};
}

std::string quantity_text(const Quantity& q) {
  if (q.kind == QuantityKind::kNumber) return fmt::format("{}", q.base);
  const Unit u = unit_for(q.kind, std::abs(q.base));
  const int decimals = q.kind == QuantityKind::kDuration ? 3 : 1;
  if (u.scale == 1) return fmt::format("{} {}", q.base, u.name);
  return fmt::format("{:.{}f} {}", q.base / u.scale, decimals, u.name);
}

}  // namespace ssgd::html
