#pragma once
// "Did you mean": the nearest of a set of names to one a user mistyped (a
// command, a flag, a preset, a scenario key).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ssgd {

// Levenshtein distance; both are short names (the callers bound them).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest `wanted`, if near enough to suggest: one that starts
// with it (at least 3 characters: "ib_ndr" for "ib_ndr400"), else the one
// fewest edits away, within max(2, size / 4), among those with the same
// digits (40gbe is not near 10gbe). Ties go to the first. Nothing for a name
// longer than kMaxEchoBytes (common/error.h).
std::optional<std::string_view> nearest_name(std::string_view wanted,
                                             const std::vector<std::string_view>& candidates);

// " (did you mean 'NAME'?)", or "" when nothing is near.
std::string did_you_mean(std::string_view wanted, const std::vector<std::string_view>& candidates);

}  // namespace ssgd
