#include "simulator/timeline.h"

#include <fmt/format.h>

#include <ostream>
#include <string>

#include "common/atomic_file.h"

namespace ssgd::sim {
namespace {

constexpr int kNetworkPid = 0;

int pid_of(std::int32_t rank) { return rank == dag::kAllRanks ? kNetworkPid : rank + 1; }

int tid_of(dag::ResourceKind kind) { return static_cast<int>(kind) + 1; }

std::string json_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
    } else {
      out += c;
    }
  }
  return out;
}

std::string micros(std::int64_t ns) {
  // Exact decimal microseconds with nanosecond digits; no floating point.
  const char* sign = ns < 0 ? "-" : "";
  const std::int64_t a = ns < 0 ? -ns : ns;
  return fmt::format("{}{}.{:03}", sign, a / 1000, a % 1000);
}

}  // namespace

void write_timeline(const dag::TaskGraph& graph, const Schedule& schedule,
                    const TimelineOptions& options, std::ostream& out) {
  auto shown = [&](std::int32_t rank) {
    return rank == dag::kAllRanks || options.max_ranks <= 0 || rank < options.max_ranks;
  };
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  auto emit = [&](const std::string& line) {
    if (!first) out << ",\n";
    out << line;
    first = false;
  };
  // Metadata: names and order of processes and tracks.
  std::int32_t max_rank = -1;
  for (const auto& r : graph.resources()) max_rank = std::max(max_rank, r.rank);
  emit(fmt::format(R"({{"name":"process_name","ph":"M","pid":{},"args":{{"name":"network"}}}})",
                   kNetworkPid));
  emit(fmt::format(R"({{"name":"process_sort_index","ph":"M","pid":{},"args":{{"sort_index":0}}}})",
                   kNetworkPid));
  for (std::int32_t rank = 0; rank <= max_rank; ++rank) {
    if (!shown(rank)) break;
    emit(fmt::format(R"({{"name":"process_name","ph":"M","pid":{},"args":{{"name":"rank {}"}}}})",
                     pid_of(rank), rank));
    emit(fmt::format(R"({{"name":"process_sort_index","ph":"M","pid":{},"args":{{"sort_index":{}}}}})",
                     pid_of(rank), rank + 1));
  }
  for (const auto& r : graph.resources()) {
    if (!shown(r.rank)) continue;
    const char* name = r.kind == dag::ResourceKind::kNetwork ? "all-reduce" : dag::to_string(r.kind);
    emit(fmt::format(R"({{"name":"thread_name","ph":"M","pid":{},"tid":{},"args":{{"name":"{}"}}}})",
                     pid_of(r.rank), tid_of(r.kind), name));
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
    emit(fmt::format(
        R"({{"name":"{}","cat":"{}","ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"args":{{{}}}}})",
        json_escape(name), dag::to_string(task.kind), pid_of(task.rank), tid_of(kind),
        micros(schedule.start[t].ns()), micros((schedule.end[t] - schedule.start[t]).ns()), args));
  }
  if (options.links != nullptr && !options.links->empty()) {
    const int pid = static_cast<int>(max_rank) + 2;
    emit(fmt::format(R"({{"name":"process_name","ph":"M","pid":{},"args":{{"name":"links"}}}})", pid));
    emit(fmt::format(R"({{"name":"process_sort_index","ph":"M","pid":{},"args":{{"sort_index":-1}}}})", pid));
    int tid = 0;
    for (const auto& track : *options.links) {
      ++tid;
      emit(fmt::format(R"({{"name":"thread_name","ph":"M","pid":{},"tid":{},"args":{{"name":"{}"}}}})",
                       pid, tid, json_escape(track.name)));
      for (const auto& [start, end] : track.busy) {
        emit(fmt::format(R"({{"name":"busy","cat":"link","ph":"X","pid":{},"tid":{},"ts":{},"dur":{}}})",
                         pid, tid, micros(start.ns()), micros((end - start).ns())));
      }
    }
  }
  out << "\n]}\n";
}

void write_timeline_file(const dag::TaskGraph& graph, const Schedule& schedule,
                         const TimelineOptions& options, const std::filesystem::path& path) {
  AtomicFile file(path);
  write_timeline(graph, schedule, options, file.stream());
  file.commit();
}

}  // namespace ssgd::sim
