#pragma once
// The values of one swept key, written in a sweep grid as a range:
//
//   {from: 1, to: 16, step: 3}        1, 4, 7, 10, 13, 16       (linear, by step)
//   {from: 1, to: 64, factor: 2}      1, 2, 4, ..., 64          (geometric, by factor)
//   {from: 0.5, to: 2, count: 4}      0.5, 1, 1.5, 2            (count values, evenly spaced)
//   {from: 1, to: 100, count: 3, log: true}   1, 10, 100        (count values, log-spaced)
//
// Each range ends at the last value not past `to`. Values are text as --set
// takes them: whole numbers when from, to and step (or factor) are written as
// whole numbers, else decimals with 12 significant digits, so the same grid
// gives the same text on every machine.

#include <cstdint>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace ssgd::sim {

// At most this many values in one list or range.
inline constexpr std::int64_t kMaxSweepAxisValues = 100000;

// The values of the range `node` (a mapping) for `key`, given in `file`.
// Throws InputError naming the file, the line and the key.
std::vector<std::string> sweep_range_values(const YAML::Node& node, const std::string& file,
                                            const std::string& key);

}  // namespace ssgd::sim
