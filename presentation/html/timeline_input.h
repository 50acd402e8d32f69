#pragma once
// A timeline of `ssgd simulate --timeline` (Chrome trace-event JSON,
// presentation/report/timeline.cc) as `ssgd report` draws it: one iteration,
// ranks whose tasks in it are identical drawn once as a group. The file is
// parsed one event at a time (each event is checked and dropped), so only
// the tasks' compact records are held. Anything that is not such a
// timeline, and any event field of the wrong type, is an ssgd::InputError
// naming the file, the event (traceEvents[i]) and the field.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ssgd::html {

// The most groups drawn, and the most bars in the chart (tasks shorter than
// the shortest drawn are left out, and the page says so).
inline constexpr std::size_t kMaxTimelineGroups = 8;
inline constexpr std::size_t kMaxTimelineBars = 3000;

struct TimelineBar {
  std::string lane;  // "ranks 0-15 (16 identical) · gpu", "network · all-reduce"
  std::string kind, name;
  std::int64_t start_ns = 0, end_ns = 0;  // from the iteration's start
};

struct TimelineGroup {
  std::vector<std::int64_t> ranks;  // ascending
  std::string label;                // "ranks 0-15 (16 identical)", "rank 5"
};

struct TimelineView {
  std::int64_t iteration = 0;         // the iteration drawn
  std::int64_t iterations = 0;        // iterations in the file
  bool complete = true;               // every rank has tasks in it (else it is the last)
  std::int64_t ranks = 0;             // ranks with tasks in the iteration
  std::int64_t job_ranks = 0;         // the job's ranks, when the file says (ssgd_ranks); 0: not said
  std::int64_t span_ns = 0;           // first start to last end of the iteration
  std::vector<TimelineGroup> groups;  // all groups, by first rank
  std::size_t groups_shown = 0;       // the first groups_shown are drawn
  bool network = false;               // a network lane is drawn
  std::vector<std::string> lanes;     // in drawing order
  std::vector<TimelineBar> bars;      // the drawn bars, in lane order
  std::size_t tasks_in_lanes = 0;     // tasks of the drawn lanes
  std::int64_t dropped_up_to_ns = 0;  // tasks this long or shorter are not drawn
  std::size_t tasks_dropped = 0;
};

// "rank 5", "ranks 0-3, 6 (5 identical)".
std::string rank_group_label(const std::vector<std::int64_t>& ranks);

// `text` read from `path`: a JSON object with traceEvents written by
// ssgd simulate --timeline.
TimelineView read_timeline(const std::string& path, std::string_view text);

}  // namespace ssgd::html
