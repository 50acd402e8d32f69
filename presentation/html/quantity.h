#pragma once
// The values an optimize report tried, as an axis shows them: sizes, times
// and rates written as --set takes them ("1048576B", "4MiB", "250us",
// "10Gb/s") or plain numbers are read into one base unit and drawn on a
// number axis in the unit that suits their range ("MiB"); any other value
// (a policy name) leaves the axis one of names, in the order tried.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ssgd::html {

enum class QuantityKind { kSize, kDuration, kRate, kNumber };

struct Quantity {
  QuantityKind kind = QuantityKind::kNumber;
  double base = 0;  // bytes, ns, bytes/s, or the number
};

// `text` as a quantity, or none when it is not one.
std::optional<Quantity> parse_quantity(std::string_view text);

struct QuantityAxis {
  QuantityKind kind = QuantityKind::kNumber;
  double divisor = 1;  // base units per axis unit
  std::string unit;    // "MiB", "ms", "GB/s"; empty for plain numbers
};

// The axis for `values` (all of one kind, in base units): the largest unit
// the largest |value| reaches at least 1 of.
QuantityAxis quantity_axis(QuantityKind kind, const std::vector<double>& values);

// `base` as text in its kind's unit that suits it: "4.0 MiB", "1.500 ms",
// "12.5 GB/s", "3".
std::string quantity_text(const Quantity& q);

}  // namespace ssgd::html
