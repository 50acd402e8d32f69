#pragma once
// Simulated and captured time: strong types over int64 nanoseconds.
//
// Every time in ssgd is an integer count of nanoseconds. Rates are doubles in
// bytes per second and turn into a Duration in exactly one place,
// duration_from_seconds(), which rounds to the nearest nanosecond.

#include <compare>
#include <cstdint>
#include <limits>

namespace ssgd {

class Duration {
 public:
  constexpr Duration() = default;
  constexpr explicit Duration(std::int64_t ns) : ns_(ns) {}
  static constexpr Duration zero() { return Duration(0); }
  static constexpr Duration max() { return Duration(std::numeric_limits<std::int64_t>::max()); }

  [[nodiscard]] constexpr std::int64_t ns() const { return ns_; }

  constexpr Duration& operator+=(Duration o) { ns_ += o.ns_; return *this; }
  constexpr Duration& operator-=(Duration o) { ns_ -= o.ns_; return *this; }
  friend constexpr Duration operator+(Duration a, Duration b) { return Duration(a.ns_ + b.ns_); }
  friend constexpr Duration operator-(Duration a, Duration b) { return Duration(a.ns_ - b.ns_); }
  friend constexpr Duration operator*(Duration a, std::int64_t k) { return Duration(a.ns_ * k); }
  friend constexpr Duration operator*(std::int64_t k, Duration a) { return Duration(a.ns_ * k); }
  friend constexpr auto operator<=>(Duration, Duration) = default;

 private:
  std::int64_t ns_ = 0;
};

class Time {
 public:
  constexpr Time() = default;
  constexpr explicit Time(std::int64_t ns) : ns_(ns) {}
  static constexpr Time zero() { return Time(0); }

  [[nodiscard]] constexpr std::int64_t ns() const { return ns_; }

  friend constexpr Time operator+(Time t, Duration d) { return Time(t.ns_ + d.ns()); }
  friend constexpr Time operator-(Time t, Duration d) { return Time(t.ns_ - d.ns()); }
  friend constexpr Duration operator-(Time a, Time b) { return Duration(a.ns_ - b.ns_); }
  friend constexpr auto operator<=>(Time, Time) = default;

 private:
  std::int64_t ns_ = 0;
};

constexpr Time max(Time a, Time b) { return a < b ? b : a; }
constexpr Duration max(Duration a, Duration b) { return a < b ? b : a; }

// The one rounding function from floating-point seconds to a Duration:
// round half away from zero to the nearest nanosecond. Throws
// std::out_of_range for values that do not fit or are not finite.
Duration duration_from_seconds(double seconds);

// A duration multiplied by a floating-point factor (a what-if speed factor),
// rounded the same way: half away from zero to the nearest nanosecond.
// Throws std::out_of_range when the product does not fit or is not finite.
Duration scale(Duration d, double factor);

}  // namespace ssgd
