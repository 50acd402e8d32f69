#pragma once
// Reads the fields of a parsed JSON document and reports what is wrong with
// one as an ssgd::InputError naming the file and the field's path
// (`entries[2].measured.iteration_ns.p10`), for the JSON files that ssgd
// reads as a whole: dataset manifests and their entries.

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/error.h"

namespace ssgd::trace {

class JsonFieldReader {
 public:
  using Json = nlohmann::ordered_json;

  explicit JsonFieldReader(std::string file) : file_(std::move(file)) {}

  // Parses `text`; invalid JSON fails with the parser's message.
  [[nodiscard]] Json parse(std::string_view text) const;

  [[noreturn]] void fail(const std::string& path, const std::string& why) const;
  [[nodiscard]] InputError error(const std::string& path, const std::string& why) const;

  // "the string \"x\"", "null", "number", ...: what a value is, for messages.
  static std::string describe(const Json& v);
  // `path`.`key` and `path`[`index`], for the paths of nested fields.
  static std::string child(const std::string& path, std::string_view key);
  static std::string element(const std::string& path, std::size_t index);

  // Checks that `v` is an object and that each of its keys is in `known`;
  // an unknown key fails at its own path, with `hint` added to the message.
  void object(const Json& v, const std::string& path, std::initializer_list<std::string_view> known,
              std::string_view hint = {}) const;
  // The value of `key` in the object `v`; missing fails.
  const Json& required(const Json& v, const std::string& path, std::string_view key) const;
  // The value of `key` in the object `v`, or nullptr when it is absent.
  static const Json* optional(const Json& v, std::string_view key);

  [[nodiscard]] std::string string(const Json& v, const std::string& path) const;
  // A whole number >= 0; `positive` asks for > 0.
  [[nodiscard]] std::int64_t whole(const Json& v, const std::string& path,
                                   bool positive = false) const;
  // Checks that `v` is a list and returns it.
  const Json& array(const Json& v, const std::string& path) const;

  [[nodiscard]] const std::string& file() const { return file_; }

 private:
  std::string file_;
};

}  // namespace ssgd::trace
