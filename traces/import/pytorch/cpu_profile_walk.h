#pragma once
// The CPU side of a PyTorch profile, read once in time order after the
// file: CPU compute (traces/import/pytorch/cpu_compute.h), gloo collectives
// (traces/import/pytorch/host_collectives.h), iterations from Optimizer.step when the file
// marks none, and the layers of a legacy file (traces/import/pytorch/legacy_layers.h).
// docs/kineto.md ("CPU captures") has the rules.
//
// The mapper hands it CPU ranges while the file is read; they go through an
// EventSorter of their own (bounded run in memory, the rest spilled next to
// the output), since neither profiler writes them in time order. The walk
// then holds one stack per thread, one record per collective, and, for
// legacy layers, the ranges of the current iteration.
//
// Iterations: with iteration marks (iteration/<N> or ProfilerStep#N), each
// mark's range is one; without, each outermost `Optimizer.step#...` range
// ends one, which starts at the previous step's end (the first at the
// first range), and the walk writes it as a MarkerRange iteration/<N>, N
// from 0. Work after the last step is in no iteration.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "traces/event_sorter.h"
#include "traces/import/pytorch/cpu_compute.h"
#include "traces/import/pytorch/cpu_range.h"
#include "traces/import/pytorch/host_collectives.h"
#include "traces/import/pytorch/legacy_layers.h"
#include "traces/proto/trace_events.pb.h"

namespace ssgd::trace {

struct CpuWalkOptions {
  // Write CPU compute kernels: the file has no GPU kernels.
  bool compute = false;
  // The file marks no iteration: Optimizer.step ranges end them.
  bool iterations_from_steps = false;
  // Derive layer marks by the legacy alignment.
  bool legacy_layers = false;
  // Domain of the marks the walk writes.
  std::string domain = "ssgd:cpu";
  // For the collectives; `iterations` is filled by the walk.
  HostCollectiveOptions collectives;
};

struct CpuWalkStats {
  CpuComputeStats compute;
  HostCollectiveStats collectives;
  LegacyLayerStats layers;
  std::uint64_t iterations = 0;       // iteration spans (marks or steps)
  std::uint64_t optimizer_steps = 0;  // outermost Optimizer.step ranges
  std::uint64_t step_iterations = 0;  // iteration marks written from them
  // The iterations written from Optimizer.step ranges, and the threads of
  // their steps (the Kineto layer derivation takes them as its steps).
  std::vector<IterationSpan> step_spans;
  std::vector<std::uint64_t> step_threads;
  std::uint64_t ranges = 0;   // CPU ranges read
  std::size_t sort_runs = 0;  // runs spilled
};

class CpuProfileWalk {
 public:
  using Emit = std::function<void(const v1::Event&)>;
  // `spill_dir` and `run_bytes` as for EventSorter.
  CpuProfileWalk(std::filesystem::path spill_dir, std::size_t run_bytes);

  void add(const CpuRange& range);
  // Reads every range added, in time order, and emits what `options` asks
  // for. Call once.
  CpuWalkStats walk(const CpuWalkOptions& options, const Emit& emit);

 private:
  EventSorter sorter_;
};

}  // namespace ssgd::trace
