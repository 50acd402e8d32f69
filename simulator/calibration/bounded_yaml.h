#pragma once
// The bound every YAML file ssgd reads gets before yaml-cpp builds its nodes
// (scenarios and sweep grids through simulator/scenario/yaml_file.h,
// network calibrations): docs/reliability.md, "bounded readers".

#include <cstdint>
#include <string>
#include <string_view>

namespace ssgd::sim {

// A YAML file is parsed into yaml-cpp's nodes, a few hundred bytes each:
// before that, a pass that builds nothing refuses text of more than
// kMaxYamlValues values (scalars, aliases, sequences and mappings, keys
// included) or nested deeper than kMaxYamlDepth, naming the file and the
// line where the limit was passed. A run of "- " lines or "{}," (a byte or
// three per value) would otherwise cost about 150 bytes of memory per byte
// of the file. Scenarios, grids and calibrations hold hundreds of values.
inline constexpr std::int64_t kMaxYamlValues = 100000;
inline constexpr int kMaxYamlDepth = 64;
// `what` names the kind of file ("scenario file").
void require_bounded_yaml(const std::string& text, const std::string& file, std::string_view what);

}  // namespace ssgd::sim
