#include "presentation/report/chakra_export.h"

#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <unordered_set>

#include <fmt/format.h>

#include "common/error.h"
#include "common/output_target.h"
#include "common/work_context.h"
#include "traces/chakra/chakra_et.h"
#include "traces/chakra/et_file.h"

namespace ssgd::report {
namespace {

using chakra::Attribute;

std::uint64_t round_micros(std::int64_t ns) {
  return static_cast<std::uint64_t>((ns + 500) / 1000);
}

// Refuses files of this prefix for ranks >= `ranks`, left by another export.
void check_no_stale_ranks(const std::filesystem::path& dir, const ChakraExportOptions& options,
                          std::int64_t ranks) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::string prefix;
    std::int64_t rank = 0;
    if (!chakra::parse_file_name(entry.path().filename().string(), prefix, rank) ||
        prefix != options.prefix) {
      continue;
    }
    if (rank >= ranks) {
      throw InputError({entry.path().string(), std::nullopt, std::nullopt, "-o"},
                       fmt::format("is rank {} of an earlier export, but this export has {} "
                                   "ranks: remove it or export to another folder",
                                   rank, ranks));
    }
  }
}

}  // namespace

ChakraExportSummary export_chakra(const dag::TaskGraph& graph, const sim::Schedule& schedule,
                                  std::int64_t ranks, const std::filesystem::path& dir,
                                  const ChakraExportOptions& options) {
  ChakraExportSummary summary;
  summary.ranks = ranks;
  WorkContext context("writing Chakra ET files into", dir.string(), nullptr, "rank");
  check_no_stale_ranks(dir, options, ranks);
  // Each resource's tasks in the order they ran: the ctrl_deps.
  std::vector<std::vector<dag::TaskId>> by_resource(graph.resources().size());
  for (dag::TaskId t = 0; t < graph.task_count(); ++t)
    by_resource[graph.task(t).resource].push_back(t);
  std::vector<dag::TaskId> ran_after(graph.task_count(), dag::kNoTask);
  for (auto& tasks : by_resource) {
    std::sort(tasks.begin(), tasks.end(), [&schedule](dag::TaskId a, dag::TaskId b) {
      return std::tie(schedule.start[a], schedule.end[a], a) <
             std::tie(schedule.start[b], schedule.end[b], b);
    });
    for (std::size_t k = 1; k < tasks.size(); ++k) ran_after[tasks[k]] = tasks[k - 1];
  }
  // Tasks per rank file: its own and the collectives.
  std::vector<dag::TaskId> shared;
  std::vector<std::vector<dag::TaskId>> own(static_cast<std::size_t>(ranks));
  for (dag::TaskId t = 0; t < graph.task_count(); ++t) {
    const auto& task = graph.task(t);
    if (task.rank == dag::kAllRanks) {
      shared.push_back(t);
    } else if (task.rank >= 0 && task.rank < ranks) {
      own[static_cast<std::size_t>(task.rank)].push_back(t);
    } else {
      throw std::invalid_argument(fmt::format(
          "export_chakra: task {} of rank {} outside the {} ranks", t, task.rank, ranks));
    }
  }
  summary.collectives = static_cast<std::int64_t>(shared.size());
  // Every file is written into a staging folder inside `dir` and moved into
  // `dir` only once all are: a failure (a full disk, running out of memory
  // while building a rank's file) leaves nothing new in `dir` and changes
  // none of its files.
  namespace fs = std::filesystem;
  const fs::path staging = dir / fmt::format(".ssgd-export.tmp.{}", ::getpid());
  std::error_code ec;
  fs::remove_all(staging, ec);  // a killed run's of the same process id
  fs::create_directory(staging);
  std::vector<std::string> names;
  std::vector<fs::path> moved;
  try {
    // Where each file goes: a regular file (or a link's file) is replaced;
    // anything else (a FIFO, a device, a folder) is refused before any is written.
    std::vector<fs::path> destinations;
    for (std::int64_t r = 0; r < ranks; ++r) {
      const fs::path path = dir / chakra::file_name(options.prefix, r, options.gzip);
      const OutputTarget target = output_target(path);
      if (target.kind != OutputKind::kFile) {
        throw InputError({path.string(), std::nullopt, std::nullopt, "-o"},
                         target.kind == OutputKind::kStream
                             ? "is " + target.what + ", not a regular file: a rank's file is "
                               "written whole and renamed into place"
                             : target.what + ", not a regular file");
      }
      destinations.push_back(target.path);
    }
    for (std::int64_t r = 0; r < ranks; ++r) {
      context.set_position(r);
      chakra::ExecutionTrace et;
      et.metadata.version = "0.0.4";
      et.metadata.attrs.push_back(Attribute::string("ssgd_export", "ssgd export chakra"));
      if (options.gpus_per_node > 0 && ranks % options.gpus_per_node == 0) {
        et.metadata.attrs.push_back(Attribute::int64("ssgd_nodes", ranks / options.gpus_per_node));
        et.metadata.attrs.push_back(Attribute::int64("ssgd_gpus_per_node", options.gpus_per_node));
      }
      std::vector<dag::TaskId> tasks = own[static_cast<std::size_t>(r)];
      tasks.insert(tasks.end(), shared.begin(), shared.end());
      std::sort(tasks.begin(), tasks.end());
      const auto in_file = [&graph, r](dag::TaskId t) {
        const auto rank = graph.task(t).rank;
        return rank == r || rank == dag::kAllRanks;
      };
      for (const dag::TaskId t : tasks) {
        const auto& task = graph.task(t);
        chakra::Node n;
        n.id = t;
        n.name = graph.describe(t);
        const bool comm = task.kind == dag::TaskKind::kComm;
        n.type =
            static_cast<std::int32_t>(comm ? chakra::NodeType::kCommColl : chakra::NodeType::kComp);
        std::unordered_set<dag::TaskId> deps;
        for (const dag::TaskId p : graph.predecessors(t)) {
          if (!in_file(p)) {
            if (graph.task(p).rank != dag::kAllRanks && task.rank != dag::kAllRanks) {
              ++summary.cross_rank_edges;
            }
            continue;
          }
          if (deps.insert(p).second) n.data_deps.push_back(p);
        }
        if (const dag::TaskId before = ran_after[t];
            before != dag::kNoTask && in_file(before) && !deps.contains(before)) {
          n.ctrl_deps.push_back(before);
        }
        summary.data_deps += static_cast<std::int64_t>(n.data_deps.size());
        summary.ctrl_deps += static_cast<std::int64_t>(n.ctrl_deps.size());
        const std::int64_t start = schedule.start[t].ns();
        const std::int64_t duration = (schedule.end[t] - schedule.start[t]).ns();
        n.start_time_micros = round_micros(start);
        n.duration_micros = round_micros(duration);
        n.attrs.push_back(Attribute::boolean(
            "is_cpu_op", task.kind == dag::TaskKind::kIo || task.kind == dag::TaskKind::kH2d));
        if (comm) {
          n.attrs.push_back(Attribute::int64(
              "comm_type", static_cast<std::int64_t>(chakra::CollectiveType::kAllReduce)));
          n.attrs.push_back(Attribute::int64("comm_size", task.bytes));
        }
        n.attrs.push_back(Attribute::string("ssgd_task_kind", dag::to_string(task.kind)));
        n.attrs.push_back(Attribute::int64("ssgd_iteration", task.iteration));
        n.attrs.push_back(Attribute::int64("ssgd_layer", task.layer));
        n.attrs.push_back(Attribute::int64("ssgd_start_ns", start));
        n.attrs.push_back(Attribute::int64("ssgd_duration_ns", duration));
        et.nodes.push_back(std::move(n));
      }
      summary.nodes += static_cast<std::int64_t>(et.nodes.size());
      names.push_back(chakra::file_name(options.prefix, r, options.gzip));
      chakra::write_execution_trace(staging / names.back(), et);
    }
    for (std::size_t k = 0; k < names.size(); ++k) {
      fs::rename(staging / names[k], destinations[k]);
      moved.push_back(destinations[k]);
    }
  } catch (...) {
    // A rename that fails (it does not, within one folder) takes back those before it.
    for (const auto& p : moved) fs::remove(p, ec);
    fs::remove_all(staging, ec);
    throw;
  }
  fs::remove_all(staging, ec);
  return summary;
}

}  // namespace ssgd::report
