#include "presentation/html/sections.h"

#include <fmt/format.h>

#include <filesystem>

#include "presentation/html/html_text.h"

namespace ssgd::html {

void timeline_section(Page& page, const std::string& path, const TimelineView& t,
                      const ReportInput* run_before) {
  page.heading(3, fmt::format("Timeline of iteration {} of {}", t.iteration,
                              std::filesystem::path(path).filename().string()));
  std::string what = fmt::format(
      "Iteration {} of {} ({}), {} long, every rank's tasks from the iteration's first start. "
      "Ranks whose tasks in it are the same (kind, name, start, duration) are drawn once: "
      "{} rank{} in {} group{}.",
      t.iteration, t.iterations,
      !t.complete         ? "the last; no iteration has tasks on every rank"
      : t.iterations >= 2 ? "the last one every rank has tasks in"
                          : "the only one",
      format_ms(t.span_ns), t.ranks, t.ranks == 1 ? "" : "s", t.groups.size(),
      t.groups.size() == 1 ? "" : "s");
  if (t.job_ranks > t.ranks) {
    what += fmt::format(
        " The file holds {} of the job's {} ranks (ssgd simulate --timeline-ranks; "
        "0 writes them all).",
        t.ranks, t.job_ranks);
  }
  if (run_before != nullptr) {
    what +=
        fmt::format(" The simulate report before it on the command line: {}.", run_before->path);
  }
  page.paragraph(what);
  if (t.groups_shown < t.groups.size()) {
    std::string left;
    for (std::size_t g = t.groups_shown; g < t.groups.size(); ++g) {
      if (g == t.groups_shown + 20) {
        left += "; ...";
        break;
      }
      left += (g == t.groups_shown ? "" : "; ") + t.groups[g].label;
    }
    page.paragraph(fmt::format("The first {} groups are drawn; {} more are left out: {}.",
                               t.groups_shown, t.groups.size() - t.groups_shown, left),
                   "note");
  }
  if (t.tasks_dropped > 0) {
    page.paragraph(fmt::format("{} of the {} tasks of the drawn rows, those of {} or less, are "
                               "not drawn, to keep the page small ({} bars at most).",
                               t.tasks_dropped, t.tasks_in_lanes, format_ms(t.dropped_up_to_ns),
                               kMaxTimelineBars),
                   "note");
  }
  page.chart(timeline_chart(t));
  Table gt{{"group", "ranks"}, {false, true}, {}};
  for (std::size_t g = 0; g < t.groups.size(); ++g) {
    if (g == 100) {
      gt.rows.push_back({fmt::format("... {} more groups", t.groups.size() - g), ""});
      break;
    }
    gt.rows.push_back({t.groups[g].label + (g < t.groups_shown ? "" : " (not drawn)"),
                       std::to_string(t.groups[g].ranks.size())});
  }
  page.add(gt.html(true));
}

}  // namespace ssgd::html
