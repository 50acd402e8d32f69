#include "simulator/sweep/sweep_results.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "common/input_file.h"
#include "common/json_depth.h"
#include "simulator/input/scenario_inputs.h"

namespace ssgd::sim {
namespace {

using ordered_json = nlohmann::ordered_json;

// Every scalar of `node`, under dotted names; lists and nulls are left out.
void flatten(const nlohmann::json& node, const std::string& prefix, ordered_json& out) {
  for (const auto& [name, value] : node.items()) {
    const std::string path = prefix.empty() ? name : prefix + "." + name;
    if (value.is_object()) {
      flatten(value, path, out);
    } else if (value.is_primitive() && !value.is_null()) {
      out[path] = value;
    }
  }
}

std::string csv_cell(const ordered_json& value) {
  if (value.is_null()) return "";
  if (!value.is_string()) return value.dump();
  const auto& text = value.get_ref<const std::string&>();
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string csv_row(const std::vector<std::string>& cells) {
  std::string row;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) row += ',';
    row += cells[i];
  }
  return row + "\n";
}

}  // namespace

std::string record_line(const ordered_json& record) {
  return record.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

Scenario load_point_scenario(const SweepGrid& grid, const SweepPoint& point) {
  try {
    return load_scenario(grid.scenario, point_sets(grid, point));
  } catch (const InputError& e) {
    throw locate_point_error(grid, point, e);
  }
}

namespace {

// `error`, about a key given as --set, located in the grid file at that key,
// with `context` added to its reason.
InputError locate_in_grid(const SweepGrid& grid, const InputError& error,
                          const std::string& context) {
  const std::string reason = error.reason() + context;
  if (error.where().file == "--set") {
    const auto line = grid.lines.find(error.where().field);
    return InputError({grid.file,
                       line == grid.lines.end() ? std::nullopt
                                                : std::optional<std::int64_t>(line->second),
                       std::nullopt, error.where().field},
                      reason);
  }
  return InputError(error.where(), reason);
}

}  // namespace

InputError locate_point_error(const SweepGrid& grid, const SweepPoint& point,
                              const InputError& error) {
  std::string where;
  for (const auto& [key, value] : point.keys) {
    where += fmt::format("{}{}={}", where.empty() ? "" : ", ", key, value);
  }
  return locate_in_grid(grid, error, fmt::format(" (point {}: {})", point.index, where));
}

void check_axis_values(const SweepGrid& grid) {
  const SweepPoint first = sweep_point(grid, 0);
  std::size_t offset = 0;
  for (const SweepAxis& axis : grid.axes) {
    for (const auto& values : axis.values) {
      SweepPoint p = first;
      for (std::size_t k = 0; k < axis.keys.size(); ++k) p.keys[offset + k].second = values[k];
      try {
        (void)load_scenario(grid.scenario, point_sets(grid, p));
      } catch (const InputError& e) {
        throw locate_in_grid(grid, e, "");
      }
    }
    offset += axis.keys.size();
  }
}

ordered_json typed_value(const std::string& text) {
  const char* end = text.data() + text.size();
  std::int64_t whole = 0;
  if (auto [p, ec] = std::from_chars(text.data(), end, whole); ec == std::errc() && p == end) {
    return whole;
  }
  double number = 0;
  if (auto [p, ec] = std::from_chars(text.data(), end, number);
      ec == std::errc() && p == end && std::isfinite(number)) {
    return number;
  }
  if (text == "true") return true;
  if (text == "false") return false;
  return text;
}

ordered_json point_keys(const SweepPoint& point) {
  ordered_json keys = ordered_json::object();
  for (const auto& [key, value] : point.keys) keys[key] = typed_value(value);
  return keys;
}

ordered_json point_record(const SweepPoint& point, const nlohmann::json& report) {
  ordered_json figures = ordered_json::object();
  for (const auto& [name, value] : report.items()) {
    if (name == "scenario" || name == "input" || name == "ssgd_report_version") continue;
    if (value.is_object()) {
      flatten(value, name, figures);
    } else if (value.is_primitive() && !value.is_null()) {
      figures[name] = value;
    }
  }
  ordered_json record;
  record["ssgd_sweep_version"] = kSweepVersion;
  record["point"] = point.index;
  record["keys"] = point_keys(point);
  record["figures"] = std::move(figures);
  return record;
}

ordered_json error_record(const SweepPoint& point, const std::string& message) {
  ordered_json record;
  record["ssgd_sweep_version"] = kSweepVersion;
  record["point"] = point.index;
  record["keys"] = point_keys(point);
  record["error"] = message;
  return record;
}

SweepResults read_sweep_results(const std::filesystem::path& path, const SweepGrid& grid) {
  SweepResults results;
  const std::string file = path.string();
  require_regular_file(path, "--output");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({file, std::nullopt, std::nullopt, ""}, "cannot open the results");
  std::ostringstream text_stream;
  text_stream << in.rdbuf();
  const std::string text = text_stream.str();
  std::size_t start = 0;
  std::int64_t line_number = 0;
  while (start < text.size()) {
    ++line_number;
    const std::size_t newline = text.find('\n', start);
    if (newline == std::string::npos) {
      results.warnings.push_back(fmt::format(
          "{}:{}: the last line is cut short (an interrupted run); its point runs again", file,
          line_number));
      break;
    }
    const std::string line = text.substr(start, newline - start);
    start = newline + 1;
    const InputLocation at{file, line_number, std::nullopt, ""};
    require_json_depth(line, file, line_number);
    const ordered_json record = ordered_json::parse(line, nullptr, false);
    if (record.is_discarded() || !record.is_object()) {
      throw InputError(at, "not a sweep record (a JSON object per line); is this the results "
                           "file of a sweep? Give another --output, or --restart to replace it");
    }
    const auto field = [&](const char* name) {
      return InputLocation{file, line_number, std::nullopt, name};
    };
    if (!record.contains("ssgd_sweep_version") || record["ssgd_sweep_version"] != kSweepVersion) {
      throw InputError(field("ssgd_sweep_version"),
                       fmt::format("expected {}; written by another version of ssgd sweep? Use "
                                   "--restart to replace it",
                                   kSweepVersion));
    }
    if (!record.contains("point") || !record["point"].is_number_integer()) {
      throw InputError(field("point"), "expected the point's number");
    }
    const auto index = record["point"].get<std::int64_t>();
    if (index < 0 || index >= grid.point_count()) {
      throw InputError(field("point"),
                       fmt::format("point {} is not in the grid {} ({} points): another grid "
                                   "wrote this file; give another --output, or --restart",
                                   index, grid.file, grid.point_count()));
    }
    const SweepPoint point = sweep_point(grid, index);
    if (!record.contains("keys") || record["keys"] != point_keys(point)) {
      throw InputError(field("keys"),
                       fmt::format("point {} has keys {}, but the grid {} gives it {}: another "
                                   "grid wrote this file; give another --output, or --restart",
                                   index, record.contains("keys") ? record_line(record["keys"]) : "none",
                                   grid.file, record_line(point_keys(point))));
    }
    if (!(record.contains("figures") && record["figures"].is_object()) &&
        !(record.contains("error") && record["error"].is_string())) {
      throw InputError(field("figures"), "expected the point's figures or its error");
    }
    if (!results.lines.emplace(index, record_line(record)).second) {
      throw InputError(field("point"), fmt::format("point {} is in the file twice", index));
    }
  }
  return results;
}

std::string sweep_jsonl(const SweepResults& results) {
  std::string text;
  for (const auto& [index, line] : results.lines) {
    text += line;
    text += '\n';
  }
  return text;
}

std::string sweep_csv(const SweepGrid& grid, const SweepResults& results) {
  const std::vector<std::string> keys = grid.swept_keys();
  std::vector<std::string> figures;
  std::set<std::string> known;
  std::vector<ordered_json> records;
  records.reserve(results.lines.size());
  for (const auto& [index, line] : results.lines) {
    records.push_back(ordered_json::parse(line));
    if (const auto f = records.back().find("figures"); f != records.back().end()) {
      for (const auto& [name, value] : f->items()) {
        if (known.insert(name).second) figures.push_back(name);
      }
    }
  }
  std::vector<std::string> header{"point"};
  header.insert(header.end(), keys.begin(), keys.end());
  header.insert(header.end(), figures.begin(), figures.end());
  header.emplace_back("error");
  std::string text = csv_row(header);
  for (const ordered_json& r : records) {
    std::vector<std::string> cells{r["point"].dump()};
    for (const std::string& k : keys) cells.push_back(csv_cell(r["keys"].value(k, ordered_json())));
    const ordered_json none = ordered_json::object();
    const ordered_json& f = r.contains("figures") ? r["figures"] : none;
    for (const std::string& name : figures) cells.push_back(csv_cell(f.value(name, ordered_json())));
    cells.push_back(csv_cell(r.value("error", ordered_json())));
    text += csv_row(cells);
  }
  return text;
}

}  // namespace ssgd::sim
