#include "presentation/html/json_fields.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace ssgd::html {

InputError JsonFields::error(const std::string& field, const std::string& why) const {
  return InputError(InputLocation{file_, line_, std::nullopt, field}, why);
}

void JsonFields::fail(const std::string& field, const std::string& why) const {
  throw error(field, why);
}

std::string JsonFields::describe(const Json& v) {
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (s.size() > 40) s = s.substr(0, 40) + "...";
    return "the string " + Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  if (v.is_null()) return "null";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number()) return "the number " + v.dump();
  return fmt::format("an {}", v.type_name());
}

std::string JsonFields::join(const std::string& base, std::string_view key) {
  return base.empty() ? std::string(key) : fmt::format("{}.{}", base, key);
}

std::string JsonFields::element(const std::string& base, std::size_t index) {
  return fmt::format("{}[{}]", base, index);
}

void JsonFields::require_object(const Json& v, const std::string& path) const {
  if (!v.is_object()) fail(path, "expected an object, got " + describe(v));
}

const Json* JsonFields::find(const Json& v, const std::string& base, std::string_view key) const {
  const Json* at = &v;
  std::string path = base;
  while (true) {
    require_object(*at, path);
    const std::size_t dot = key.find('.');
    const std::string part(key.substr(0, dot));
    const auto it = at->find(part);
    if (it == at->end()) return nullptr;
    at = &*it;
    path = join(path, part);
    if (dot == std::string_view::npos) return at;
    key.remove_prefix(dot + 1);
  }
}

const Json& JsonFields::required(const Json& v, const std::string& base,
                                 std::string_view key) const {
  const Json* found = find(v, base, key);
  if (found == nullptr) fail(join(base, key), "missing");
  return *found;
}

std::int64_t JsonFields::as_count(const Json& v, const std::string& path) const {
  if (v.is_number_unsigned()) {
    if (v.get<std::uint64_t>() >
        static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail(path, "too large, got " + v.dump());
    }
    return static_cast<std::int64_t>(v.get<std::uint64_t>());
  }
  if (!v.is_number_integer()) fail(path, "expected a whole number, got " + describe(v));
  const std::int64_t n = v.get<std::int64_t>();
  if (n < 0) fail(path, fmt::format("must not be negative, got {}", n));
  return n;
}

std::int64_t JsonFields::as_integer(const Json& v, const std::string& path) const {
  if (v.is_number_integer() && !v.is_number_unsigned()) return v.get<std::int64_t>();
  return as_count(v, path);  // unsigned: checked for range; anything else refused there
}

double JsonFields::as_number(const Json& v, const std::string& path) const {
  if (!v.is_number()) fail(path, "expected a number, got " + describe(v));
  const double d = v.get<double>();
  if (!std::isfinite(d)) fail(path, "expected a finite number, got " + v.dump());
  return d;
}

std::int64_t JsonFields::count(const Json& v, const std::string& base, std::string_view key) const {
  return as_count(required(v, base, key), join(base, key));
}

std::optional<std::int64_t> JsonFields::opt_count(const Json& v, const std::string& base,
                                                  std::string_view key) const {
  const Json* found = find(v, base, key);
  if (found == nullptr || found->is_null()) return std::nullopt;
  return as_count(*found, join(base, key));
}

std::int64_t JsonFields::integer(const Json& v, const std::string& base,
                                 std::string_view key) const {
  return as_integer(required(v, base, key), join(base, key));
}

double JsonFields::number(const Json& v, const std::string& base, std::string_view key) const {
  return as_number(required(v, base, key), join(base, key));
}

std::optional<double> JsonFields::opt_number(const Json& v, const std::string& base,
                                             std::string_view key) const {
  const Json* found = find(v, base, key);
  if (found == nullptr || found->is_null()) return std::nullopt;
  return as_number(*found, join(base, key));
}

std::string JsonFields::text(const Json& v, const std::string& base, std::string_view key) const {
  const Json& found = required(v, base, key);
  if (!found.is_string()) fail(join(base, key), "expected a string, got " + describe(found));
  return found.get<std::string>();
}

std::string JsonFields::opt_text(const Json& v, const std::string& base,
                                 std::string_view key) const {
  const Json* found = find(v, base, key);
  if (found == nullptr || found->is_null()) return "";
  if (!found->is_string()) fail(join(base, key), "expected a string, got " + describe(*found));
  return found->get<std::string>();
}

std::optional<bool> JsonFields::opt_flag(const Json& v, const std::string& base,
                                         std::string_view key) const {
  const Json* found = find(v, base, key);
  if (found == nullptr || found->is_null()) return std::nullopt;
  if (!found->is_boolean())
    fail(join(base, key), "expected true or false, got " + describe(*found));
  return found->get<bool>();
}

const Json* JsonFields::opt_array(const Json& v, const std::string& base,
                                  std::string_view key) const {
  const Json* found = find(v, base, key);
  if (found == nullptr || found->is_null()) return nullptr;
  if (!found->is_array()) fail(join(base, key), "expected an array, got " + describe(*found));
  return found;
}

const Json& JsonFields::array(const Json& v, const std::string& base, std::string_view key) const {
  const Json* found = find(v, base, key);
  if (found == nullptr) fail(join(base, key), "missing");
  if (!found->is_array()) fail(join(base, key), "expected an array, got " + describe(*found));
  return *found;
}

const Json& JsonFields::object(const Json& v, const std::string& base, std::string_view key) const {
  const Json* found = find(v, base, key);
  if (found == nullptr) fail(join(base, key), "missing");
  require_object(*found, join(base, key));
  return *found;
}

const Json* JsonFields::opt_object(const Json& v, const std::string& base,
                                   std::string_view key) const {
  const Json* found = find(v, base, key);
  if (found == nullptr || found->is_null()) return nullptr;
  require_object(*found, join(base, key));
  return found;
}

}  // namespace ssgd::html
