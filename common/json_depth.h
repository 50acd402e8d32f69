#pragma once
// The nesting of a JSON text, measured before a DOM parser (nlohmann) is
// given it: a parser builds every level it enters, and "[[[[..." costs about
// 75 bytes of memory per byte of the file before the parse fails at its end
// (docs/reliability.md, bounded readers). A byte scan that knows strings and
// their escapes, and nothing else: what is not valid JSON is left for the
// parser to say.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ssgd {

inline constexpr int kMaxJsonDepth = 64;

// The byte offset of the first '[' or '{' that opens level max_depth + 1, or
// nullopt when the text never nests that deep.
[[nodiscard]] std::optional<std::size_t> json_too_deep_at(std::string_view text,
                                                          int max_depth = kMaxJsonDepth);

// Throws InputError "FILE: JSON nested deeper than 64 levels (at byte N)"
// when `text` does; `line`, when given, is the line of the file the text
// starts on (a JSON-lines record).
void require_json_depth(std::string_view text, const std::string& file,
                        std::optional<std::int64_t> line = std::nullopt);

}  // namespace ssgd
