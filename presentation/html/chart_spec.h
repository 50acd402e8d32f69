#pragma once
// What every chart's Vega-Lite specification shares: the skeleton (title,
// as wide as its container, a fixed height), field encodings, milliseconds
// from integer nanoseconds, and the colours of series.

#include <cstdint>
#include <string>
#include <vector>

#include "presentation/html/json_fields.h"

namespace ssgd::html {

// The skeleton: `title`, width "container" (the page's width), `height` px.
Json base_spec(const std::string& title, int height);
// {field, type, title}.
Json field(const std::string& name, const std::string& type, const std::string& title);
double ms(std::int64_t ns);
// The colour of the i-th series (Vega's category10, repeating), and of an
// ideal or reference line.
std::string series_colour(std::size_t i);
inline constexpr const char* kReferenceColour = "#9d9d9d";
inline constexpr const char* kBestColour = "#e45756";
// A colour encoding of `field_name` with `domain` in that order, coloured
// series_colour(0...), with its legend at the bottom (none when `legend` is
// false).
Json series_colour_encoding(const std::string& field_name, const std::string& title,
                            const std::vector<std::string>& domain, bool legend = true);

}  // namespace ssgd::html
