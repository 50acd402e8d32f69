#include "common/fixed_decimal.h"

#include <fmt/format.h>

#include <stdexcept>

namespace ssgd {

std::string format_fixed_decimal(std::int64_t value, int decimals) {
  if (decimals < 0 || decimals > 18) throw std::invalid_argument("format_fixed_decimal: decimals out of 0..18");
  std::uint64_t scale = 1;
  for (int i = 0; i < decimals; ++i) scale *= 10;
  // Unsigned, so that the most negative value has a magnitude too.
  const std::uint64_t a =
      value < 0 ? 0 - static_cast<std::uint64_t>(value) : static_cast<std::uint64_t>(value);
  const char* sign = value < 0 ? "-" : "";
  if (decimals == 0) return fmt::format("{}{}", sign, a);
  return fmt::format("{}{}.{:0{}}", sign, a / scale, a % scale, decimals);
}

}  // namespace ssgd
