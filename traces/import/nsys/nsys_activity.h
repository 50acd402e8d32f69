#pragma once
// The CUDA activity of an Nsight Systems export, one row at a time, into
// ssgd.trace.v1 events (docs/nsys.md, "What maps to what"):
//   CUPTI_ACTIVITY_KIND_RUNTIME  -> ApiCall (RUNTIME for cuda*, DRIVER for
//                                   cu*), the "_v<N>" suffix nsys adds dropped
//   CUPTI_ACTIVITY_KIND_KERNEL   -> Kernel (demangled name); NCCL's kernels
//                                   (traces/kernel_names.h) -> Collective only
//   CUPTI_ACTIVITY_KIND_MEMCPY   -> Memcpy (copyKind: CUPTI's enum)
//   CUPTI_ACTIVITY_KIND_MEMSET   -> Memset
// Read the runtime table first: a launch call made inside one of NCCL's
// NVTX ranges (traces/import/nsys/nsys_nvtx.h) links the kernel it
// launched to that range, which gives the collective its op and, when the
// range's payload says it, its size.
//
// Memory: one entry per launch call made inside an NCCL range and one
// record per NCCL kernel are kept until finish(); both are a few per
// collective. Every other row goes straight to `emit`.

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "traces/import/nsys/nsys_database.h"
#include "traces/import/nsys/nsys_nvtx.h"
#include "traces/import/nsys/nsys_schema.h"
#include "traces/import/nsys/nsys_strings.h"
#include "traces/proto/trace_events.pb.h"

namespace ssgd::trace {

struct NsysActivityStats {
  std::uint64_t kernels = 0, memcpys = 0, memsets = 0, api_calls = 0, collectives = 0;
  std::uint64_t nccl_kernels = 0;
  // NCCL kernels whose launch was inside an NCCL range, and of them those
  // whose range gave a size.
  std::uint64_t collectives_linked = 0;
  std::uint64_t collectives_sized = 0;
  // Collectives without a size, and why (the first row, as "table row N").
  std::uint64_t collectives_unsized = 0;
  std::string first_unsized;
  // All-gathers and reduce-scatters whose size stayed one rank's share (the
  // NVTX range's), the world size being unknown.
  std::uint64_t shares_unscaled = 0;
  std::set<std::int64_t> processes;              // globalPid of the kernels, when the table has it
  std::set<std::int32_t> devices;                // of the kernels
  std::map<std::string, std::uint64_t> skipped;  // by reason
};

class NsysActivityReader {
 public:
  using Emit = std::function<void(const v1::Event&)>;
  NsysActivityReader(NsysDatabase& db, const NsysSchema& schema, NsysStrings& strings,
                     const NsysNcclRanges& nccl, Emit emit);

  // Each reads its table when the file has it; throws ssgd::InputError
  // naming the table, row and column of a bad value.
  void read_runtime();
  void read_kernels();
  void read_memcpys();
  void read_memsets();
  // Emits the NCCL kernels' Collectives, numbered 0, 1, ... by start time.
  // `rank` and `world_size` fill the collective's rank and group size.
  void finish(std::int32_t rank, std::int32_t world_size);

  [[nodiscard]] const NsysActivityStats& stats() const { return stats_; }

 private:
  struct Times {
    std::int64_t start_ns;
    std::int64_t end_ns;
  };
  struct PendingCollective {
    std::int64_t rowid = 0;
    v1::Collective collective;
  };
  Times times(const NsysStatement& r) const;
  std::int32_t device(const NsysStatement& r, int index, std::string_view column) const;
  std::uint32_t stream(const NsysStatement& r, int index) const;
  std::uint64_t correlation(const NsysStatement& r, int index) const;
  std::int64_t bytes(const NsysStatement& r, int index) const;
  void nccl_kernel(const NsysStatement& r, const std::string& name, Times t, std::int32_t dev,
                   std::uint32_t str, std::uint64_t corr);
  void emit(const NsysStatement& r, std::string_view column);

  NsysDatabase& db_;
  const NsysSchema& schema_;
  NsysStrings& strings_;
  const NsysNcclRanges& nccl_;
  Emit emit_;
  NsysActivityStats stats_;
  std::unordered_map<std::uint64_t, const NsysNcclRange*> launches_;  // correlation id -> range
  std::vector<PendingCollective> pending_;
  v1::Event event_;
};

}  // namespace ssgd::trace
