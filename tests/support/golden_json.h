#pragma once
// Golden JSON reports: a report is compared with a committed golden file
// after dropping its volatile fields, with no tolerance, and the difference
// is printed path by path. With SSGD_UPDATE_GOLDEN set (to anything but
// "0") the golden file is rewritten instead. tests/README.md describes it.

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/test_files.h"

namespace ssgd::testing {

// Fields that differ between two runs of the same command on the same
// inputs for reasons other than the simulation, removed before comparing
// and never written into a golden file. Keep it short and say why:
//   /ssgd_version  the version string of the binary (`ssgd dataset verify`),
//                  which every release changes.
// (The reports hold no wall-clock times, host names or absolute paths: the
// golden tests give every input as a path relative to the repository root.)
inline const std::vector<std::string>& golden_volatile_fields() {
  static const std::vector<std::string> fields{"/ssgd_version"};
  return fields;
}

// The report with the volatile fields removed (each one where present).
inline nlohmann::ordered_json drop_volatile_fields(nlohmann::ordered_json j) {
  for (const auto& field : golden_volatile_fields()) {
    const nlohmann::ordered_json::json_pointer ptr(field);
    if (!j.contains(ptr)) continue;
    auto& parent = j.at(ptr.parent_pointer());
    if (parent.is_object()) parent.erase(ptr.back());
  }
  return j;
}

namespace golden_detail {

// Integers, signed or not, are one kind; floating-point numbers another:
// 1 and 1.0 differ.
inline std::string kind_of(const nlohmann::ordered_json& j) {
  if (j.is_number_integer()) return "integer";  // signed and unsigned
  return j.type_name();
}

inline std::string show(const nlohmann::ordered_json& j) {
  std::string s = j.dump();
  if (s.size() > 120) s = s.substr(0, 117) + "...";
  return s;
}

inline std::string escape_key(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

inline void diff(const nlohmann::ordered_json& golden, const nlohmann::ordered_json& actual,
                 const std::string& path, std::vector<std::string>& out) {
  const std::string where = path.empty() ? "/" : path;
  if (kind_of(golden) != kind_of(actual)) {
    out.push_back(where + ": golden " + show(golden) + " (" + kind_of(golden) + "), got " +
                  show(actual) + " (" + kind_of(actual) + ")");
    return;
  }
  if (golden.is_object()) {
    for (const auto& [key, value] : golden.items()) {
      const std::string p = path + "/" + escape_key(key);
      if (!actual.contains(key)) {
        out.push_back(p + ": golden " + show(value) + ", missing from the report");
      } else {
        diff(value, actual.at(key), p, out);
      }
    }
    for (const auto& [key, value] : actual.items()) {
      if (!golden.contains(key)) {
        out.push_back(path + "/" + escape_key(key) + ": not in the golden file, got " +
                      show(value));
      }
    }
  } else if (golden.is_array()) {
    const std::size_t common = std::min(golden.size(), actual.size());
    for (std::size_t i = 0; i < common; ++i) {
      diff(golden[i], actual[i], path + "/" + std::to_string(i), out);
    }
    if (golden.size() != actual.size()) {
      out.push_back(where + ": golden has " + std::to_string(golden.size()) + " elements, got " +
                    std::to_string(actual.size()));
    }
  } else if (golden != actual) {  // same kind: exact equality, doubles included
    out.push_back(where + ": golden " + show(golden) + ", got " + show(actual));
  }
}

}  // namespace golden_detail

// Every difference between two JSON values, as "PATH: golden X, got Y"
// with PATH a JSON pointer; object keys compare in any order, arrays in
// order, numbers exactly (and an integer never equals a floating-point
// number). Empty when they are equal.
inline std::vector<std::string> json_differences(const nlohmann::ordered_json& golden,
                                                 const nlohmann::ordered_json& actual) {
  std::vector<std::string> out;
  golden_detail::diff(golden, actual, "", out);
  return out;
}

// Whether SSGD_UPDATE_GOLDEN asks for golden files to be rewritten: set,
// not empty and not "0".
inline bool golden_update_requested() {
  const char* v = std::getenv("SSGD_UPDATE_GOLDEN");
  return v != nullptr && *v != '\0' && std::string(v) != "0";
}

struct GoldenCheck {
  bool ok = false;
  bool updated = false;  // the golden file was rewritten
  std::string message;   // what differs, or what was done
};

// Compares the JSON report `report_text` (less its volatile fields) with the
// golden file `golden`. With `update`, writes it there instead (creating the
// folder) and passes. `max_shown` differences are listed, then a count.
inline GoldenCheck check_golden_json(const std::string& report_text,
                                     const std::filesystem::path& golden, bool update,
                                     std::size_t max_shown = 20) {
  GoldenCheck r;
  nlohmann::ordered_json report;
  try {
    report = drop_volatile_fields(nlohmann::ordered_json::parse(report_text));
  } catch (const nlohmann::json::exception& e) {
    r.message = std::string("the report is not valid JSON: ") + e.what();
    return r;
  }
  const std::string how_to_accept =
      "If the change is intended, accept it with\n"
      "  SSGD_UPDATE_GOLDEN=1 ctest --test-dir build -R GoldenReport\n"
      "and commit " +
      golden.string() + ".";
  if (update) {
    std::filesystem::create_directories(golden.parent_path());
    write_file_bytes(golden, report.dump(2) + "\n");
    r.ok = r.updated = true;
    r.message = "SSGD_UPDATE_GOLDEN: rewrote " + golden.string();
    return r;
  }
  if (!std::filesystem::exists(golden)) {
    r.message = "no golden file " + golden.string() + ".\n" + how_to_accept;
    return r;
  }
  nlohmann::ordered_json expected;
  try {
    expected = drop_volatile_fields(nlohmann::ordered_json::parse(read_file_bytes(golden)));
  } catch (const nlohmann::json::exception& e) {
    r.message = "the golden file " + golden.string() + " is not valid JSON: " + e.what();
    return r;
  }
  const auto differences = json_differences(expected, report);
  if (differences.empty()) {
    r.ok = true;
    return r;
  }
  std::ostringstream m;
  m << "the report differs from " << golden.string() << " in " << differences.size()
    << " place(s):\n";
  for (std::size_t i = 0; i < differences.size() && i < max_shown; ++i) {
    m << "  " << differences[i] << "\n";
  }
  if (differences.size() > max_shown) {
    m << "  ... and " << differences.size() - max_shown << " more\n";
  }
  m << how_to_accept;
  r.message = m.str();
  return r;
}

}  // namespace ssgd::testing
