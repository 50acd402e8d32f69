#include "traces/dataset/json_field_reader.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/json_depth.h"

namespace ssgd::trace {

JsonFieldReader::Json JsonFieldReader::parse(std::string_view text) const {
  require_json_depth(text, file_);
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    fail("", std::string("not valid JSON: ") + e.what());
  }
}

InputError JsonFieldReader::error(const std::string& path, const std::string& why) const {
  return InputError(InputLocation{file_, std::nullopt, std::nullopt, path}, why);
}

void JsonFieldReader::fail(const std::string& path, const std::string& why) const {
  throw error(path, why);
}

std::string JsonFieldReader::describe(const Json& v) {
  if (v.is_string()) return fmt::format("the string \"{}\"", v.get<std::string>());
  if (v.is_null()) return "null";
  if (v.is_number()) return "the number " + v.dump();
  return std::string(v.type_name());
}

std::string JsonFieldReader::child(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

std::string JsonFieldReader::element(const std::string& path, std::size_t index) {
  return fmt::format("{}[{}]", path, index);
}

void JsonFieldReader::object(const Json& v, const std::string& path,
                             std::initializer_list<std::string_view> known,
                             std::string_view hint) const {
  if (!v.is_object()) fail(path, "expected an object, got " + describe(v));
  for (const auto& [key, value] : v.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string names;
      for (const std::string_view k : known) names += (names.empty() ? "" : ", ") + std::string(k);
      fail(child(path, key),
           fmt::format("unknown key (known here: {}){}", names, hint.empty() ? "" : "; ") +
               std::string(hint));
    }
  }
}

const JsonFieldReader::Json& JsonFieldReader::required(const Json& v, const std::string& path,
                                                       std::string_view key) const {
  const Json* found = optional(v, key);
  if (found == nullptr) fail(child(path, key), "missing");
  return *found;
}

const JsonFieldReader::Json* JsonFieldReader::optional(const Json& v, std::string_view key) {
  const auto it = v.find(std::string(key));
  return it == v.end() ? nullptr : &*it;
}

std::string JsonFieldReader::string(const Json& v, const std::string& path) const {
  if (!v.is_string()) fail(path, "expected a string, got " + describe(v));
  return v.get<std::string>();
}

std::int64_t JsonFieldReader::whole(const Json& v, const std::string& path, bool positive) const {
  if (v.is_number_unsigned()) {
    if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) fail(path, "too large");
  } else if (!v.is_number_integer()) {
    fail(path, "expected a whole number, got " + describe(v));
  }
  const std::int64_t n = v.get<std::int64_t>();
  if (positive && n <= 0) fail(path, fmt::format("must be greater than zero, got {}", n));
  if (n < 0) fail(path, fmt::format("must not be negative, got {}", n));
  return n;
}

const JsonFieldReader::Json& JsonFieldReader::array(const Json& v, const std::string& path) const {
  if (!v.is_array()) fail(path, "expected a list, got " + describe(v));
  return v;
}

}  // namespace ssgd::trace
