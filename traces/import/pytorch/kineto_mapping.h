#pragma once
// Turns Kineto events (traces/import/pytorch/kineto_json_reader.h) into ssgd.trace.v1
// events, one at a time. What maps to what, and why, is in docs/kineto.md;
// in short:
//   kernel                       -> Kernel (NCCL kernels -> Collective only)
//   gpu_memcpy / gpu_memset      -> Memcpy / Memset
//   cuda_runtime / cuda_driver   -> ApiCall (RUNTIME / DRIVER)
//   cpu_op, user_annotation, python_function ranges named
//     ProfilerStep#N             -> MarkerRange iteration/N
//     iteration/N, forward/<m>, backward/<m> -> MarkerRange, name kept
//       (not with layers kModules or kOps)
//     nn.Module: <M>             -> MarkerRange forward/<M> (layers kMarks)
//   record_param_comms cpu_op    -> NCCL metadata for the kernel it launched
//     (all-gathers and reduce-scatters: size = the larger of In and Out msg
//     nelems, the whole buffer)
//   FSDP's ranges (FSDP::..., FullyShardedDataParallel._...) -> MarkerRange,
//     name kept (traces/torch_op_names.h, parse_sharding_range)
//   ranges named ssgd/<key>=<value> -> metadata (traces/marker_names.h);
//     ssgd/grad_bytes/<l>=<b>, ssgd/activation_bytes/<l>=<b> and unknown keys are kept as
//     MarkerRanges
// The legacy profiler's events (no `cat`, "pid": "CPU functions") are read
// as CPU ranges, with the same marks; its "CUDA functions" events are
// Kernels (device = tid).
// Everything else is counted by category and skipped. Unless the layers
// come from annotations, the ranges that layers are derived from
// (ProfilerStep#N, nn.Module ranges, cpu_ops with a Sequence number) also
// go to `on_host_op` (traces/import/pytorch/kineto_layers.h). The CPU ranges that CPU
// compute, gloo collectives and iterations from Optimizer.step come from go
// to `on_cpu_range` (traces/import/pytorch/cpu_profile_walk.h): operators only until the
// first GPU kernel of a Kineto file (a GPU trace's compute is its kernels),
// communication, optimizer and iteration ranges always.
//
// Memory: one record per NCCL kernel and per record_param_comms op is kept
// until finish(), because the metadata of a collective can come before or
// after its kernel and a missing sequence number is given by start order.
// Both are a few per layer and iteration, far fewer than the events.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "traces/import/pytorch/cpu_range.h"
#include "traces/import/pytorch/host_collectives.h"
#include "traces/import/pytorch/kineto_json_reader.h"
#include "traces/import/pytorch/kineto_layers.h"
#include "traces/kernel_names.h"
#include "traces/marker_names.h"
#include "traces/proto/trace_events.pb.h"

namespace ssgd::trace {

// The pseudo-category of the legacy profiler's CPU events, and the domain
// of the marks read from them.
inline constexpr std::string_view kLegacyCat = "legacy";
inline constexpr std::string_view kLegacyMarkDomain = "pytorch:legacy";

// What the file's ssgd/<key>=<value> marks said (traces/marker_names.h): who
// the capture is (IdentityMarks), and the marks of sizes.
struct MetadataMarks : IdentityMarks {
  // ssgd/collective_bytes marks, in file order: each applies to the
  // iterations whose first collective is launched at or after its start,
  // until the next one (traces/import/pytorch/host_collectives.h).
  std::vector<CollectiveSizesMark> collective_bytes;  // ssgd/collective_bytes/<op> too
  // ssgd/collective_ranks/<op> marks, in file order, each with its name and
  // where it is (the import refuses one above the world size, known later).
  struct RanksMark {
    CollectiveGroupMark mark;
    std::string name;
    InputLocation where;
  };
  std::vector<RanksMark> collective_ranks;
  // ssgd/grad_bytes/<layer>: the first mark of each layer, which alone is
  // kept as a MarkerRange (the helper repeats them every iteration).
  std::map<std::string, std::int64_t> grad_bytes;
};

// Counts of what an import converted, skipped and ignored, for the summary.
struct KinetoMappingStats {
  std::uint64_t kernels = 0, memcpys = 0, memsets = 0, api_calls = 0, collectives = 0,
                markers = 0;
  // NCCL kernels whose metadata (count, dtype, group) was found on neither
  // the kernel nor a record_param_comms op: converted with op and times only.
  std::uint64_t collectives_without_metadata = 0;
  // NCCL kernels with an element count but a dtype whose size is unknown
  // (neither c10's nor in the kernel's name): size left 0. The first, as
  // "traceEvents[i].args.dtype: '<dtype>'".
  std::uint64_t collectives_unknown_dtype = 0;
  std::string first_unknown_dtype;
  // All-gathers and reduce-scatters without an element count: size 0.
  std::uint64_t sharding_collectives_without_size = 0;
  std::string first_sharding_collective_without_size;  // "traceEvents[i].args.In msg nelems"
  // FSDP's record_function ranges (traces/torch_op_names.h,
  // parse_sharding_range), kept as MarkerRanges; of them FSDP2's ("FSDP::").
  std::uint64_t sharding_ranges = 0;
  std::uint64_t fsdp2_ranges = 0;
  // Collectives without a `Seq` arg, numbered by start time per communicator.
  std::uint64_t collectives_numbered = 0;
  // Skipped events by reason, e.g. "cat cpu_op (not a mark)", "ph M".
  std::map<std::string, std::uint64_t> skipped;
  // Optional fields with a value of the wrong type, ignored, e.g.
  // "kernel args.stream" -> 2.
  std::map<std::string, std::uint64_t> ignored_fields;
  // What layer marks can come from: ranges already named forward/<l> or
  // backward/<l>, nn.Module ranges, cpu_ops with a Sequence number.
  std::uint64_t layer_annotations = 0;
  std::uint64_t module_ranges = 0;
  std::uint64_t sequence_ops = 0;
  // autograd::engine::evaluate_function ops without a Sequence number
  // (AccumulateGrad, whose node number is -1): in no layer.
  std::uint64_t backward_ops_without_sequence = 0;
  // The layer names of the forward marks written (annotations, and nn.Module
  // ranges with layers kMarks).
  std::set<std::string> forward_mark_names;
  // Events with a `cat` (Kineto's shape), and the legacy profiler's events
  // (no `cat`, "pid": "CPU functions" or "CUDA functions").
  std::uint64_t kineto_events = 0;
  std::uint64_t legacy_events = 0;
  // iteration/<N> and ProfilerStep#N marks written.
  std::uint64_t iteration_marks = 0;
  // GPU activity seen: kernels (NCCL's and the legacy "CUDA functions"
  // included), copies, memsets, CUDA runtime and driver calls. A file with
  // any is a GPU trace, whose compute is its kernels.
  std::uint64_t gpu_events = 0;
  // CPU ranges handed to on_cpu_range.
  std::uint64_t cpu_ranges = 0;
  MetadataMarks metadata;
};

// Events come out with rank 0 and times as the file's `ts` (relative to
// baseTimeNanoseconds in recent Kineto): the importer sets the rank and adds
// the base when it writes them, since both may come after the events.
struct KinetoMappingOptions {
  std::string file;  // as named in messages
  KinetoLayerSource layers = KinetoLayerSource::kAuto;
  // Receives the ranges layers are derived from, unless `layers` is kMarks
  // (or kAuto once the file has shown a forward/backward annotation).
  std::function<void(const KinetoHostOp&)> on_host_op;
  // Receives the CPU ranges (see above).
  std::function<void(const CpuRange&)> on_cpu_range;
};

class KinetoEventMapper {
 public:
  using Emit = std::function<void(const v1::Event&)>;
  KinetoEventMapper(KinetoMappingOptions options, Emit emit);
  ~KinetoEventMapper();
  KinetoEventMapper(const KinetoEventMapper&) = delete;
  KinetoEventMapper& operator=(const KinetoEventMapper&) = delete;

  // Converts one event. Throws ssgd::InputError (file, event index, field)
  // when a converted event lacks a required field or has one of the wrong
  // type: ph, name, ts, dur.
  void convert(const KinetoEvent& event);
  // Emits the collectives, with their metadata joined and numbered.
  // `rank` (global) and `world_size` fill what a collective's own metadata
  // does not say (its rank in the group, the group's size).
  void finish(std::int32_t rank, std::int32_t world_size);

  [[nodiscard]] const KinetoMappingStats& stats() const { return stats_; }

 private:
  struct CommsMeta;
  struct PendingCollective;
  struct Times {
    std::int64_t start_ns;
    std::int64_t end_ns;
  };

  Times times(const KinetoEvent& e, std::string_view what) const;
  std::string required_string(const KinetoEvent& e, const KinetoValue& v, std::string_view field,
                              std::string_view what) const;
  std::optional<std::int64_t> optional_int(const KinetoEvent& e, std::string_view key,
                                           std::string_view what);
  CommsMeta comms_meta(const KinetoEvent& e, std::string_view what);

  void kernel(const KinetoEvent& e);
  void nccl_kernel(const KinetoEvent& e, const std::string& name, Times t);
  void memcpy(const KinetoEvent& e);
  void memset(const KinetoEvent& e);
  void api_call(const KinetoEvent& e, bool driver);
  // A range of the CPU timeline: Kineto's cpu_op, user_annotation and
  // python_function (cat), or the legacy profiler's (cat kLegacyCat).
  void host_range(const KinetoEvent& e, const std::string& cat);
  void legacy_event(const KinetoEvent& e);
  void metadata_mark(const KinetoEvent& e, const std::string& name, const std::string& cat);
  void cpu_range(const KinetoEvent& e, CpuRange::Kind kind, const std::string& name);
  // The bytes, elements and datatype of a range's recorded input tensors.
  static void recorded_tensors(const KinetoEvent& e, CpuRange& r);
  void marker(const KinetoEvent& e, const std::string& name, const std::string& cat);
  // Hands a range to on_host_op when layers may be derived from it.
  void host_op(const KinetoEvent& e, KinetoHostOp::Kind kind, std::string name,
               std::int64_t sequence_number);
  [[nodiscard]] bool wants_host_ops() const;
  void skip(const std::string& reason) { ++stats_.skipped[reason]; }
  // Emits `event`, made from traceEvents[index], after the trace's rules
  // (event_rules.h; rank and times are checked where the importer sets them).
  void emit(std::uint64_t index, const v1::Event& event);

  KinetoMappingOptions options_;
  Emit emit_;
  KinetoMappingStats stats_;
  std::vector<PendingCollective> pending_;
  std::map<std::int64_t, CommsMeta> param_comms_;  // External id -> metadata
  v1::Event event_;  // reused
};

// The communicator id of an imported collective: FNV-1a (64-bit) of
// "pg:<Process Group Name>", or of "ranks:<Process Group Ranks>" (spaces
// removed) without a name, or of "world" without either. Every rank of a
// group computes the same value.
std::uint64_t kineto_communicator_id(std::string_view key);

}  // namespace ssgd::trace
