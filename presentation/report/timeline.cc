#include "presentation/report/timeline.h"

#include <fmt/format.h>

#include <ostream>
#include <string>

#include "common/chrome_trace_writer.h"

namespace ssgd::report {
namespace {

constexpr int kNetworkPid = 0;

int pid_of(std::int32_t rank) { return rank == dag::kAllRanks ? kNetworkPid : rank + 1; }

int tid_of(dag::ResourceKind kind) { return static_cast<int>(kind) + 1; }

}  // namespace

void write_timeline(const dag::TaskGraph& graph, const sim::Schedule& schedule,
                    const TimelineOptions& options, ChromeTraceWriter& out) {
  auto shown = [&](std::int32_t rank) {
    return rank == dag::kAllRanks || options.max_ranks <= 0 || rank < options.max_ranks;
  };
  // Metadata: names and order of processes and tracks.
  std::int32_t max_rank = -1;
  for (const auto& r : graph.resources()) max_rank = std::max(max_rank, r.rank);
  out.process_name(kNetworkPid, "network");
  out.process_sort_index(kNetworkPid, 0);
  std::int64_t ranks_shown = 0;
  for (std::int32_t rank = 0; rank <= max_rank; ++rank) {
    if (!shown(rank)) break;
    ++ranks_shown;
    out.process_name(pid_of(rank), fmt::format("rank {}", rank));
    out.process_sort_index(pid_of(rank), rank + 1);
  }
  if (options.job_ranks > 0) {
    out.event(fmt::format(R"({{"name":"ssgd_ranks","ph":"M","pid":{},"args":{{"ranks":{},"shown":{}}}}})",
                          kNetworkPid, options.job_ranks, ranks_shown));
  }
  for (const auto& r : graph.resources()) {
    if (!shown(r.rank)) continue;
    const char* name = r.kind == dag::ResourceKind::kNetwork ? "all-reduce" : dag::to_string(r.kind);
    out.thread_name(pid_of(r.rank), tid_of(r.kind), name);
  }
  const auto& layer_names = graph.layer_names();
  for (dag::TaskId t = 0; t < graph.task_count(); ++t) {
    const auto& task = graph.task(t);
    if (!shown(task.rank)) continue;
    const auto kind = graph.resources()[task.resource].kind;
    std::string name = dag::to_string(task.kind);
    if (task.layer >= 0 && static_cast<std::size_t>(task.layer) < layer_names.size()) {
      name += " " + layer_names[task.layer];
    }
    std::string args = fmt::format(R"("iteration":{},"task":{})", task.iteration, t);
    if (task.layer >= 0) args += fmt::format(R"(,"layer":{})", task.layer);
    if (task.kind == dag::TaskKind::kComm) {
      args += fmt::format(R"(,"bytes":{},"group":{},"replayed":{})", task.bytes, task.group,
                          task.duration_modelled ? "false" : "true");
    }
    out.slice(name, dag::to_string(task.kind), pid_of(task.rank), tid_of(kind),
              schedule.start[t].ns(), (schedule.end[t] - schedule.start[t]).ns(), args);
  }
  if (options.links != nullptr && !options.links->empty()) {
    const int pid = static_cast<int>(max_rank) + 2;
    out.process_name(pid, "links");
    out.process_sort_index(pid, -1);
    int tid = 0;
    for (const auto& track : *options.links) {
      ++tid;
      out.thread_name(pid, tid, track.name);
      for (const auto& [start, end] : track.busy) {
        out.slice("busy", "link", pid, tid, start.ns(), (end - start).ns());
      }
    }
  }
}

void write_timeline(const dag::TaskGraph& graph, const sim::Schedule& schedule,
                    const TimelineOptions& options, std::ostream& out) {
  ChromeTraceWriter writer(out, /*gzip=*/false);
  write_timeline(graph, schedule, options, writer);
  writer.finish();
}

void write_timeline_file(const dag::TaskGraph& graph, const sim::Schedule& schedule,
                         const TimelineOptions& options, const std::filesystem::path& path) {
  ChromeTraceFile file(path);
  write_timeline(graph, schedule, options, file.writer());
  file.commit();
}

}  // namespace ssgd::report
