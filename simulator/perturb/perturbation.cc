#include "simulator/perturb/perturbation.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <set>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "common/error.h"
#include "common/units.h"

namespace ssgd::sim {
namespace {

// Bounds far beyond any real what-if: a typo fails here, not as an
// overflow of the simulated clock.
constexpr double kMaxFactor = 1000;
constexpr double kMaxStragglerPercent = 10000;
constexpr std::int64_t kMaxRank = 1'073'741'824;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool is_none(std::string_view v) { return trim(v) == "none"; }

// "name:number" split at the last ':'; `what` names the expected form.
std::pair<std::string_view, std::string_view> split_item(std::string_view item, std::size_t index,
                                                         std::string_view what) {
  const auto colon = item.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == item.size()) {
    throw std::invalid_argument(
        fmt::format("item {} of the list: expected {}, got '{}'", index, what, bounded(item)));
  }
  return {trim(item.substr(0, colon)), trim(item.substr(colon + 1))};
}

template <typename F>
auto in_item(std::size_t index, std::string_view item, F&& parse) {
  try {
    return parse();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(
        fmt::format("item {} of the list ('{}'): {}", index, bounded(item), e.what()));
  }
}

std::int64_t parse_rank(std::string_view v) {
  std::int64_t r = 0;
  const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), r);
  if (ec != std::errc() || ptr != v.data() + v.size() || v.empty()) {
    throw std::invalid_argument(fmt::format("expected a rank (an integer), got '{}'", bounded(v)));
  }
  if (r < 0 || r > kMaxRank) {
    throw std::invalid_argument(fmt::format("rank must be between 0 and {}, got {}", kMaxRank, r));
  }
  return r;
}

std::string format_factor(double f) { return fmt::format("{:g}", f); }

}  // namespace

const char* to_string(JitterKind kind) {
  switch (kind) {
    case JitterKind::kNone: return "none";
    case JitterKind::kNormal: return "normal";
    case JitterKind::kUniform: return "uniform";
    case JitterKind::kLognormal: return "lognormal";
  }
  return "?";
}

bool Perturbation::varies_by_rank() const {
  return !stragglers.empty() || imbalance > 0 || jitter.kind != JitterKind::kNone;
}

bool Perturbation::ranks_fold_by_class() const {
  return jitter.kind == JitterKind::kNone || jitter_per_class;
}

bool Perturbation::active() const {
  Perturbation defaults;
  defaults.seed = seed;
  defaults.repeats = repeats;
  defaults.jitter_per_class = jitter_per_class;  // says nothing without jitter
  return !(*this == defaults);
}

double parse_factor(std::string_view value, double lo, double hi, bool lo_open) {
  const std::string_view v = trim(value);
  double d = 0;
  const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
  if (ec != std::errc() || ptr != v.data() + v.size() || v.empty() || !std::isfinite(d)) {
    throw std::invalid_argument(fmt::format("expected a number, got '{}'", bounded(v)));
  }
  if ((lo_open ? !(d > lo) : !(d >= lo)) || d > hi) {
    throw std::invalid_argument(fmt::format("must be {} {} and at most {}, got {}",
                                            lo_open ? "greater than" : "at least", lo, hi, v));
  }
  return d;
}

std::vector<LayerFactor> parse_layer_factors(std::string_view value) {
  std::vector<LayerFactor> out;
  if (is_none(value)) return out;
  for (std::string_view raw : split_list(value)) {
    const std::string_view item = trim(raw);
    const std::size_t index = out.size() + 1;
    const auto [pattern, factor] =
        split_item(item, index, "pattern:factor, e.g. conv1:2 or layer4.*:0.5");
    out.push_back({std::string(pattern),
                   in_item(index, item, [&, factor = factor] { return parse_factor(factor, 0, kMaxFactor, true); })});
  }
  return out;
}

namespace {

// "name:factor,..." into one factor per name (1 where not given). `index_of`
// finds a name's slot; `noun` ("kernel class") and `short_noun` ("class")
// name them in messages, with `known` listing the valid names.
template <std::size_t N>
std::array<double, N> parse_named_factors(
    std::string_view value, std::string_view form, std::string_view noun,
    std::string_view short_noun, const std::string& known,
    const std::function<std::optional<std::size_t>(std::string_view)>& index_of, bool above_zero) {
  std::array<double, N> out;
  out.fill(1.0);
  if (is_none(value)) return out;
  std::set<std::string_view> seen;
  std::size_t index = 0;
  for (std::string_view raw : split_list(value)) {
    const std::string_view item = trim(raw);
    ++index;
    const auto [name, factor] = split_item(item, index, form);
    const std::optional<std::size_t> slot = index_of(name);
    if (!slot) {
      throw std::invalid_argument(fmt::format("item {} of the list: unknown {} '{}'; known: {}",
                                              index, noun, bounded(name), known));
    }
    if (!seen.insert(name).second) {
      throw std::invalid_argument(
          fmt::format("item {} of the list: {} '{}' given twice", index, short_noun, bounded(name)));
    }
    out[*slot] = in_item(index, item, [&, factor = factor] { return parse_factor(factor, 0, kMaxFactor, above_zero); });
  }
  return out;
}

}  // namespace

std::array<double, kKernelClassCount> parse_class_factors(std::string_view value) {
  return parse_named_factors<kKernelClassCount>(
      value, "class:factor, e.g. gemm:0.5", "kernel class", "class", kernel_class_names(),
      [](std::string_view name) -> std::optional<std::size_t> {
        const auto c = parse_kernel_class(name);
        if (!c) return std::nullopt;
        return static_cast<std::size_t>(*c);
      },
      true);
}

std::array<double, kLinkKindCount> parse_link_factors(std::string_view value, bool latency) {
  // A latency may go to zero; a bandwidth may not.
  return parse_named_factors<kLinkKindCount>(
      value, "kind:factor, e.g. nic:0.5", "link kind", "kind", "pcie, socket, nvlink, nic, fabric",
      [](std::string_view name) -> std::optional<std::size_t> {
        for (std::size_t k = 0; k < kLinkKindCount; ++k) {
          if (name == to_string(static_cast<LinkKind>(k))) return k;
        }
        return std::nullopt;
      },
      !latency);
}

std::vector<Straggler> parse_stragglers(std::string_view value) {
  std::vector<Straggler> out;
  if (is_none(value)) return out;
  for (std::string_view raw : split_list(value)) {
    const std::string_view item = trim(raw);
    const std::size_t index = out.size() + 1;
    const auto [rank, percent] = split_item(item, index, "rank:percent, e.g. 3:20");
    Straggler s;
    s.rank = in_item(index, item, [&, rank = rank] { return parse_rank(rank); });
    s.percent = in_item(index, item, [&, percent = percent] { return parse_factor(percent, 0, kMaxStragglerPercent, false); });
    for (const auto& other : out) {
      if (other.rank == s.rank) {
        throw std::invalid_argument(
            fmt::format("item {} of the list: rank {} given twice", index, s.rank));
      }
    }
    out.push_back(s);
  }
  return out;
}

JitterSpec parse_jitter(std::string_view value) {
  const std::string_view v = trim(value);
  if (v == "none") return {};
  const auto colon = v.find(':');
  const std::string_view name = colon == std::string_view::npos ? v : v.substr(0, colon);
  JitterSpec j;
  double hi = 1;
  if (name == "normal") {
    j.kind = JitterKind::kNormal;
  } else if (name == "uniform") {
    j.kind = JitterKind::kUniform;
  } else if (name == "lognormal") {
    j.kind = JitterKind::kLognormal;
    hi = 3;
  } else {
    throw std::invalid_argument(fmt::format(
        "unknown jitter '{}'; expected none, normal:<cv>, uniform:<half-width> or lognormal:<sigma>",
        bounded(v)));
  }
  if (colon == std::string_view::npos) {
    throw std::invalid_argument(fmt::format("{} jitter needs its spread, e.g. {}:0.05", name, name));
  }
  try {
    j.spread = parse_factor(v.substr(colon + 1), 0, hi, false);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("{} jitter's spread: {}", name, e.what()));
  }
  return j;
}

std::string describe(const Perturbation& p) {
  std::vector<std::string> parts;
  if (p.compute_time_factor != 1) parts.push_back(fmt::format("compute x{}", format_factor(p.compute_time_factor)));
  for (const auto& l : p.layer_factors) parts.push_back(fmt::format("layer {} x{}", l.pattern, format_factor(l.factor)));
  for (int k = 0; k < kKernelClassCount; ++k) {
    const double f = p.class_factors[static_cast<std::size_t>(k)];
    if (f != 1) parts.push_back(fmt::format("{} x{}", to_string(static_cast<KernelClass>(k)), format_factor(f)));
  }
  if (p.mixed_precision) {
    parts.push_back(fmt::format("mixed precision (compute /{}, gradients halved)",
                                format_factor(p.mixed_precision_speedup)));
  }
  for (int k = 0; k < kLinkKindCount; ++k) {
    const auto i = static_cast<std::size_t>(k);
    const char* kind = to_string(static_cast<LinkKind>(k));
    if (p.bandwidth_factors[i] != 1) parts.push_back(fmt::format("{} bandwidth x{}", kind, format_factor(p.bandwidth_factors[i])));
    if (p.latency_factors[i] != 1) parts.push_back(fmt::format("{} latency x{}", kind, format_factor(p.latency_factors[i])));
  }
  for (const auto& s : p.stragglers) parts.push_back(fmt::format("rank {} +{}%", s.rank, format_factor(s.percent)));
  if (p.imbalance > 0) parts.push_back(fmt::format("imbalance {}", format_factor(p.imbalance)));
  if (p.jitter.kind != JitterKind::kNone) {
    parts.push_back(fmt::format("jitter {}:{} seed {}{}", to_string(p.jitter.kind),
                                format_factor(p.jitter.spread), p.seed,
                                p.jitter_per_class ? " (one draw a class of ranks)" : ""));
  }
  std::string out;
  for (const auto& part : parts) {
    if (!out.empty()) out += ", ";
    out += part;
  }
  return out;
}

}  // namespace ssgd::sim
