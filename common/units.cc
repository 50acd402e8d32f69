#include "common/units.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "common/error.h"

namespace ssgd {
namespace {

// Quantities are parsed exactly: the number is read as a decimal integer
// mantissa and a count of fraction digits, and scaled by the unit in integer
// arithmetic, so "1.5ms" is exactly 1'500'000 ns and "0.1us" exactly 100 ns.
// Only rates, which are doubles by design, go through floating point, and
// then with one correctly rounded conversion.

__extension__ typedef __int128 Int128;  // GCC and Clang both provide it

// More fraction digits than this is not a measurement anyone writes, and
// keeps mantissa * scale inside 128 bits.
constexpr int kMaxFractionDigits = 24;
// Integer digits beyond this overflow int64 whatever the unit.
constexpr int kMaxIntegerDigits = 20;

struct Decimal {
  std::string_view integer_digits;   // leading zeros stripped, may be empty
  std::string_view fraction_digits;  // trailing zeros stripped, may be empty
  std::string_view unit;             // what follows the number and its optional space
};

// What a quantity kind accepts, for messages.
struct Kind {
  std::string_view noun;      // "duration"
  std::string_view accepted;  // "ns, us, µs, ms, s"
  std::string_view example;   // "1.5ms"
};

constexpr Kind kDurationKind{"duration", "ns, us, µs, ms, s", "1.5ms"};
constexpr Kind kBytesKind{"size", "B, kB, KB, MB, GB, TB, KiB, MiB, GiB, TiB", "64MiB"};
constexpr Kind kRateKind{"rate",
                         "B/s, kB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s, and bits per "
                         "second as kb/s, Mb/s, Gb/s, Tb/s, Gbit/s or Gbps",
                         "12GB/s"};

[[noreturn]] void fail(const Kind& kind, std::string_view text, std::string_view why) {
  throw std::invalid_argument(fmt::format("{} '{}': {}", kind.noun, bounded(text), why));
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Splits "1.50 ms" into digits and unit; rejects anything that is not a
// non-negative decimal number followed by at most one space.
Decimal split_decimal(const Kind& kind, std::string_view text) {
  if (text.empty()) {
    fail(kind, text, fmt::format("empty; expected a number and a unit such as '{}'", kind.example));
  }
  if (text.front() == '-') fail(kind, text, "must not be negative");
  std::size_t i = 0;
  const std::size_t int_begin = i;
  while (i < text.size() && is_digit(text[i])) ++i;
  std::string_view int_part = text.substr(int_begin, i - int_begin);
  std::string_view frac_part;
  if (i < text.size() && text[i] == '.') {
    ++i;
    const std::size_t frac_begin = i;
    while (i < text.size() && is_digit(text[i])) ++i;
    frac_part = text.substr(frac_begin, i - frac_begin);
  }
  if (int_part.empty() && frac_part.empty()) {
    fail(kind, text,
         fmt::format("does not start with a number; expected a number and a unit such as '{}'",
                     kind.example));
  }
  std::string_view unit = text.substr(i);
  if (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  if (unit.empty()) {
    fail(kind, text, fmt::format("missing unit; write one of {} (e.g. '{}')", kind.accepted,
                                 kind.example));
  }
  while (!int_part.empty() && int_part.front() == '0') int_part.remove_prefix(1);
  while (!frac_part.empty() && frac_part.back() == '0') frac_part.remove_suffix(1);
  if (static_cast<int>(int_part.size()) > kMaxIntegerDigits) fail(kind, text, "is too large");
  if (static_cast<int>(frac_part.size()) > kMaxFractionDigits) {
    fail(kind, text, fmt::format("has more than {} digits after the decimal point",
                                 kMaxFractionDigits));
  }
  return Decimal{int_part, frac_part, unit};
}

[[noreturn]] void fail_unit(const Kind& kind, std::string_view text, std::string_view unit) {
  fail(kind, text,
       fmt::format("unknown unit '{}'; write one of {} (e.g. '{}')", bounded(unit), kind.accepted,
                   kind.example));
}

Int128 digits_value(std::string_view digits) {
  Int128 v = 0;
  for (char c : digits) v = v * 10 + (c - '0');
  return v;
}

Int128 pow10(int n) {
  Int128 v = 1;
  for (int k = 0; k < n; ++k) v *= 10;
  return v;
}

// round(number * scale) to the nearest integer, halves away from zero, or
// a failure when it does not fit in int64.
std::int64_t scale_exactly(const Kind& kind, std::string_view text, const Decimal& d,
                           std::int64_t scale) {
  constexpr Int128 kMax = std::numeric_limits<std::int64_t>::max();
  const Int128 whole = digits_value(d.integer_digits) * scale;
  const int frac_digits = static_cast<int>(d.fraction_digits.size());
  const Int128 denom = pow10(frac_digits);
  const Int128 num = digits_value(d.fraction_digits) * scale;
  Int128 frac = num / denom;
  if ((num % denom) * 2 >= denom) ++frac;
  const Int128 total = whole + frac;
  if (whole > kMax || total > kMax) fail(kind, text, "is too large");
  return static_cast<std::int64_t>(total);
}

struct UnitScale {
  std::string_view name;
  std::int64_t scale;
};

constexpr std::int64_t kKi = 1024;
constexpr std::array kByteUnits = {
    UnitScale{"B", 1},
    UnitScale{"kB", 1'000},
    UnitScale{"KB", 1'000},
    UnitScale{"MB", 1'000'000},
    UnitScale{"GB", 1'000'000'000},
    UnitScale{"TB", 1'000'000'000'000},
    UnitScale{"KiB", kKi},
    UnitScale{"MiB", kKi * kKi},
    UnitScale{"GiB", kKi * kKi * kKi},
    UnitScale{"TiB", kKi * kKi * kKi * kKi},
};

constexpr std::array kDurationUnits = {
    UnitScale{"ns", 1},
    UnitScale{"us", 1'000},
    UnitScale{"\xC2\xB5s", 1'000},  // µs, MICRO SIGN
    UnitScale{"\xCE\xBCs", 1'000},  // μs, GREEK SMALL LETTER MU
    UnitScale{"ms", 1'000'000},
    UnitScale{"s", 1'000'000'000},
};

const UnitScale* find_unit(std::span<const UnitScale> units, std::string_view name) {
  for (const auto& u : units) {
    if (u.name == name) return &u;
  }
  return nullptr;
}

// A rate unit as decimal exponent, binary exponent and bit flag:
// value_bytes_per_s = number * 10^dec * 2^bin / (bits ? 8 : 1).
struct RateScale {
  int dec = 0;
  int bin = 0;
  bool bits = false;
};

std::optional<RateScale> find_rate_unit(std::string_view unit) {
  // Bytes per second: any byte unit followed by "/s".
  if (unit.size() > 2 && unit.substr(unit.size() - 2) == "/s") {
    const std::string_view bytes = unit.substr(0, unit.size() - 2);
    if (const auto* u = find_unit(kByteUnits, bytes)) {
      RateScale r;
      std::int64_t s = u->scale;
      const bool binary = bytes.size() == 3;  // "KiB" ...
      while (s > 1) {
        s /= binary ? 1024 : 1000;
        if (binary) r.bin += 10; else r.dec += 3;
      }
      return r;
    }
  }
  // Bits per second: an SI prefix then "b/s", "bit/s" or "bps".
  constexpr std::array kBitSuffixes = {std::string_view("b/s"), std::string_view("bit/s"),
                                       std::string_view("bps")};
  for (std::string_view suffix : kBitSuffixes) {
    if (unit.size() < suffix.size() || unit.substr(unit.size() - suffix.size()) != suffix) continue;
    const std::string_view prefix = unit.substr(0, unit.size() - suffix.size());
    RateScale r;
    r.bits = true;
    if (prefix.empty()) r.dec = 0;
    else if (prefix == "k" || prefix == "K") r.dec = 3;
    else if (prefix == "M") r.dec = 6;
    else if (prefix == "G") r.dec = 9;
    else if (prefix == "T") r.dec = 12;
    else return std::nullopt;
    return r;
  }
  return std::nullopt;
}

// round-half-away-from-zero of a / b for b > 0, in int64.
std::int64_t div_round(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  const std::int64_t r = a % b;
  if (r * 2 >= b) return q + 1;
  if (r * 2 <= -b) return q - 1;
  return q;
}

}  // namespace

Duration parse_duration(std::string_view text) {
  const Decimal d = split_decimal(kDurationKind, text);
  const auto* unit = find_unit(kDurationUnits, d.unit);
  if (unit == nullptr) fail_unit(kDurationKind, text, d.unit);
  return Duration(scale_exactly(kDurationKind, text, d, unit->scale));
}

std::int64_t parse_bytes(std::string_view text) {
  const Decimal d = split_decimal(kBytesKind, text);
  const auto* unit = find_unit(kByteUnits, d.unit);
  if (unit == nullptr) fail_unit(kBytesKind, text, d.unit);
  return scale_exactly(kBytesKind, text, d, unit->scale);
}

double parse_rate_bytes_per_s(std::string_view text) {
  const Decimal d = split_decimal(kRateKind, text);
  const auto scale = find_rate_unit(d.unit);
  if (!scale) fail_unit(kRateKind, text, d.unit);
  // "<integer digits><fraction digits>e<exponent>" is the same number with
  // the decimal scale folded in; from_chars rounds it correctly once, and the
  // binary scale and the /8 for bits are exact.
  // A leading "0" keeps the text a number when both digit runs are empty ("0GB/s").
  const std::string digits =
      fmt::format("0{}{}e{}", d.integer_digits, d.fraction_digits,
                  scale->dec - static_cast<int>(d.fraction_digits.size()));
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size() || !std::isfinite(value)) {
    fail(kRateKind, text, "is too large");
  }
  value = std::ldexp(value, scale->bin);
  if (scale->bits) value /= 8;
  if (!std::isfinite(value)) fail(kRateKind, text, "is too large");
  return value;
}

std::string format_duration(Duration d) {
  const std::int64_t ns = d.ns();
  if (ns == std::numeric_limits<std::int64_t>::min()) return fmt::format("{} ns", ns);
  const std::string sign = ns < 0 ? "-" : "";
  const std::int64_t a = ns < 0 ? -ns : ns;
  if (a < 1'000) return fmt::format("{}{} ns", sign, a);
  // Three decimals in the largest unit the value reaches; thousandths are
  // computed in integers so "999.9996 us" rolls over to "1.000 ms".
  constexpr std::array<std::pair<std::int64_t, std::string_view>, 3> kUnits = {
      {{1'000, "us"}, {1'000'000, "ms"}, {1'000'000'000, "s"}}};
  for (std::size_t k = 0; k < kUnits.size(); ++k) {
    const auto [unit_ns, name] = kUnits[k];
    const std::int64_t thousandths = div_round(a, unit_ns / 1'000);
    if (thousandths < 1'000'000 || k + 1 == kUnits.size()) {
      return fmt::format("{}{}.{:03} {}", sign, thousandths / 1'000, thousandths % 1'000, name);
    }
  }
  return {};  // unreachable: the last unit always returns
}

std::string format_bytes(std::int64_t bytes) {
  if (bytes == std::numeric_limits<std::int64_t>::min()) return fmt::format("{} B", bytes);
  const std::string sign = bytes < 0 ? "-" : "";
  const std::int64_t a = bytes < 0 ? -bytes : bytes;
  if (a < 1024) return fmt::format("{}{} B", sign, a);
  constexpr std::array<std::string_view, 5> kUnits = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(a);
  for (std::size_t k = 0; k < kUnits.size(); ++k) {
    v /= 1024;
    // Compare after rounding to one decimal, so 1023.96 KiB prints as 1.0 MiB.
    if (std::round(v * 10) < 1024 * 10 || k + 1 == kUnits.size()) {
      return fmt::format("{}{:.1f} {}", sign, v, kUnits[k]);
    }
  }
  return {};  // unreachable
}

std::string format_rate(double bytes_per_s) {
  if (!std::isfinite(bytes_per_s)) return fmt::format("{} B/s", bytes_per_s);
  const std::string sign = bytes_per_s < 0 ? "-" : "";
  double v = std::fabs(bytes_per_s);
  constexpr std::array<std::string_view, 5> kUnits = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s"};
  for (std::size_t k = 0; k < kUnits.size(); ++k) {
    if (std::round(v * 10) < 1000 * 10 || k + 1 == kUnits.size()) {
      return fmt::format("{}{:.1f} {}", sign, v, kUnits[k]);
    }
    v /= 1000;
  }
  return {};  // unreachable
}

std::string exact_bytes_text(std::int64_t bytes) {
  constexpr std::array<std::pair<std::int64_t, std::string_view>, 4> kUnits = {
      {{std::int64_t{1} << 40, "TiB"},
       {std::int64_t{1} << 30, "GiB"},
       {std::int64_t{1} << 20, "MiB"},
       {1024, "KiB"}}};
  for (const auto& [scale, unit] : kUnits) {
    if (bytes != 0 && bytes % scale == 0) return fmt::format("{}{}", bytes / scale, unit);
  }
  return fmt::format("{}B", bytes);
}

std::vector<std::string_view> split_list(std::string_view text, char separator) {
  std::vector<std::string_view> items;
  std::size_t pos = 0;
  while (true) {
    const auto comma = text.find(separator, pos);
    items.push_back(text.substr(pos, comma == std::string_view::npos ? text.npos : comma - pos));
    if (comma == std::string_view::npos) return items;
    pos = comma + 1;
  }
}

}  // namespace ssgd
