#include "dag/critical_path.h"

#include <algorithm>

namespace ssgd::dag {
namespace {

void add_kinds(const TaskGraph& graph, CriticalPath& path) {
  path.task_count = path.tasks.size();
  for (TaskId t : path.tasks) {
    const Task& task = graph.task(t);
    path.time_by_kind[static_cast<int>(task.kind)] += task.duration;
  }
}

}  // namespace

CriticalPath longest_path(const TaskGraph& graph) {
  CriticalPath path;
  const auto n = graph.task_count();
  if (n == 0) return path;
  std::vector<Duration> finish(n);
  std::vector<TaskId> via(n, kNoTask);
  for (TaskId t : graph.topological_order()) {
    Duration start;
    for (TaskId p : graph.predecessors(t)) {
      if (via[t] == kNoTask || finish[p] > start) {
        start = finish[p];
        via[t] = p;
      }
    }
    finish[t] = start + graph.task(t).duration;
  }
  TaskId last = 0;
  for (TaskId t = 1; t < n; ++t) {
    if (finish[t] > finish[last]) last = t;
  }
  for (TaskId t = last; t != kNoTask; t = via[t]) path.tasks.push_back(t);
  std::reverse(path.tasks.begin(), path.tasks.end());
  path.length = finish[last];
  add_kinds(graph, path);
  return path;
}

CriticalPath scheduled_critical_path(const TaskGraph& graph, const ScheduledTimes& times) {
  CriticalPath path;
  const auto n = graph.task_count();
  if (n == 0) return path;
  TaskId last = 0;
  for (TaskId t = 1; t < n; ++t) {
    if (times.end[t] > times.end[last]) last = t;
  }
  for (TaskId t = last; t != kNoTask; t = times.started_by[t]) {
    path.tasks.push_back(t);
    if (path.tasks.size() > n) break;  // a malformed started_by chain; never loop forever
  }
  std::reverse(path.tasks.begin(), path.tasks.end());
  path.length = times.end[last] - Time::zero();
  add_kinds(graph, path);
  Duration busy;
  for (auto d : path.time_by_kind) busy += d;
  path.gaps = path.length - busy;
  return path;
}

}  // namespace ssgd::dag
