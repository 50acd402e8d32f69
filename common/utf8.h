#pragma once
// UTF-8 validity, the rule for every string ssgd reads or writes: protobuf's
// proto3 string fields and JSON demand it, so a name that is not valid UTF-8
// is refused where it enters, never written into a trace or a report.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ssgd {

// The length of the well-formed UTF-8 sequence that starts at byte `at`
// (< text.size()), 1 for ASCII; 0 when none starts there.
std::size_t utf8_sequence_length(std::string_view text, std::size_t at);

// The byte offset of the first byte that does not start a well-formed UTF-8
// sequence (RFC 3629: no overlong forms, no surrogates, nothing above
// U+10FFFF); nullopt when the whole text is valid.
std::optional<std::size_t> invalid_utf8_offset(std::string_view text);

inline bool is_valid_utf8(std::string_view text) { return !invalid_utf8_offset(text).has_value(); }

// "is not valid UTF-8 (byte 0xff at offset 3)", for messages; empty when valid.
std::string utf8_problem(std::string_view text);

// Throws ssgd::InputError naming `file` and the line of the first byte that
// is not well-formed UTF-8: "<what> is not valid UTF-8 (byte 0xff at offset
// 12)". For text inputs whose strings reach reports and traces.
void require_utf8_text(std::string_view text, const std::string& file, std::string_view what);

// Throws ssgd::InputError naming `file` and the line of the first control
// character other than tab, line feed and carriage return (C0, DEL): YAML
// text holds none (YAML 1.2, 5.1), and yaml-cpp turns some, NUL among them,
// into bytes that are not UTF-8.
void require_no_control_characters(std::string_view text, const std::string& file,
                                   std::string_view what);

}  // namespace ssgd
