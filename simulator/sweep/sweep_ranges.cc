#include "simulator/sweep/sweep_ranges.h"

#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "common/checked_math.h"
#include "common/error.h"
#include "simulator/scenario/yaml_file.h"

namespace ssgd::sim {
namespace {

struct RangeReader {
  const YAML::Node& node;
  const std::string& file;
  const std::string& key;

  [[nodiscard]] InputError error(const YAML::Node& at, const std::string& why) const {
    return InputError({file, yaml_line(at.Mark()), std::nullopt, key}, why);
  }

  // A numeric field of the range, and whether it was written as a whole number.
  struct Number {
    double value = 0;
    std::optional<std::int64_t> whole;
  };

  std::optional<Number> number(const char* name) const {
    const YAML::Node field = node[name];
    if (!field) return std::nullopt;
    if (!field.IsScalar()) {
      throw error(field, fmt::format("range field '{}': expected a number, got {}", name,
                                     describe_yaml_node(field)));
    }
    const std::string& text = field.Scalar();
    Number n;
    std::int64_t whole = 0;
    const char* end = text.data() + text.size();
    if (auto [p, ec] = std::from_chars(text.data(), end, whole); ec == std::errc() && p == end) {
      n.whole = whole;
      n.value = static_cast<double>(whole);
      return n;
    }
    if (auto [p, ec] = std::from_chars(text.data(), end, n.value);
        ec != std::errc() || p != end || !std::isfinite(n.value)) {
      throw error(field,
                  fmt::format("range field '{}': expected a finite number, got '{}'", name, text));
    }
    return n;
  }

  Number required(const char* name) const {
    if (auto n = number(name)) return *n;
    throw error(node, fmt::format("a range needs '{}' (a range is {{from, to, step}}, "
                                  "{{from, to, factor}} or {{from, to, count[, log: true]}})",
                                  name));
  }

  bool flag(const char* name) const {
    const YAML::Node field = node[name];
    if (!field) return false;
    if (field.IsScalar() && (field.Scalar() == "true" || field.Scalar() == "false")) {
      return field.Scalar() == "true";
    }
    throw error(field, fmt::format("range field '{}': expected true or false, got {}", name,
                                   describe_yaml_node(field)));
  }

  void check_count(std::size_t n) const {
    if (static_cast<std::int64_t>(n) >= kMaxSweepAxisValues) {
      throw error(node, fmt::format("the range gives more than {} values", kMaxSweepAxisValues));
    }
  }
};

std::string decimal(double v) {
  if (v == 0) v = 0;  // no "-0"
  return fmt::format("{:.12g}", v);
}

}  // namespace

std::vector<std::string> sweep_range_values(const YAML::Node& node, const std::string& file,
                                            const std::string& key) {
  const RangeReader r{node, file, key};
  static const std::set<std::string> kFields{"from", "to", "step", "factor", "count", "log"};
  for (const auto& field : node) {
    const std::string name = field.first.IsScalar() ? field.first.Scalar() : std::string();
    if (!kFields.contains(name)) {
      throw r.error(field.first, fmt::format("unknown range field '{}' (a range has from, to, and "
                                             "one of step, factor or count, with log)",
                                             name));
    }
  }
  const auto from = r.required("from");
  const auto to = r.required("to");
  const auto step = r.number("step");
  const auto factor = r.number("factor");
  const auto count = r.number("count");
  const bool log = r.flag("log");
  if ((step ? 1 : 0) + (factor ? 1 : 0) + (count ? 1 : 0) != 1) {
    throw r.error(node, "a range has exactly one of step, factor or count");
  }
  if (log && !count) throw r.error(node, "'log: true' goes with count");
  if (to.value < from.value) {
    throw r.error(node, fmt::format("'to' ({}) is less than 'from' ({})", decimal(to.value),
                                    decimal(from.value)));
  }
  std::vector<std::string> values;
  if (step) {
    if (!(step->value > 0)) throw r.error(node, "'step' must be greater than 0");
    // Refused before any value is made: a step range past the limit would
    // otherwise format 100,000 values first (found by fuzz/sweep_grid_fuzzer).
    const double estimate = (to.value - from.value) / step->value;
    if (!(estimate < static_cast<double>(kMaxSweepAxisValues))) {
      r.check_count(static_cast<std::size_t>(kMaxSweepAxisValues));
    }
    if (from.whole && to.whole && step->whole) {
      for (std::int64_t v = *from.whole; v <= *to.whole;) {
        r.check_count(values.size());
        values.push_back(std::to_string(v));
        const auto next = checked_add(v, *step->whole);
        if (!next) break;
        v = *next;
      }
    } else {
      const double slack = step->value * 1e-9;
      for (std::int64_t i = 0;; ++i) {
        const double v = from.value + static_cast<double>(i) * step->value;
        if (v > to.value + slack) break;
        r.check_count(values.size());
        values.push_back(decimal(v));
      }
    }
  } else if (factor) {
    if (!(from.value > 0)) throw r.error(node, "a range by factor needs 'from' greater than 0");
    if (!(factor->value > 1)) throw r.error(node, "'factor' must be greater than 1");
    const double estimate = std::log(to.value / from.value) / std::log(factor->value);
    if (!(estimate < static_cast<double>(kMaxSweepAxisValues))) {
      r.check_count(static_cast<std::size_t>(kMaxSweepAxisValues));
    }
    if (from.whole && to.whole && factor->whole) {
      for (std::int64_t v = *from.whole; v <= *to.whole;) {
        r.check_count(values.size());
        values.push_back(std::to_string(v));
        const auto next = checked_mul(v, *factor->whole);
        if (!next) break;
        v = *next;
      }
    } else {
      const double slack = 1 + 1e-9;
      for (double v = from.value; v <= to.value * slack; v *= factor->value) {
        r.check_count(values.size());
        values.push_back(decimal(v));
      }
    }
  } else {
    if (!count->whole || *count->whole < 1 || *count->whole > kMaxSweepAxisValues) {
      throw r.error(node, fmt::format("'count' must be a whole number from 1 to {}",
                                      kMaxSweepAxisValues));
    }
    const std::int64_t n = *count->whole;
    if (log && !(from.value > 0)) throw r.error(node, "a log range needs 'from' greater than 0");
    for (std::int64_t i = 0; i < n; ++i) {
      const double t = n == 1 ? 0.0 : static_cast<double>(i) / static_cast<double>(n - 1);
      const double v = log ? from.value * std::pow(to.value / from.value, t)
                           : from.value + t * (to.value - from.value);
      values.push_back(i == n - 1 && n > 1 ? decimal(to.value) : decimal(v));
    }
  }
  return values;
}

}  // namespace ssgd::sim
