#include "presentation/html/chart_spec.h"

#include <array>

namespace ssgd::html {

Json base_spec(const std::string& title, int height) {
  Json spec;
  spec["$schema"] = "https://vega.github.io/schema/vega-lite/v5.json";
  spec["title"] = title;
  spec["width"] = "container";
  spec["height"] = height;
  spec["autosize"] = {{"type", "fit-x"}, {"contains", "padding"}};
  spec["config"] = {{"font", "sans-serif"}, {"view", {{"stroke", nullptr}}}};
  return spec;
}

Json field(const std::string& name, const std::string& type, const std::string& title) {
  return {{"field", name}, {"type", type}, {"title", title}};
}

double ms(std::int64_t ns) { return static_cast<double>(ns) / 1e6; }

std::string series_colour(std::size_t i) {
  static constexpr std::array<const char*, 10> kColours = {
      "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return kColours[i % kColours.size()];
}

Json series_colour_encoding(const std::string& field_name, const std::string& title,
                            const std::vector<std::string>& domain, bool legend) {
  Json range = Json::array();
  for (std::size_t i = 0; i < domain.size(); ++i) range.push_back(series_colour(i));
  Json c = field(field_name, "nominal", title);
  c["scale"] = {{"domain", domain}, {"range", range}};
  c["sort"] = nullptr;
  if (legend) {
    c["legend"] = {{"orient", "bottom"}, {"columns", 1}, {"labelLimit", 900}};
  } else {
    c["legend"] = nullptr;
  }
  return c;
}

}  // namespace ssgd::html
