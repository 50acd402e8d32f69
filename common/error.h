#pragma once
// Errors about input from outside: a trace, a scenario, a CSV, a flag.
//
// The message always names where the problem is (file, and line or record
// when known) and which field, so a user can go straight to it. Library code
// throws InputError and never exits; the command line turns it into a
// message on stderr and a non-zero exit status.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ssgd {

// Untrusted text echoed into a message (a path, a value, a key, a flag's
// value) is shown whole up to this many bytes; longer, its first bytes and
// how long it was (bounded), so that a 20 MB path or value cannot make a
// 20 MB message.
inline constexpr std::size_t kMaxEchoBytes = 200;
// A reason longer than this (an echo that did not go through bounded) is
// cut the same way by InputError itself.
inline constexpr std::size_t kMaxReasonBytes = 4096;

// `text` as a message shows it: whole when at most `max` bytes, else its
// first `max` bytes or fewer (never cutting a UTF-8 character) followed by
// "... (N bytes)", N being the whole text's length.
[[nodiscard]] std::string bounded(std::string_view text, std::size_t max = kMaxEchoBytes);

// `message` with every occurrence of `echoed` (untrusted text that a
// message built elsewhere quotes whole, e.g. a scenario value in a parser's
// reason) shown through bounded(); `message` as it is when `echoed` is short.
[[nodiscard]] std::string with_bounded_echo(std::string_view message, std::string_view echoed);

// The file and the field are shown through bounded().
struct InputLocation {
  std::string file;                  // path as the user gave it, or "--set", "<stdin>"
  std::optional<std::int64_t> line;  // 1-based line, for text inputs
  std::optional<std::int64_t> record;  // 0-based record or chunk index, for binary inputs
  std::string field;                 // column, key path or proto field; may be empty

  [[nodiscard]] std::string to_string() const;
};

// The message is "WHERE: WHAT", WHAT cut to kMaxReasonBytes (bounded).
class InputError : public std::runtime_error {
 public:
  InputError(InputLocation where, const std::string& what);
  [[nodiscard]] const InputLocation& where() const { return where_; }
  [[nodiscard]] const std::string& reason() const { return reason_; }

 private:
  InputLocation where_;
  std::string reason_;
};

// A bad value of a model's parameter, found by the model itself: it knows the
// parameter's key (e.g. "platform.nvlink.ring_order") but not where the user
// set it. The scenario turns it into an InputError at the file and line, or
// the --set, where that key was given, with the value
// (simulator/scenario/scenario.h, located_error).
class ParameterError : public std::invalid_argument {
 public:
  ParameterError(std::string key, const std::string& what);
  [[nodiscard]] const std::string& key() const { return key_; }

 private:
  std::string key_;
};

}  // namespace ssgd
