#include "common/error.h"

namespace ssgd {

std::string bounded(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  std::size_t cut = max;
  // Back to the first byte of a UTF-8 character (continuation bytes are 10xxxxxx).
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "... (" + std::to_string(text.size()) + " bytes)";
}

std::string with_bounded_echo(std::string_view message, std::string_view echoed) {
  if (echoed.size() <= kMaxEchoBytes) return std::string(message);
  const std::string shown = bounded(echoed);
  std::string out;
  std::size_t from = 0;
  for (std::size_t at = message.find(echoed); at != std::string_view::npos;
       at = message.find(echoed, from)) {
    out.append(message.substr(from, at - from)).append(shown);
    from = at + echoed.size();
  }
  return out.append(message.substr(from));
}

std::string InputLocation::to_string() const {
  std::string s = file.empty() ? std::string("<input>") : bounded(file);
  if (line) s.append(":").append(std::to_string(*line));
  if (record) s.append(": record ").append(std::to_string(*record));
  if (!field.empty()) s.append(": field '").append(bounded(field)).append("'");
  return s;
}

InputError::InputError(InputLocation where, const std::string& what)
    : std::runtime_error(where.to_string() + ": " + bounded(what, kMaxReasonBytes)),
      where_(std::move(where)),
      reason_(bounded(what, kMaxReasonBytes)) {}

ParameterError::ParameterError(std::string key, const std::string& what)
    : std::invalid_argument(what), key_(std::move(key)) {}

}  // namespace ssgd
