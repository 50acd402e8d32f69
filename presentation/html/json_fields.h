#pragma once
// Typed reads of a report's JSON fields by their dotted path
// ("breakdown.compute_ns", "rows[2].speedup"), each failure an
// ssgd::InputError naming the file, the line (for JSON lines) and the field.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/error.h"

namespace ssgd::html {

using Json = nlohmann::ordered_json;

class JsonFields {
 public:
  explicit JsonFields(std::string file, std::optional<std::int64_t> line = std::nullopt)
      : file_(std::move(file)), line_(line) {}

  [[nodiscard]] InputError error(const std::string& field, const std::string& why) const;
  [[noreturn]] void fail(const std::string& field, const std::string& why) const;

  // "the string \"x\"", "null", "the number 3", "array", ...
  static std::string describe(const Json& v);
  // `base` and `key` joined as a path: "a" + "b.c" = "a.b.c"; "" + "b" = "b".
  static std::string join(const std::string& base, std::string_view key);
  static std::string element(const std::string& base, std::size_t index);

  // The value at `key` (dotted) under `v`, whose own path is `base`; nullptr
  // when a key on the way is absent. A value on the way that is not an
  // object fails at its path.
  const Json* find(const Json& v, const std::string& base, std::string_view key) const;

  // Required: missing fails. Optional (opt_): missing or null gives nullopt.
  [[nodiscard]] std::int64_t count(const Json& v, const std::string& base,
                                   std::string_view key) const;  // a whole number >= 0
  [[nodiscard]] std::optional<std::int64_t> opt_count(const Json& v, const std::string& base,
                                                      std::string_view key) const;
  // A whole number of either sign (a difference).
  [[nodiscard]] std::int64_t integer(const Json& v, const std::string& base,
                                     std::string_view key) const;
  [[nodiscard]] double number(const Json& v, const std::string& base, std::string_view key) const;
  [[nodiscard]] std::optional<double> opt_number(const Json& v, const std::string& base,
                                                 std::string_view key) const;
  [[nodiscard]] std::string text(const Json& v, const std::string& base,
                                 std::string_view key) const;
  // Missing or null: "".
  [[nodiscard]] std::string opt_text(const Json& v, const std::string& base,
                                     std::string_view key) const;
  [[nodiscard]] std::optional<bool> opt_flag(const Json& v, const std::string& base,
                                             std::string_view key) const;
  // An array, or nullptr when missing or null; another type fails.
  const Json* opt_array(const Json& v, const std::string& base, std::string_view key) const;
  // An object, or nullptr when missing or null; another type fails.
  const Json* opt_object(const Json& v, const std::string& base, std::string_view key) const;
  // The same, required: missing fails ("missing"), and so does null.
  const Json& array(const Json& v, const std::string& base, std::string_view key) const;
  const Json& object(const Json& v, const std::string& base, std::string_view key) const;
  // `v` itself must be an object.
  void require_object(const Json& v, const std::string& path) const;

  // The same checks on a value already found, at `path`.
  [[nodiscard]] std::int64_t as_count(const Json& v, const std::string& path) const;
  [[nodiscard]] std::int64_t as_integer(const Json& v, const std::string& path) const;
  [[nodiscard]] double as_number(const Json& v, const std::string& path) const;

  [[nodiscard]] const std::string& file() const { return file_; }

 private:
  const Json& required(const Json& v, const std::string& base, std::string_view key) const;

  std::string file_;
  std::optional<std::int64_t> line_;
};

}  // namespace ssgd::html
