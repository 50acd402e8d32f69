#pragma once
// An enum's names, written once as a table: each value's name (to_string),
// the value of a name, with other spellings accepted as aliases (parse),
// and the list of names for messages ("known: a, b, c"). Every room's
// enums that are read from or written to a scenario, a file or the command
// line keep their words here, e.g.
//
//   constexpr EnumNames<Dtype, 3> kDtypeNames{
//       {{{Dtype::kFp32, "fp32"}, {Dtype::kBf16, "bf16"}, {Dtype::kFp16, "fp16"}}}};
//   const char* to_string(Dtype d) { return kDtypeNames.name(d); }

#include <array>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ssgd {

template <class E>
struct EnumName {
  E value;
  const char* name;
};

template <class E, std::size_t N, std::size_t Aliases = 0>
class EnumNames {
 public:
  // Every entry must be given: a table declared constexpr with fewer than N
  // names (or aliases) does not compile.
  constexpr explicit EnumNames(std::array<EnumName<E>, N> names,
                               std::array<EnumName<E>, Aliases> aliases = {})
      : names_(names), aliases_(aliases) {
    for (const auto& n : names_) {
      if (n.name == nullptr) throw std::logic_error("EnumNames: a name is missing");
    }
    for (const auto& a : aliases_) {
      if (a.name == nullptr) throw std::logic_error("EnumNames: an alias is missing");
    }
  }

  // The value's name; `unknown` for a value not in the table.
  [[nodiscard]] constexpr const char* name(E value, const char* unknown = "?") const {
    for (const auto& n : names_) {
      if (n.value == value) return n.name;
    }
    return unknown;
  }

  // The value named `name` (exactly, or by an alias), if any.
  [[nodiscard]] constexpr std::optional<E> parse(std::string_view name) const {
    for (const auto& n : names_) {
      if (name == n.name) return n.value;
    }
    for (const auto& a : aliases_) {
      if (name == a.name) return a.value;
    }
    return std::nullopt;
  }

  // "a, b, c": the names in table order, aliases left out.
  [[nodiscard]] std::string list() const {
    std::string out;
    for (const auto& n : names_) {
      if (!out.empty()) out += ", ";
      out += n.name;
    }
    return out;
  }

  [[nodiscard]] constexpr const std::array<EnumName<E>, N>& entries() const { return names_; }

 private:
  std::array<EnumName<E>, N> names_;
  std::array<EnumName<E>, Aliases> aliases_;
};

}  // namespace ssgd
