#include "common/json_depth.h"

#include "common/error.h"

namespace ssgd {

std::optional<std::size_t> json_too_deep_at(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, whatever it is
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '[':
      case '{':
        if (++depth > max_depth) return i;
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default: break;
    }
  }
  return std::nullopt;
}

void require_json_depth(std::string_view text, const std::string& file,
                        std::optional<std::int64_t> line) {
  if (const auto at = json_too_deep_at(text)) {
    throw InputError(InputLocation{file, line, std::nullopt, ""},
                     "JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                         " levels (at byte " + std::to_string(*at) + ")");
  }
}

}  // namespace ssgd
