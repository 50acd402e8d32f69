#include "presentation/html/timeline_input.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "presentation/html/json_fields.h"

namespace ssgd::html {
namespace {

// Times in microseconds beyond this (about 116 days) are refused, so that
// every time fits integer nanoseconds with room to add.
constexpr double kMaxMicros = 1e13;

struct Task {
  std::int64_t pid = 0, tid = 0, iteration = 0, start_ns = 0, dur_ns = 0;
  std::uint32_t kind = 0, name = 0;
};

class Strings {
 public:
  std::uint32_t intern(const std::string& s) {
    const auto [it, added] = index_.try_emplace(s, static_cast<std::uint32_t>(all_.size()));
    if (added) all_.push_back(s);
    return it->second;
  }
  [[nodiscard]] const std::string& operator[](std::uint32_t i) const { return all_[i]; }

 private:
  std::unordered_map<std::string, std::uint32_t> index_;
  std::vector<std::string> all_;
};

struct Events {
  std::vector<Task> tasks;
  Strings strings;
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> thread_names;
  std::int64_t job_ranks = 0;  // ssgd_ranks.args.ranks
};

std::int64_t micros_to_ns(const JsonFields& f, const Json& e, const std::string& at,
                          std::string_view key) {
  const double us = f.number(e, at, key);
  if (!(us >= 0 && us <= kMaxMicros)) {
    f.fail(JsonFields::join(at, key),
           fmt::format("expected microseconds from 0 to {:g}, got {}", kMaxMicros, us));
  }
  return std::llround(us * 1000.0);
}

void read_event(const JsonFields& f, const Json& e, std::size_t index, Events& out) {
  const std::string at = JsonFields::element("traceEvents", index);
  f.require_object(e, at);
  const std::string ph = f.text(e, at, "ph");
  if (ph == "M") {
    const std::string name = f.opt_text(e, at, "name");
    if (name == "thread_name") {
      const std::int64_t pid = f.count(e, at, "pid");
      const std::int64_t tid = f.count(e, at, "tid");
      out.thread_names[{pid, tid}] = f.text(e, at, "args.name");
    } else if (name == "ssgd_ranks") {
      out.job_ranks = f.count(e, at, "args.ranks");
    }
    return;
  }
  if (ph != "X") return;  // ssgd writes no others; any are not drawn
  const std::string cat = f.text(e, at, "cat");
  if (cat == "link") return;  // the links' busy tracks (--timeline with link tracks)
  Task t;
  t.name = out.strings.intern(f.text(e, at, "name"));
  t.kind = out.strings.intern(cat);
  t.pid = f.count(e, at, "pid");
  t.tid = f.count(e, at, "tid");
  t.start_ns = micros_to_ns(f, e, at, "ts");
  t.dur_ns = micros_to_ns(f, e, at, "dur");
  const Json* iteration = f.find(e, at, "args.iteration");
  if (iteration == nullptr) {
    f.fail(JsonFields::join(at, "args.iteration"),
           "missing: not a timeline of ssgd simulate --timeline (its tasks carry their "
           "iteration); ssgd report does not read other Chrome traces");
  }
  t.iteration = f.as_count(*iteration, JsonFields::join(at, "args.iteration"));
  if (t.iteration > 100'000'000) {
    f.fail(JsonFields::join(at, "args.iteration"),
           fmt::format("{} iterations is beyond what ssgd simulates", t.iteration));
  }
  out.tasks.push_back(t);
}

Events parse_events(const std::string& path, std::string_view text) {
  const JsonFields f(path);
  Events events;
  std::string last_key;
  bool in_events = false, saw_events = false;
  std::size_t index = 0;
  const auto callback = [&](int depth, Json::parse_event_t event, Json& parsed) -> bool {
    using E = Json::parse_event_t;
    if (depth == 1 && event == E::key) {
      last_key = parsed.get<std::string>();
      in_events = false;
      return true;
    }
    if (depth == 1 && event == E::array_start && last_key == "traceEvents") {
      in_events = saw_events = true;
      return true;
    }
    if (depth == 1 && event == E::array_end) in_events = false;
    if (!in_events || depth != 2) return true;
    if (event == E::object_start) return true;
    if (event == E::object_end) {
      read_event(f, parsed, index++, events);
      return false;  // checked and kept as a Task: drop the JSON
    }
    if (event == E::array_start || event == E::value) {
      f.fail(JsonFields::element("traceEvents", index),
             "expected an event (an object), got " +
                 (event == E::value ? JsonFields::describe(parsed) : std::string("an array")));
    }
    return true;
  };
  Json top;
  try {
    top = Json::parse(text, callback);
  } catch (const Json::parse_error& e) {
    std::string what = e.what();
    const std::size_t tag_end = what.find("] ");
    if (what.rfind("[json.exception", 0) == 0 && tag_end != std::string::npos)
      what.erase(0, tag_end + 2);
    const std::size_t offset = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    const auto line =
        1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n');
    throw InputError(InputLocation{path, line, std::nullopt, ""}, "not valid JSON: " + what);
  } catch (const Json::exception& e) {
    throw InputError(InputLocation{path, std::nullopt, std::nullopt, ""},
                     std::string("not valid JSON: ") + e.what());
  }
  if (!top.is_object()) f.fail("", "expected a timeline (an object with traceEvents)");
  if (!saw_events) {
    const Json* te = f.find(top, "", "traceEvents");
    if (te == nullptr) f.fail("traceEvents", "missing");
    f.fail("traceEvents", "expected an array of events, got " + JsonFields::describe(*te));
  }
  if (events.tasks.empty()) f.fail("traceEvents", "no tasks ('X' events): nothing to draw");
  return events;
}

std::string thread_label(const Events& ev, std::int64_t pid, std::int64_t tid) {
  const auto it = ev.thread_names.find({pid, tid});
  return it != ev.thread_names.end() ? it->second : fmt::format("thread {}", tid);
}

}  // namespace

std::string rank_group_label(const std::vector<std::int64_t>& ranks) {
  if (ranks.size() == 1) return fmt::format("rank {}", ranks.front());
  std::string out = "ranks ";
  int ranges = 0;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (i > 0) out += ", ";
    if (++ranges > 4) {  // a label stays short: it names every bar of the group
      out += "...";
      break;
    }
    out += j == i ? fmt::format("{}", ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
    i = j + 1;
  }
  return out + fmt::format(" ({} identical)", ranks.size());
}

TimelineView read_timeline(const std::string& path, std::string_view text) {
  const Events ev = parse_events(path, text);
  TimelineView view;
  view.job_ranks = ev.job_ranks;

  // The iteration: the last one every rank has tasks in. Memory follows the
  // tasks, not the iteration numbers (a hostile file may name any).
  std::int64_t last = 0;
  std::set<std::pair<std::int64_t, std::int64_t>> seen;  // (iteration, pid) of the ranks
  std::set<std::int64_t> pids;
  for (const Task& t : ev.tasks) {
    last = std::max(last, t.iteration);
    if (t.pid == 0) continue;
    seen.emplace(t.iteration, t.pid);
    pids.insert(t.pid);
  }
  std::map<std::int64_t, std::size_t> ranks_in;  // iteration -> ranks with tasks in it
  for (const auto& [iteration, pid] : seen) ++ranks_in[iteration];
  view.iterations = last + 1;
  view.iteration = last;
  view.complete = false;
  for (auto it = ranks_in.rbegin(); it != ranks_in.rend(); ++it) {
    if (it->second == pids.size()) {
      view.iteration = it->first;
      view.complete = true;
      break;
    }
  }

  std::vector<const Task*> tasks;
  std::int64_t start = INT64_MAX;
  for (const Task& t : ev.tasks) {
    if (t.iteration != view.iteration) continue;
    tasks.push_back(&t);
    start = std::min(start, t.start_ns);
  }
  for (const Task* t : tasks)
    view.span_ns = std::max(view.span_ns, t->start_ns + t->dur_ns - start);

  // Each rank's tasks in the iteration, relative to its start, in a fixed order.
  using Key = std::tuple<std::int64_t, std::int64_t, std::string_view, std::string_view,
                         std::int64_t>;  // start, lane, name, kind, duration
  std::map<std::int64_t, std::vector<Key>> by_pid;
  for (const Task* t : tasks) {
    by_pid[t->pid].emplace_back(t->start_ns - start, t->tid, ev.strings[t->name],
                                ev.strings[t->kind], t->dur_ns);
  }
  for (auto& [pid, list] : by_pid) std::sort(list.begin(), list.end());

  // Groups of identical ranks, by first rank.
  std::map<std::vector<Key>, std::size_t> group_of;
  std::vector<std::int64_t> representative;  // a pid per group
  for (const auto& [pid, list] : by_pid) {
    if (pid == 0) continue;
    ++view.ranks;
    const auto [it, added] = group_of.try_emplace(list, view.groups.size());
    if (added) {
      view.groups.emplace_back();
      representative.push_back(pid);
    }
    view.groups[it->second].ranks.push_back(pid - 1);
  }
  for (TimelineGroup& g : view.groups) g.label = rank_group_label(g.ranks);
  view.groups_shown = std::min(view.groups.size(), kMaxTimelineGroups);

  // The lanes and their bars: each shown group's tracks, then the network's.
  auto add_lanes = [&](std::int64_t pid, const std::string& label) {
    const auto it = by_pid.find(pid);
    if (it == by_pid.end()) return;
    std::vector<std::int64_t> tids;
    for (const Key& k : it->second) tids.push_back(std::get<1>(k));
    std::sort(tids.begin(), tids.end());
    tids.erase(std::unique(tids.begin(), tids.end()), tids.end());
    for (const std::int64_t tid : tids) {
      const std::string lane = label + " \u00b7 " + thread_label(ev, pid, tid);
      view.lanes.push_back(lane);
      for (const Key& k : it->second) {
        if (std::get<1>(k) != tid) continue;
        view.bars.push_back({lane, std::string(std::get<3>(k)), std::string(std::get<2>(k)),
                             std::get<0>(k), std::get<0>(k) + std::get<4>(k)});
      }
    }
  };
  for (std::size_t g = 0; g < view.groups_shown; ++g)
    add_lanes(representative[g], view.groups[g].label);
  if (by_pid.count(0) != 0) {
    view.network = true;
    add_lanes(0, "network");
  }
  view.tasks_in_lanes = view.bars.size();

  // At most kMaxTimelineBars: the shortest tasks go first.
  if (view.bars.size() > kMaxTimelineBars) {
    std::vector<std::int64_t> durations;
    for (const TimelineBar& b : view.bars) durations.push_back(b.end_ns - b.start_ns);
    std::sort(durations.begin(), durations.end(), std::greater<>());
    view.dropped_up_to_ns = durations[kMaxTimelineBars];
    std::vector<TimelineBar> kept;
    for (TimelineBar& b : view.bars) {
      if (b.end_ns - b.start_ns > view.dropped_up_to_ns) kept.push_back(std::move(b));
    }
    view.tasks_dropped = view.bars.size() - kept.size();
    view.bars = std::move(kept);
  }
  return view;
}

}  // namespace ssgd::html
