#pragma once
// Text made safe for where it goes in an HTML page, and the numbers as the
// report writes them.

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ssgd::html {

// `text` as HTML text or attribute value: & < > " ' escaped. Bytes that are
// not valid UTF-8 become U+FFFD.
std::string html_escape(std::string_view text);

// `value` as JSON to put inside <script type="application/json">: nothing in
// it can end the script element or open an HTML comment there. "</" becomes
// "<\/", "<!--" becomes "\u003c!--", and U+2028 and U+2029 (line
// terminators to older JavaScript) become \u2028 and \u2029; every one of
// those is still the same JSON. Strings that are not valid UTF-8 get U+FFFD.
std::string script_json(const nlohmann::ordered_json& value, int indent = -1);

// Text to put inside a <script> or a <!-- comment --> that is not JSON (the
// licences): "</" and "--" cannot end them.
std::string comment_text(std::string_view text);

// Integer nanoseconds as milliseconds with three decimals ("274.859 ms"),
// exact (no floating point).
std::string format_ms(std::int64_t ns);
// A double with `decimals` decimals; "-" for NaN or infinity.
std::string format_fixed(double value, int decimals);
// A ratio as a signed percentage ("+12.3%", "-4.0%", "0.0%").
std::string format_change(double ratio);
// A byte count with a binary unit ("8.0 MiB").
std::string format_size(double bytes);

}  // namespace ssgd::html
