#pragma once
// One YAML document read from a file the user gave (a scenario, a sweep
// grid), with the checks every such file gets: a regular file, readable,
// UTF-8, valid YAML, exactly one document. Errors are InputErrors naming the
// file and, where the parser knows it, the line.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

namespace ssgd::sim {

// `what` names the kind of file in messages ("scenario file"); `empty_hint`
// says what the file should hold when it is empty ("a mapping of scenario
// keys such as 'cluster:'").
YAML::Node read_yaml_file(const std::filesystem::path& path, std::string_view what,
                          std::string_view empty_hint);

// The 1-based line of a YAML mark, when it has one.
std::optional<std::int64_t> yaml_line(const YAML::Mark& mark);

// "a mapping", "the scalar '4'", "nothing (null)": what a node is, for messages.
std::string describe_yaml_node(const YAML::Node& node);

}  // namespace ssgd::sim
