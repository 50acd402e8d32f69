#pragma once
// `ssgd import pytorch` (and `ssgd import kineto`, the same import): a
// PyTorch profiler Chrome-trace JSON file, plain or gzip, to a .ssgdt trace
// of one rank. Both writers are recognised by content: Kineto's JSON
// object (torch.profiler with Kineto), and the legacy profiler's bare array
// of CPU ranges without categories ("pid": "CPU functions": torch <= 1.13
// built without Kineto, or use_kineto=False). docs/kineto.md says what maps
// to what, which profiler facts it relies on, and what is left out.
//
// Names: this front door is the importer's (pytorch_*); the kineto_* files
// read and map the profiler's Chrome-trace events, Kineto's and the legacy
// profiler's alike (named for the form they were written for first),
// legacy_layers.h the legacy file's layers.
//
// Streaming: traces/import/pytorch/kineto_json_reader.h reads one event at a time and
// traces/import/pytorch/kineto_mapping.h converts it; the converted events go through an
// EventSorter (traces/event_sorter.h), which keeps at most a bounded run of
// them in memory and spills the rest to temporary files next to the
// output, and is merged into the TraceWriter at the end. Since nothing is
// written before the whole JSON is read, top-level keys that Kineto writes
// after `traceEvents` (distributedInfo in on-demand traces,
// baseTimeNanoseconds in older Kineto) need no second pass. The output is
// written under a temporary name and renamed, so a failed import leaves
// nothing behind; the same input gives a byte-identical file, whatever the
// order of its events.
//
// Layer marks: unless they come from annotations in the file, the CPU
// ranges they are derived from go through a second, smaller sorter
// (traces/import/pytorch/kineto_layers.h); after the read, the derivation reads them once in
// time order and adds its marks to the events before they are written.
// CPU ranges (compute, gloo collectives, optimizer steps; a legacy file's
// layers) go through a third (traces/import/pytorch/cpu_profile_walk.h).
//
// A file from which no iteration, no layer and no collective can be
// recovered is an InputError: nothing is written.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "traces/import/pytorch/cpu_profile_walk.h"
#include "traces/import/pytorch/kineto_layers.h"
#include "traces/import/pytorch/kineto_mapping.h"
#include "traces/proto/capture_metadata.pb.h"

namespace ssgd::trace {

struct PytorchImportOptions {
  // The rank of the file's events; default: distributedInfo.rank, else the
  // ssgd/rank mark, else `name_rank`, else 0 (said in a warning).
  std::optional<std::int32_t> rank;
  // The rank the file's name gives, used when the file does not say
  // (rank_source "file name"). With `require_rank`, a file that says no rank
  // and has none here is an InputError at distributedInfo.rank, not rank 0.
  std::optional<std::int32_t> name_rank;
  bool require_rank = false;
  // Where forward/<layer> and backward/<layer> marks come from
  // (traces/import/pytorch/kineto_layers.h).
  KinetoLayerSource layers = KinetoLayerSource::kAuto;
  // Converted events held in memory before a sorted run is spilled.
  std::size_t sort_run_bytes = std::size_t{128} << 20;
  // Progress on stderr ([traces] logger, info) about this often.
  double progress_seconds = 5.0;
};

// Which profiler wrote the file.
enum class ProfilerFormat { kKineto, kLegacy };
std::string_view profiler_format_name(ProfilerFormat format);

struct PytorchImportSummary {
  ProfilerFormat format = ProfilerFormat::kKineto;
  std::string input;
  std::string output;
  std::uint64_t file_bytes = 0;  // size of the input file
  std::uint64_t json_bytes = 0;  // uncompressed JSON bytes
  bool compressed = false;
  std::uint64_t events_read = 0;  // elements of traceEvents
  std::uint64_t events_written = 0;
  std::int32_t rank = 0;
  std::string
      rank_source;  // "--rank", "distributedInfo.rank", "ssgd/rank mark", "file name" or "assumed"
  std::int32_t world_size = 0;  // 0: unknown
  std::size_t gpus = 0;         // deviceProperties entries
  std::size_t sort_runs = 0;    // runs spilled to disk (0: sorted in memory)
  KinetoMappingStats mapping;
  KinetoLayerSource layer_source = KinetoLayerSource::kMarks;  // the one used
  std::string layer_source_reason;                             // why, with --layers auto
  KinetoLayerStats layers;  // kModules / kOps: what the derivation found
  // The CPU walk: compute, gloo collectives, iterations from
  // Optimizer.step, a legacy file's layers (in cpu.layers).
  CpuWalkStats cpu;
  bool cpu_compute = false;  // CPU operators became kernels (no GPU kernels)
  std::string clock;         // "REALTIME", or "UNSPECIFIED" (a legacy file without clock mark)
  std::vector<std::string> warnings;
};

// Converts `input` into `output`. Throws ssgd::InputError for bad input
// (file, event index and field; a truncated file says so), and
// std::runtime_error when the output cannot be written.
PytorchImportSummary import_pytorch(const std::filesystem::path& input,
                                    const std::filesystem::path& output,
                                    const PytorchImportOptions& options = {});

// The capture metadata for an imported file, from its top-level keys.
// Appends what it ignored to `warnings`.
v1::CaptureMetadata kineto_capture_metadata(const std::map<std::string, nlohmann::json>& top_level,
                                            const std::string& file_name, std::int32_t rank,
                                            std::int32_t world_size,
                                            std::vector<std::string>& warnings);

// A readable account of what was converted and skipped.
void print_pytorch_import_summary(const PytorchImportSummary& summary, std::ostream& out);

}  // namespace ssgd::trace
