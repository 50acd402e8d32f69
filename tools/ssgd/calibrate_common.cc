// What the fits of `ssgd calibrate` share (calibrate_fits.h).
#include <iostream>
#include <utility>

#include <fmt/format.h>

#include "common/units.h"
#include "tools/ssgd/calibrate_fits.h"

namespace ssgd::tools {

std::string percent(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

std::string size_label(double bytes) { return format_bytes(static_cast<std::int64_t>(bytes)); }

std::string join_ranks(const std::vector<std::int64_t>& ranks) {
  std::string s;
  for (const auto r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

void print_read(std::size_t measurements, std::size_t files) {
  std::cout << fmt::format("ssgd calibrate: {} measurements from {} file(s)\n", measurements,
                           files);
}

void refuse_network_flags(const CalibrateArgs& a, const char* mode) {
  if (a.format != "auto" && a.format != "trace") {
    throw flag_error("--format", a.format, fmt::format("{} reads ssgd traces only", mode));
  }
  refuse_given_flags({{!a.op.empty(), "--op"},
                      {a.ranks != 0, "--ranks"},
                      {!a.bands.empty(), "--bands"},
                      {a.max_bands_given, "--max-bands"},
                      {a.holdout != 0, "--holdout"},
                      {a.per_ranks, "--per-ranks"},
                      {a.in_place, "--in-place"},
                      {!a.tcp_streams.empty(), "--tcp-streams"},
                      {!a.line_rate.empty(), "--line-rate"},
                      {a.level != "inter_node", "--level"},
                      {a.algorithm != "ring", "--algorithm"}},
                     fmt::format("does not apply with {} (no network fit)", mode));
}

void refuse_given_flags(std::initializer_list<std::pair<bool, const char*>> flags,
                        std::string_view why) {
  for (const auto& [given, flag] : flags) {
    if (given) throw flag_error(flag, why);
  }
}

}  // namespace ssgd::tools
