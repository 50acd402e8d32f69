#include "simulator/perturb/compute_perturbation.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "common/error.h"

namespace ssgd::sim {
namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool matches(const LayerFactor& f, const trace::LayerRow& row) {
  if (all_digits(f.pattern)) return f.pattern == std::to_string(row.layer);
  return glob_match(f.pattern, row.name);
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative matching with one backtrack point: the last '*' seen.
  std::size_t p = 0, t = 0;
  std::size_t star = std::string_view::npos, star_text = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_text = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++star_text;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

trace::LayerProfile perturbed_profile(const trace::LayerProfile& profile, const Perturbation& p) {
  std::vector<bool> used(p.layer_factors.size(), false);
  trace::LayerProfile out = profile;
  const double nccl = p.class_factors[static_cast<std::size_t>(KernelClass::kNccl)];
  for (auto& row : out.layers) {
    double f = p.compute_time_factor;
    for (std::size_t k = 0; k < p.layer_factors.size(); ++k) {
      if (matches(p.layer_factors[k], row)) {
        f *= p.layer_factors[k].factor;
        used[k] = true;
      }
    }
    f *= p.class_factors[static_cast<std::size_t>(classify_kernel(row.name))];
    if (p.mixed_precision) {
      f /= p.mixed_precision_speedup;
      row.grad_bytes = (row.grad_bytes + 1) / 2;
    }
    if (f != 1) {
      row.forward = scale(row.forward, f);
      row.backward = scale(row.backward, f);
    }
    if (row.comm && nccl != 1) row.comm = scale(*row.comm, nccl);
  }
  for (std::size_t k = 0; k < used.size(); ++k) {
    if (!used[k]) {
      // Located at the key by the replay (with_located_errors).
      throw ParameterError("perturb.layer_factors", fmt::format(
          "pattern '{}' matches no layer of {} ({} layers; a pattern is a "
          "name glob with * and ?, or a number from the profile's layer column)",
          bounded(p.layer_factors[k].pattern),
          profile.source.empty() ? "the profile" : bounded(profile.source),
          profile.layers.size()));
    }
  }
  return out;
}

std::vector<double> rank_compute_factors(const Perturbation& p, std::int64_t workers) {
  std::vector<double> factor(static_cast<std::size_t>(workers), 1.0);
  if (workers > 1 && p.imbalance > 0) {
    for (std::int64_t r = 0; r < workers; ++r) {
      factor[static_cast<std::size_t>(r)] =
          1 + p.imbalance * (2.0 * static_cast<double>(r) / static_cast<double>(workers - 1) - 1.0);
    }
  }
  for (const auto& s : p.stragglers) {
    if (s.rank >= workers) {
      throw ParameterError("perturb.stragglers", fmt::format(
          "rank {} is out of range: the job has {} worker{} (ranks 0..{})",
          s.rank, workers, workers == 1 ? "" : "s", workers - 1));
    }
    factor[static_cast<std::size_t>(s.rank)] *= 1 + s.percent / 100;
  }
  return factor;
}

RankClasses rank_classes(const std::vector<double>& rank_factor) {
  RankClasses c;
  c.of_rank.reserve(rank_factor.size());
  std::map<double, std::uint32_t> index;
  for (const double f : rank_factor) {
    const auto [it, added] = index.try_emplace(f, static_cast<std::uint32_t>(c.factor.size()));
    if (added) {
      c.factor.push_back(f);
      c.size.push_back(0);
    }
    c.of_rank.push_back(it->second);
    ++c.size[it->second];
  }
  return c;
}

}  // namespace ssgd::sim
