#pragma once
// The names of the marker ranges (NVTX or record_function ranges) that give
// a trace its structure, written and read in one place:
//
//   iteration/<N>              an iteration (also PyTorch's ProfilerStep#N)
//   forward/<layer>            a layer's forward pass
//   backward/<layer>           a layer's backward pass
//   ssgd/<key>=<value>         metadata, written once by the capture helper
//                              (tracer/python/) at the start of the first
//                              marked iteration, as zero-length ranges:
//     ssgd/rank=<r>, ssgd/world_size=<w>, ssgd/hostname=<h>
//     ssgd/clock_realtime_ns=<ns>        CLOCK_REALTIME at the range's start
//     ssgd/grad_bytes/<layer>=<bytes>    gradient bytes of a layer
//     ssgd/collective_bytes=<b0>,<b1>,...  each iteration's collectives'
//                                        sizes, in launch order
//     ssgd/collective_bytes/<op>=<b0>,...  the sizes of one op's collectives
//                                        of an iteration, in that op's launch
//                                        order (<op>: all_reduce, all_gather,
//                                        reduce, broadcast, reduce_scatter)
//     ssgd/collective_ranks/<op>=<n>     the ranks of the process group that
//                                        op's collectives run on: how many,
//     ssgd/collective_ranks/<op>=<r0>,<r1>,...  or which (this rank's group)
//     ssgd/activation_bytes/<layer>=<bytes>  what a layer's forward saved
//                                        for its backward (one micro-batch)
//
// Readers: walk/trace_profile.h and walk/iteration_tasks.h (iteration and
// layer marks, grad_bytes, activation_bytes), the PyTorch and Nsight importers (everything;
// the identity marks through IdentityMarks below).

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/error.h"
#include "traces/proto/trace_events.pb.h"

namespace ssgd::trace {

inline constexpr std::string_view kIterationMarkPrefix = "iteration/";
inline constexpr std::string_view kForwardMarkPrefix = "forward/";
inline constexpr std::string_view kBackwardMarkPrefix = "backward/";
inline constexpr std::string_view kMetadataMarkPrefix = "ssgd/";
// The domain of a tracing window's own marks (tracer/core/trace_window.h):
// not the program's, so no walk takes them for its iterations.
inline constexpr std::string_view kWindowMarkDomain = "ssgd-window";
// The metadata's tool of a replay's own trace (ssgd simulate --trace): its
// tasks are written as kernels, without launch calls.
inline constexpr std::string_view kSimulatedTraceTool = "ssgd simulate";

std::string iteration_mark(std::int64_t n);
std::string forward_mark(std::string_view layer);
std::string backward_mark(std::string_view layer);
std::string grad_bytes_mark(std::string_view layer, std::int64_t bytes);
std::string activation_bytes_mark(std::string_view layer, std::int64_t bytes);

// PyTorch's step ranges: "ProfilerStep#12" -> 12; nullopt for any other
// name, "ProfilerStep#" without a number included.
std::optional<std::int64_t> profiler_step_number(std::string_view name);

// An iteration or layer mark, read from a MarkerRange of a trace.
struct MarkerName {
  enum class Kind { kOther, kIteration, kForward, kBackward };
  Kind kind = Kind::kOther;
  std::string layer;        // forward and backward: the layer's name
  std::int64_t number = 0;  // iteration: N
};

// Throws ssgd::InputError (file `source`, record `record`, field
// marker.name or marker.end_ns) for a marked name without a layer or with
// an iteration number that is not an integer, and for a marked range that
// ends before it starts. Other names (metadata marks included) are kOther
// and never an error.
MarkerName parse_marker_name(const v1::MarkerRange& marker, const std::string& source,
                             std::int64_t record);

// The typed value of a metadata mark ssgd/<key>=<value>.
struct RankMark {
  std::int32_t rank = 0;
};
struct WorldSizeMark {
  std::int32_t world_size = 0;
};
struct HostnameMark {
  std::string hostname;
};
struct ClockRealtimeMark {
  std::int64_t realtime_ns = 0;  // CLOCK_REALTIME at the mark's start
};
struct GradBytesMark {
  std::string layer;
  std::int64_t bytes = 0;
};
struct ActivationBytesMark {
  std::string layer;
  std::int64_t bytes = 0;
};
struct CollectiveBytesMark {
  std::vector<std::int64_t> sizes_bytes;  // in launch order within an iteration
  // ssgd/collective_bytes/<op>: the sizes of that op's collectives alone;
  // none for ssgd/collective_bytes, every collective's.
  std::optional<v1::Collective::Op> op;
};
// ssgd/collective_ranks/<op>=<n>: the ranks of that op's process group, n of
// them (taken as consecutive: this rank's is rank mod n); or
// ssgd/collective_ranks/<op>=<r0>,<r1>,...: this rank's group by its
// members, in their group order (HSDP's replicas: every G-th rank).
struct CollectiveRanksMark {
  v1::Collective::Op op = v1::Collective::UNKNOWN;
  std::int32_t ranks = 0;             // 1..2^24
  std::vector<std::int32_t> members;  // empty: the count form
};
struct UnknownMetadataMark {
  std::string key;  // e.g. "batch_size", "grad_bytes" with no layer is not this
  std::string value;
};
using MetadataMark = std::variant<RankMark, WorldSizeMark, HostnameMark, ClockRealtimeMark,
                                  GradBytesMark, ActivationBytesMark, CollectiveBytesMark,
                                  CollectiveRanksMark, UnknownMetadataMark>;

// The op of ssgd/collective_bytes/<op> and ssgd/collective_ranks/<op>, as
// torch.distributed names it: all_reduce, all_gather, reduce, broadcast,
// reduce_scatter; nullopt for any other name.
std::optional<v1::Collective::Op> metadata_mark_op(std::string_view name);
// The name of such an op ("all_reduce"); empty for another op.
std::string_view metadata_mark_op_name(v1::Collective::Op op);

// True for names starting with "ssgd/".
bool is_metadata_mark(std::string_view name);

// Reads "ssgd/<key>=<value>". Throws ssgd::InputError at `where` (its field
// set to `where.field`, or "name" when empty) naming the mark, when there
// is no '=', the key is empty, a number is not a non-negative integer (rank,
// world size, bytes, a list entry) or out of range (activation bytes: above
// 2^50, the profile's bound), grad_bytes or activation_bytes names no
// layer, a hostname is empty, collective_bytes/<op> or collective_ranks/<op>
// names no op or an unknown one, or collective_ranks is 0 or above 2^24, or
// its member list repeats a rank (ranks above the file's world size, and a
// list without the file's own rank, are the importer's to refuse). Unknown
// keys are not an error.
MetadataMark parse_metadata_mark(std::string_view name, const InputLocation& where);

// What a file's ssgd/ marks said of the capture, as an importer reads them
// one by one. The capture helper writes them again every iteration: the
// first rank, world size and host win, and a repeat that says something
// else is noted; the earliest clock mark in the file sets the clock (events
// come in any order, and later marks are later samples of the same clock).
struct IdentityMarks {
  std::optional<std::int32_t> rank;
  std::optional<std::int32_t> world_size;
  std::optional<std::string> hostname;
  std::optional<std::int64_t> clock_realtime_ns;  // the earliest clock mark's value
  std::int64_t clock_mark_ns = 0;                 // and its start, in the file's time
  std::uint64_t marks = 0;                        // all ssgd/ marks read
  std::set<std::string> unknown_keys;             // the importer keeps them as markers
  // e.g. "ssgd/rank=1 (event 57) disagrees with the first ssgd/rank=0".
  std::vector<std::string> conflicts;

  // Counts `mark` (parsed from `name`) and takes it when it says who the
  // capture is (rank, world size, host, clock; `start_ns` asked only for a
  // clock mark): true, the importer has nothing more to do with it. False
  // for the rest (grad_bytes, collective_bytes, an unknown key, whose key is
  // noted in unknown_keys first), which are the importer's. `at` names the
  // mark in a conflict's note ("row 12", "event 57").
  bool take(const MetadataMark& mark, std::string_view name, std::string_view at,
            const std::function<std::int64_t()>& start_ns);

  // "<N> ssgd/ marks: rank 1, world size 2, host h, clock, <more...>, 1
  // unknown key(s)": the summary's words, `more` (the importer's own marks)
  // after the identity.
  [[nodiscard]] std::string summary(const std::vector<std::string>& more = {}) const;
};

}  // namespace ssgd::trace
