#pragma once
// NVTX_EVENTS of an Nsight Systems export: the ranges that give a trace its
// structure, and NCCL's own ranges, which say what each collective was.
//
//   iteration/<N>, forward/<l>, backward/<l>   MarkerRange, name kept
//     (the names of traces/marker_names.h: tracer/python/ssgd_marks.py's
//     NVTX backend, or any framework that writes them)
//   ProfilerStep#N                             MarkerRange iteration/N
//   ssgd/<key>=<value>                         metadata (rank, world size,
//     host, clock); grad_bytes and unknown keys kept as MarkerRanges
//   nccl<Op> (NCCL's ranges: ncclAllReduce, ncclBroadcast, ...) read into
//     NsysNcclRanges: the collective's op, and its size when the row's
//     payload says it ("Message size [bytes]" in the JSON payload)
// Push/pop (eventType 59) and start/end (60) ranges and marks (34) are
// read; domain names come from the domain-create rows (75). Everything
// else is counted by reason and skipped.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "traces/import/nsys/nsys_database.h"
#include "traces/import/nsys/nsys_schema.h"
#include "traces/import/nsys/nsys_strings.h"
#include "traces/marker_names.h"
#include "traces/proto/trace_events.pb.h"

namespace ssgd::trace {

// NVTX_EVENTS.eventType values (nsys's ENUM_NSYS_EVENT_TYPE).
inline constexpr std::int64_t kNvtxMark = 34;
inline constexpr std::int64_t kNvtxPushPopRange = 59;
inline constexpr std::int64_t kNvtxStartEndRange = 60;
inline constexpr std::int64_t kNvtxDomainCreate = 75;

// The thread id in nsys's serialized globalTid (the low 24 bits; docs/nsys.md).
std::uint64_t nsys_thread_id(std::int64_t global_tid);

// One NCCL API call's range on a host thread.
struct NsysNcclRange {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  v1::Collective::Op op = v1::Collective::UNKNOWN;
  std::optional<std::int64_t> size_bytes;
  std::int64_t rowid = 0;
};

// The NCCL ranges of every thread, to find the call a CUDA launch was in.
class NsysNcclRanges {
 public:
  void add(std::int64_t global_tid, const NsysNcclRange& range);
  // Sorts each thread's ranges; call before find().
  void finish();
  // The range of thread `global_tid` that holds time `t`, or null.
  [[nodiscard]] const NsysNcclRange* find(std::int64_t global_tid, std::int64_t t) const;
  [[nodiscard]] std::size_t size() const { return count_; }

 private:
  std::map<std::int64_t, std::vector<NsysNcclRange>> by_thread_;
  std::size_t count_ = 0;
};

// What the ssgd/<key>=<value> marks said (traces/marker_names.h): who the
// capture is, and the collective_bytes marks (collective_bytes/<op> and
// collective_ranks/<op> too) read but not applied
// (docs/nsys.md).
struct NsysMetadata : IdentityMarks {
  std::uint64_t collective_bytes_marks = 0;
  std::uint64_t collective_ranks_marks = 0;  // of them, ssgd/collective_ranks/<op>
};

struct NsysNvtxStats {
  std::uint64_t rows = 0;
  std::uint64_t markers = 0;          // MarkerRanges written
  std::uint64_t iteration_marks = 0;  // of them iteration/<N> (ProfilerStep#N included)
  std::uint64_t layer_marks = 0;      // forward/<l> and backward/<l>
  std::set<std::string> layers;       // the layers of the forward marks
  std::uint64_t nccl_ranges = 0;
  std::uint64_t nccl_ranges_sized = 0;
  std::map<std::string, std::uint64_t> skipped;  // by reason
  NsysMetadata metadata;
};

// Reads NVTX_EVENTS (when the file has it): the marks go to `emit`, NCCL's
// ranges to `nccl`. Throws ssgd::InputError naming the row and column of a
// bad value (a time that is not an integer, a range that ends before it
// starts, a name id not in StringIds, a malformed ssgd/ or iteration mark).
NsysNvtxStats read_nsys_nvtx(NsysDatabase& db, const NsysSchema& schema, NsysStrings& strings,
                             NsysNcclRanges& nccl,
                             const std::function<void(const v1::Event&)>& emit);

}  // namespace ssgd::trace
