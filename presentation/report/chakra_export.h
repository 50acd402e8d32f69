#pragma once
// `ssgd export chakra`: the S-SGD DAG ssgd simulated (every rank, as
// scheduled) as one Chakra execution trace per rank, `<prefix>.<rank>.et`
// in a folder (traces/chakra/, docs/chakra.md):
//   - a rank's compute, io and h2d tasks are COMP_NODEs of its file (io and
//     h2d with is_cpu_op, so ASTRA-sim runs them beside the GPU's work);
//   - each gradient collective is a COMM_COLL_NODE in every rank's file,
//     with the same id: comm_type ALL_REDUCE and comm_size in bytes, both
//     int64 (the member ASTRA-sim reads), no pg_name (every rank);
//   - data_deps are the DAG's edges within the rank's file; ctrl_deps add
//     the order each serial resource ran its tasks in the simulation, so a
//     tool that orders ready work otherwise still runs it in ssgd's order;
//   - start_time_micros and duration_micros are the simulated times rounded
//     to whole microseconds; ssgd_start_ns and ssgd_duration_ns keep them to
//     the nanosecond, and ssgd_task_kind, ssgd_iteration and ssgd_layer the
//     task, for `ssgd import chakra`.
// Files are written into a staging folder inside the folder
// (.ssgd-export.tmp.<pid>) and moved into it only once every rank's is
// complete, so a failure (a full disk, out of memory) leaves nothing new and
// changes no file there. Files of this prefix for ranks the export does not
// have are refused, so an import of the folder never mixes two exports.

#include <cstdint>
#include <filesystem>
#include <string>

#include "dag/task_graph.h"
#include "simulator/engine/schedule.h"

namespace ssgd::report {

struct ChakraExportOptions {
  std::string prefix = "ssgd";
  bool gzip = false;  // <prefix>.<rank>.et.gz (ASTRA-sim reads plain files only)
  // The ranks' shape, nodes of this many GPUs (0: not said): written to every
  // file's GlobalMetadata as ssgd_nodes and ssgd_gpus_per_node, which
  // `ssgd import chakra` keeps, so a replay of the graph runs on the same
  // nodes.
  std::int64_t gpus_per_node = 0;
};

struct ChakraExportSummary {
  std::int64_t ranks = 0;
  std::int64_t nodes = 0;        // over all files
  std::int64_t collectives = 0;  // each counted once
  std::int64_t data_deps = 0;
  std::int64_t ctrl_deps = 0;
  std::int64_t cross_rank_edges =
      0;  // edges between two ranks' own tasks: not representable, left out
};

// `graph` must hold every rank (not folded) and `schedule` be its run.
ChakraExportSummary export_chakra(const dag::TaskGraph& graph, const sim::Schedule& schedule,
                                  std::int64_t ranks, const std::filesystem::path& dir,
                                  const ChakraExportOptions& options);

}  // namespace ssgd::report
