#include "presentation/html/page.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "presentation/html/html_text.h"

namespace ssgd::html {

std::string Table::html(bool scroll) const {
  std::string out = scroll ? "<div class=\"scroll\"><table>\n" : "<table>\n";
  if (std::any_of(head.begin(), head.end(), [](const std::string& h) { return !h.empty(); })) {
    out += "<tr>";
    for (const std::string& h : head) out += "<th>" + html_escape(h) + "</th>";
    out += "</tr>\n";
  }
  for (const auto& row : rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i) {
      const bool num = i < numeric.size() && numeric[i];
      out += (num ? "<td class=\"num\">" : "<td>") + html_escape(row[i]) + "</td>";
    }
    out += "</tr>\n";
  }
  out += scroll ? "</table></div>\n" : "</table>\n";
  return out;
}

Table facts() { return Table{{"", ""}, {false, false}, {}}; }

void Page::heading(int level, const std::string& text, const std::string& id) {
  body_ += fmt::format("<h{}{}>{}</h{}>\n", level, id.empty() ? "" : " id=\"" + id + "\"",
                       html_escape(text), level);
}

void Page::paragraph(const std::string& text, const std::string& cls) {
  body_ += (cls.empty() ? "<p>" : "<p class=\"" + cls + "\">") + html_escape(text) + "</p>\n";
}

void Page::chart(Json spec) {
  const std::string id = fmt::format("chart-{}", charts_.size());
  body_ += "<div class=\"chart\" id=\"" + id + "\"></div>\n";
  charts_.push_back({{"id", id}, {"spec", std::move(spec)}});
}

std::string fmt_opt_ratio(const std::optional<double>& v, int decimals) {
  return v ? format_fixed(*v, decimals) : "-";
}

std::string percent(double fraction) { return format_fixed(fraction * 100.0, 1) + "%"; }

std::string number(double v) { return format_fixed(v, 1); }

std::string signed_percent(double percent_value, int decimals) {
  std::string s = format_fixed(percent_value, decimals);
  if (s == "-") return s;
  const bool plus = s[0] != '-' && s.find_first_not_of("0.") != std::string::npos;
  return fmt::format("{}{}%", plus ? "+" : "", s);
}

std::int64_t saturating_difference(std::int64_t a, std::int64_t b) {
  std::int64_t d = 0;
  if (!__builtin_sub_overflow(a, b, &d)) return d;
  return b < 0 ? std::numeric_limits<std::int64_t>::max()
               : std::numeric_limits<std::int64_t>::min();
}

std::string signed_ms(std::int64_t ns) {
  return fmt::format("{}{}", ns > 0 ? "+" : "", format_ms(ns));
}

std::string details(const std::string& summary, const Json& value) {
  return "<details><summary>" + html_escape(summary) + "</summary><pre>" +
         html_escape(value.dump(2, ' ', false, Json::error_handler_t::replace)) +
         "</pre></details>\n";
}

}  // namespace ssgd::html
