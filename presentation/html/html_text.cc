#include "presentation/html/html_text.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "common/utf8.h"

namespace ssgd::html {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    switch (c) {
      case '&':
        out += "&amp;";
        ++i;
        continue;
      case '<':
        out += "&lt;";
        ++i;
        continue;
      case '>':
        out += "&gt;";
        ++i;
        continue;
      case '"':
        out += "&quot;";
        ++i;
        continue;
      case '\'':
        out += "&#39;";
        ++i;
        continue;
      default: break;
    }
    const std::size_t n = utf8_sequence_length(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string script_json(const nlohmann::ordered_json& value, int indent) {
  const std::string text =
      value.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 64);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<' && i + 1 < text.size() && text[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else if (c == '<' && text.compare(i, 4, "<!--") == 0) {
      out += "\\u003c";
    } else if (c == '\xE2' && i + 2 < text.size() && text[i + 1] == '\x80' &&
               (text[i + 2] == '\xA8' || text[i + 2] == '\xA9')) {
      out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::string comment_text(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '-' && i + 1 < text.size() && text[i + 1] == '-') {
      out += "- ";
    } else if (text[i] == '<' || text[i] == '>') {
      out += ' ';
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string format_ms(std::int64_t ns) {
  const bool negative = ns < 0;
  // |INT64_MIN| does not fit; a report never holds it, but stay defined.
  const std::uint64_t abs =
      negative ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  // Round to microseconds, halves up.
  const std::uint64_t us = abs / 1000 + (abs % 1000 >= 500 ? 1 : 0);
  return fmt::format("{}{}.{:03} ms", negative ? "-" : "", us / 1000, us % 1000);
}

std::string format_fixed(double value, int decimals) {
  if (!std::isfinite(value)) return "-";
  std::string s = fmt::format("{:.{}f}", value, decimals);
  if (s.find_first_not_of("-0.") == std::string::npos && s[0] == '-') s.erase(0, 1);  // no "-0.0"
  return s;
}

std::string format_change(double ratio) {
  if (!std::isfinite(ratio)) return "-";
  const double percent = (ratio - 1.0) * 100.0;
  std::string s = format_fixed(percent, 1);
  if (s != "0.0" && s != "-" && s[0] != '-') s = "+" + s;
  return s + "%";
}

std::string format_size(double bytes) {
  if (!std::isfinite(bytes)) return "-";
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t u = 0;
  double v = bytes;
  while (std::abs(v) >= 1024.0 && u + 1 < std::size(kUnits)) {
    v /= 1024.0;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", static_cast<std::int64_t>(std::llround(v)))
                : fmt::format("{:.1f} {}", v, kUnits[u]);
}

}  // namespace ssgd::html
