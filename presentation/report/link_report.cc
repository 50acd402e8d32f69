#include "presentation/report/link_report.h"

#include <ostream>

#include <fmt/format.h>

#include "common/units.h"

namespace ssgd::report {

nlohmann::json links_json(const sim::ReplayResult& r) {
  nlohmann::json link_kinds = nlohmann::json::array();
  for (const auto& k : r.link_kinds) {
    link_kinds.push_back({{"kind", k.kind},
                          {"links", k.links},
                          {"bytes", k.bytes},
                          {"mean_utilisation", k.mean_utilisation},
                          {"max_utilisation", k.max_utilisation}});
  }
  nlohmann::json busiest = nlohmann::json::array();
  for (const auto& l : r.busiest_links) {
    busiest.push_back({{"link", l.name},
                       {"kind", l.kind},
                       {"capacity_bytes_per_s", l.capacity_bytes_per_s},
                       {"bytes", l.bytes},
                       {"utilisation", l.utilisation}});
  }
  return {{"by_kind", link_kinds}, {"busiest", busiest}};
}

void print_link_utilisation(const sim::ReplayResult& r, std::ostream& out) {
  if (r.link_kinds.empty()) return;
  out << fmt::format("\n  link utilisation over the run ({} model):\n", r.network_model);
  out << fmt::format("  {:<8} {:>8} {:>14} {:>8} {:>8}\n", "kind", "links", "bytes", "mean", "max");
  bool over = false;
  for (const auto& k : r.link_kinds) {
    out << fmt::format("  {:<8} {:>8} {:>14} {:>7.1f}% {:>7.1f}%\n", k.kind, k.links,
                       format_bytes(static_cast<std::int64_t>(k.bytes)), 100 * k.mean_utilisation,
                       100 * k.max_utilisation);
    over = over || k.max_utilisation > 1;
  }
  if (!r.busiest_links.empty()) {
    const auto& b = r.busiest_links.front();
    out << fmt::format("  busiest: {} ({}, {:.1f}%)\n", b.name, format_rate(b.capacity_bytes_per_s),
                       100 * b.utilisation);
  }
  if (over && r.network_model == "analytical") {
    out << "  above 100%: collectives that overlapped on a link, each timed alone as the "
           "analytical model does; network.model: flow shares the link between them\n";
  } else if (over) {
    out << fmt::format(
        "  above 100%: more bytes than the link carries in the run's time under "
        "the {} model, which should not happen: please report it\n",
        r.network_model);
  }
}

}  // namespace ssgd::report
