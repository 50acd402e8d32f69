#include "common/suggest.h"

#include <algorithm>

#include "common/error.h"

namespace ssgd {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

namespace {

std::string digits_of(std::string_view s) {
  std::string d;
  for (const char c : s) {
    if (c >= '0' && c <= '9') d += c;
  }
  return d;
}

}  // namespace

std::optional<std::string_view> nearest_name(std::string_view wanted,
                                             const std::vector<std::string_view>& candidates) {
  if (wanted.empty() || wanted.size() > kMaxEchoBytes) return std::nullopt;
  std::optional<std::string_view> best;
  std::size_t best_distance = std::string_view::npos;
  const std::string digits = digits_of(wanted);
  for (const std::string_view c : candidates) {
    if (c == wanted) return c;
    const bool prefix = wanted.size() >= 3 && c.starts_with(wanted);
    // Another number is another thing (40gbe is not 10gbe): near by edits
    // only with the same digits.
    if (!prefix && digits_of(c) != digits) continue;
    const std::size_t d = prefix ? 1 : edit_distance(wanted, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  if (best && best_distance <= std::max<std::size_t>(2, wanted.size() / 4)) return best;
  return std::nullopt;
}

std::string did_you_mean(std::string_view wanted, const std::vector<std::string_view>& candidates) {
  const auto best = nearest_name(wanted, candidates);
  return best ? " (did you mean '" + std::string(*best) + "'?)" : std::string();
}

}  // namespace ssgd
