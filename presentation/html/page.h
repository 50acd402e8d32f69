#pragma once
// The building blocks of the report's page: its body as HTML text (headings,
// paragraphs, tables, collapsed JSON) and its charts, each a <div> that the
// page's script fills from a Vega-Lite specification; and the numbers as the
// tables write them. Every text is escaped here (html_text.h).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "presentation/html/json_fields.h"

namespace ssgd::html {

struct Table {
  std::vector<std::string> head;
  std::vector<bool> numeric;  // per column: right-aligned
  std::vector<std::vector<std::string>> rows;

  // scroll: in a box of limited height that scrolls.
  [[nodiscard]] std::string html(bool scroll = false) const;
};

// Two columns without a heading: what, value.
Table facts();

class Page {
 public:
  void add(std::string_view html) { body_ += html; }
  void heading(int level, const std::string& text, const std::string& id = "");
  void paragraph(const std::string& text, const std::string& cls = "");
  // A chart as wide as the page (its specification's width is "container").
  void chart(Json spec);
  // Charts between these two sit side by side, as many a row as fit.
  void begin_grid() { body_ += "<div class=\"chart-grid\">\n"; }
  void end_grid() { body_ += "</div>\n"; }
  [[nodiscard]] const std::string& body() const { return body_; }
  [[nodiscard]] const Json& charts() const { return charts_; }

 private:
  std::string body_;
  Json charts_ = Json::array();
};

// "-" when absent, else `v` with `decimals` decimals.
std::string fmt_opt_ratio(const std::optional<double>& v, int decimals);
// A fraction as a percentage with one decimal ("12.5%").
std::string percent(double fraction);
// A double with one decimal.
std::string number(double v);
// A signed percentage already in percent ("+1.23%", "-0.40%").
std::string signed_percent(double percent_value, int decimals = 2);
// a - b, held at the int64 limits instead of overflowing.
std::int64_t saturating_difference(std::int64_t a, std::int64_t b);
// Integer nanoseconds as "12.345 ms", signed with "+" when positive.
std::string signed_ms(std::int64_t ns);
// `value` as indented JSON in a collapsed <details>.
std::string details(const std::string& summary, const Json& value);

}  // namespace ssgd::html
