#pragma once
// `ssgd import nsys FILE.sqlite`: the SQLite export of an NVIDIA Nsight
// Systems report (`nsys export --type sqlite`) to a .ssgdt trace of one
// rank, as `ssgd import pytorch` converts Kineto's JSON (docs/nsys.md):
// kernels, copies, memsets and CUDA calls from the CUPTI_ACTIVITY_KIND_*
// tables (traces/import/nsys/nsys_activity.h), iteration and layer marks
// from NVTX ranges and NCCL's own NVTX ranges for the collectives
// (traces/import/nsys/nsys_nvtx.h), the host and its GPUs from the
// TARGET_INFO_* tables (traces/import/nsys/nsys_target_info.h).
//
// The database is opened read-only (traces/import/nsys/nsys_database.h)
// and its tables checked by name first (traces/import/nsys/nsys_schema.h).
// Rows are read one at a time into an EventSorter (traces/event_sorter.h),
// which spills sorted runs beside the output, so memory stays bounded
// whatever the size of the export; the output is written under a temporary
// name and renamed, and the same file gives a byte-identical trace.
//
// Every problem with the input is an ssgd::InputError naming the file, the
// table, the row and the column; a file without kernels, or from which no
// iteration, no layer and no collective can be recovered, is one too, and
// nothing is written.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "traces/import/nsys/nsys_activity.h"
#include "traces/import/nsys/nsys_nvtx.h"

namespace ssgd::trace {

struct NsysImportOptions {
  // The rank of the file's events; default: the ssgd/rank mark, else
  // `name_rank`, else 0 (said in a warning).
  std::optional<std::int32_t> rank;
  // The rank the file's name gives (rank_source "file name"). With
  // `require_rank`, a file that says no rank and has none here is an error.
  std::optional<std::int32_t> name_rank;
  bool require_rank = false;
  // Converted events held in memory before a sorted run is spilled.
  std::size_t sort_run_bytes = std::size_t{128} << 20;
};

struct NsysImportSummary {
  std::string input;
  std::string output;
  std::uint64_t file_bytes = 0;
  std::uint64_t events_written = 0;
  std::int32_t rank = 0;
  std::string rank_source;      // "--rank", "ssgd/rank mark", "file name" or "assumed"
  std::int32_t world_size = 0;  // 0: unknown
  std::string hostname;         // empty: unknown
  std::string clock;            // "REALTIME" or "UNSPECIFIED"
  std::string clock_source;
  std::size_t gpus = 0;
  std::size_t sort_runs = 0;
  NsysNvtxStats nvtx;
  NsysActivityStats activity;
  std::vector<std::string> warnings;
};

// Converts `input` into `output`. Throws ssgd::InputError for bad input and
// std::runtime_error when the output cannot be written.
NsysImportSummary import_nsys(const std::filesystem::path& input,
                              const std::filesystem::path& output,
                              const NsysImportOptions& options = {});

// A readable account of what was converted and skipped, and why.
void print_nsys_import_summary(const NsysImportSummary& summary, std::ostream& out);

}  // namespace ssgd::trace
