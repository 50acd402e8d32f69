#include "simulator/sweep/sweep_grid.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "common/checked_math.h"
#include "common/error.h"
#include "common/input_file.h"
#include "simulator/scenario/yaml_file.h"
#include "simulator/sweep/sweep_ranges.h"

namespace ssgd::sim {
namespace {

class GridReader {
 public:
  GridReader(SweepGrid& grid, std::filesystem::path folder)
      : grid_(grid), folder_(std::move(folder)) {}

  void read(const YAML::Node& root) {
    if (!root.IsMap()) {
      throw error(root, "", fmt::format("expected a mapping with input, grid and the like, got {}",
                                        describe_yaml_node(root)));
    }
    static const std::set<std::string> kTop{"input", "scenario", "set", "grid", "zip"};
    std::set<std::string> seen;
    for (const auto& entry : root) {
      const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : std::string();
      if (!kTop.contains(name)) {
        throw error(entry.first, name,
                    fmt::format("unknown key '{}' (a sweep grid has input, scenario, set, grid "
                                "and zip)",
                                name));
      }
      if (!seen.insert(name).second) throw error(entry.first, name, "duplicate key");
    }
    grid_.input = path_field(root, "input", true).value();
    grid_.input_line = yaml_line(root["input"].Mark());
    grid_.scenario = path_field(root, "scenario", false);
    if (grid_.scenario) grid_.scenario_line = yaml_line(root["scenario"].Mark());
    if (const YAML::Node set = root["set"]) read_set(set);
    if (const YAML::Node g = root["grid"]) read_grid(g);
    if (const YAML::Node z = root["zip"]) read_zip(z);
    if (grid_.axes.empty()) {
      throw error(root, "grid", "nothing to sweep: give at least one key under 'grid' or 'zip'");
    }
    std::int64_t points = 1;
    for (const SweepAxis& axis : grid_.axes) {
      const auto product = checked_mul(points, static_cast<std::int64_t>(axis.values.size()));
      if (!product || *product > kMaxSweepPoints) {
        throw error(root, "grid",
                    fmt::format("the grid has more than {} points", kMaxSweepPoints));
      }
      points = *product;
    }
  }

 private:
  [[nodiscard]] InputError error(const YAML::Node& at, const std::string& field,
                                 const std::string& why) const {
    return InputError({grid_.file, yaml_line(at.Mark()), std::nullopt, field}, why);
  }

  std::optional<std::filesystem::path> path_field(const YAML::Node& root, const char* name,
                                                  bool required) {
    const YAML::Node field = root[name];
    if (!field) {
      if (!required) return std::nullopt;
      throw error(root, name, "missing: the input to replay (a trace, a layer-profile CSV or a "
                              "B-Caffe log), relative to the grid file");
    }
    if (!field.IsScalar() || field.Scalar().empty()) {
      throw error(field, name, fmt::format("expected a path, got {}", describe_yaml_node(field)));
    }
    std::filesystem::path p = field.Scalar();
    return p.is_relative() ? folder_ / p : p;
  }

  // A key swept or set: a dotted scenario key, given once in the whole grid.
  std::string key_of(const YAML::Node& node, const std::string& section) {
    if (!node.IsScalar() || node.Scalar().empty()) {
      throw error(node, section,
                  fmt::format("keys must be scenario keys such as cluster.nodes, got {}",
                              describe_yaml_node(node)));
    }
    const std::string& key = node.Scalar();
    if (key.find('=') != std::string::npos) {
      throw error(node, key, "a key holds no '='; write 'key: value'");
    }
    if (key == "jobs" || key.starts_with("jobs.")) {
      throw error(node, key, "jobs cannot be swept; give them in the scenario file");
    }
    if (!grid_.lines.emplace(key, yaml_line(node.Mark()).value_or(0)).second) {
      throw error(node, key, "given twice in the grid (under set, grid or zip)");
    }
    return key;
  }

  std::string scalar_value(const YAML::Node& node, const std::string& key) {
    if (!node.IsScalar()) {
      throw error(node, key, fmt::format("expected a value, got {}", describe_yaml_node(node)));
    }
    return node.Scalar();
  }

  std::vector<std::string> values_of(const YAML::Node& node, const std::string& key) {
    std::vector<std::string> values;
    if (node.IsSequence()) {
      if (node.size() == 0) throw error(node, key, "an empty list sweeps nothing");
      if (static_cast<std::int64_t>(node.size()) > kMaxSweepAxisValues) {
        throw error(node, key, fmt::format("more than {} values", kMaxSweepAxisValues));
      }
      std::set<std::string> distinct;
      for (const auto& v : node) {
        std::string text = scalar_value(v, key);
        if (!distinct.insert(text).second) {
          throw error(v, key, fmt::format("the value '{}' is listed twice", text));
        }
        values.push_back(std::move(text));
      }
      return values;
    }
    if (node.IsMap()) return sweep_range_values(node, grid_.file, key);
    throw error(node, key,
                fmt::format("expected a list of values or a range such as {{from: 1, to: 8, "
                            "step: 1}}, got {} (a key with one value belongs under 'set')",
                            describe_yaml_node(node)));
  }

  void read_set(const YAML::Node& set) {
    if (!set.IsMap()) {
      throw error(set, "set", fmt::format("expected a mapping of scenario keys to values, got {}",
                                          describe_yaml_node(set)));
    }
    for (const auto& entry : set) {
      const std::string key = key_of(entry.first, "set");
      grid_.sets.push_back(key + "=" + scalar_value(entry.second, key));
    }
  }

  void read_grid(const YAML::Node& g) {
    if (!g.IsMap()) {
      throw error(g, "grid", fmt::format("expected a mapping of scenario keys to values, got {}",
                                         describe_yaml_node(g)));
    }
    for (const auto& entry : g) {
      const std::string key = key_of(entry.first, "grid");
      SweepAxis axis;
      axis.keys.push_back(key);
      for (std::string& v : values_of(entry.second, key)) axis.values.push_back({std::move(v)});
      grid_.axes.push_back(std::move(axis));
    }
  }

  void read_zip(const YAML::Node& z) {
    if (!z.IsSequence()) {
      throw error(z, "zip", fmt::format("expected a list of groups (mappings of keys to lists of "
                                        "equal length), got {}",
                                        describe_yaml_node(z)));
    }
    for (const auto& group : z) {
      if (!group.IsMap() || group.size() == 0) {
        throw error(group, "zip", fmt::format("a group is a mapping of keys to lists of equal "
                                              "length, got {}",
                                              describe_yaml_node(group)));
      }
      SweepAxis axis;
      std::string first;
      for (const auto& entry : group) {
        const std::string key = key_of(entry.first, "zip");
        std::vector<std::string> values = values_of(entry.second, key);
        if (axis.keys.empty()) {
          axis.values.resize(values.size());
          first = key;
        } else if (values.size() != axis.values.size()) {
          throw error(entry.second, key,
                      fmt::format("{} values, but '{}' of the same zip group has {}: the lists "
                                  "of a group advance together",
                                  values.size(), first, axis.values.size()));
        }
        for (std::size_t i = 0; i < values.size(); ++i) axis.values[i].push_back(values[i]);
        axis.keys.push_back(key);
      }
      grid_.axes.push_back(std::move(axis));
    }
  }

  SweepGrid& grid_;
  std::filesystem::path folder_;
};

}  // namespace

std::int64_t SweepGrid::point_count() const {
  std::int64_t n = 1;
  for (const SweepAxis& axis : axes) n *= static_cast<std::int64_t>(axis.values.size());
  return n;
}

std::vector<std::string> SweepGrid::swept_keys() const {
  std::vector<std::string> keys;
  for (const SweepAxis& axis : axes) keys.insert(keys.end(), axis.keys.begin(), axis.keys.end());
  return keys;
}

SweepGrid read_sweep_grid(const std::filesystem::path& path) {
  SweepGrid grid;
  grid.file = path.string();
  const YAML::Node root =
      read_yaml_file(path, "sweep grid", "a mapping with input and grid (docs/sweep.md)");
  GridReader(grid, path.parent_path()).read(root);
  return grid;
}

void check_grid_files(const SweepGrid& grid) {
  const auto check = [&grid](const std::filesystem::path& path, const char* key,
                             const std::optional<std::int64_t>& line) {
    const InputLocation at{grid.file, line, std::nullopt, key};
    struct stat st {};
    // stat, not lstat: a symbolic link to a regular file is read through.
    if (::stat(path.c_str(), &st) != 0) {
      const int err = errno;
      throw InputError(at, fmt::format("cannot read '{}': {}", bounded(path.string()),
                                       std::strerror(err)));
    }
    try {
      require_regular_file(path, key);
    } catch (const InputError& e) {
      throw InputError(at, fmt::format("'{}' {}", bounded(path.string()), e.reason()));
    }
  };
  check(grid.input, "input", grid.input_line);
  if (grid.scenario) check(*grid.scenario, "scenario", grid.scenario_line);
}

SweepPoint sweep_point(const SweepGrid& grid, std::int64_t index) {
  if (index < 0 || index >= grid.point_count()) {
    throw std::out_of_range(fmt::format("sweep point {} of {}", index, grid.point_count()));
  }
  SweepPoint point;
  point.index = index;
  // Mixed radix, the last axis varying fastest.
  std::vector<std::size_t> step(grid.axes.size());
  std::int64_t rest = index;
  for (std::size_t a = grid.axes.size(); a-- > 0;) {
    const auto n = static_cast<std::int64_t>(grid.axes[a].values.size());
    step[a] = static_cast<std::size_t>(rest % n);
    rest /= n;
  }
  for (std::size_t a = 0; a < grid.axes.size(); ++a) {
    const SweepAxis& axis = grid.axes[a];
    for (std::size_t k = 0; k < axis.keys.size(); ++k) {
      point.keys.emplace_back(axis.keys[k], axis.values[step[a]][k]);
    }
  }
  return point;
}

std::vector<std::string> point_sets(const SweepGrid& grid, const SweepPoint& point) {
  std::vector<std::string> sets = grid.sets;
  for (const auto& [key, value] : point.keys) sets.push_back(key + "=" + value);
  return sets;
}

}  // namespace ssgd::sim
