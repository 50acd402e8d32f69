#include "common/utf8.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "common/error.h"

namespace ssgd {
namespace {

std::int64_t line_of(std::string_view text, std::size_t offset) {
  const std::string_view before = text.substr(0, offset);
  return static_cast<std::int64_t>(std::count(before.begin(), before.end(), '\n')) + 1;
}

}  // namespace

std::size_t utf8_sequence_length(std::string_view text, std::size_t at) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  const unsigned char b = p[at];
  if (b < 0x80) return 1;
  std::size_t len = 0;
  unsigned char lo = 0x80;  // the range of the second byte (Unicode 15, table 3-7)
  unsigned char hi = 0xBF;
  if (b >= 0xC2 && b <= 0xDF) {
    len = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    len = 3;
    if (b == 0xE0) lo = 0xA0;  // no overlong form
    if (b == 0xED) hi = 0x9F;  // no surrogate
  } else if (b >= 0xF0 && b <= 0xF4) {
    len = 4;
    if (b == 0xF0) lo = 0x90;  // no overlong form
    if (b == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (n - at < len) return 0;
  if (p[at + 1] < lo || p[at + 1] > hi) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    if (p[at + k] < 0x80 || p[at + k] > 0xBF) return 0;
  }
  return len;
}

std::optional<std::size_t> invalid_utf8_offset(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = utf8_sequence_length(text, i);
    if (len == 0) return i;
    i += len;
  }
  return std::nullopt;
}

std::string utf8_problem(std::string_view text) {
  const auto at = invalid_utf8_offset(text);
  if (!at) return {};
  return fmt::format("is not valid UTF-8 (byte {:#04x} at offset {})",
                     static_cast<unsigned char>(text[*at]), *at);
}

void require_utf8_text(std::string_view text, const std::string& file, std::string_view what) {
  const auto bad = invalid_utf8_offset(text);
  if (!bad) return;
  throw InputError({file, line_of(text, *bad), std::nullopt, ""},
                   fmt::format("{} {}", what, utf8_problem(text)));
}

void require_no_control_characters(std::string_view text, const std::string& file,
                                   std::string_view what) {
  const auto control = std::find_if(text.begin(), text.end(), [](char c) {
    const auto b = static_cast<unsigned char>(c);
    return (b < 0x20 && b != '\t' && b != '\n' && b != '\r') || b == 0x7f;
  });
  if (control == text.end()) return;
  const auto offset = static_cast<std::size_t>(control - text.begin());
  throw InputError({file, line_of(text, offset), std::nullopt, ""},
                   fmt::format("{} holds the control character {:#04x} (at offset {}); only tab "
                               "and line breaks may be written, others as escapes in double quotes",
                               what, static_cast<unsigned char>(*control), offset));
}

}  // namespace ssgd
