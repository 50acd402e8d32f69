#pragma once
// The one walker over a captured trace on the DAG side: the trace is read
// once into per-rank marker ranges and work, and one set of rules gives each
// piece of work of an iteration its S-SGD task. profile_from_trace
// (walk/trace_profile.h, a layer profile for `ssgd simulate`) and
// TraceIterations (walk/iteration_tasks.h, one iteration's tasks for `ssgd
// diff`) are both thin users of it, so they see the same tasks.
//
// What it reads, per rank:
//   iterations     iteration/<N> ranges; with split_unmarked_iterations, a
//                  rank without any has its iterations found from its work
//                  (see below), with a warning
//   layer ranges   forward/<layer>, backward/<layer>; the layers are ordered
//                  by their first forward range (earliest start, then lowest
//                  rank); a backward range of a layer with no forward range
//                  is left out, with a warning
//   work           kernels (any device: the host's CPU ops, device -1, are
//                  compute like GPU kernels; a GPU's device-to-device copies
//                  and memsets count as its kernels), collectives, host-to-device
//                  copies and "io" ranges, each at its launch time: the
//                  start of the API call with its correlation id (a CUDA
//                  launch, a framework call such as c10d::allreduce_), else
//                  its own start; a host operator (device -1) at its
//                  midpoint, since the marks' backward ranges open inside
//                  the autograd operator they mark, just after it began
//   grad bytes     ssgd/grad_bytes/<layer>=<bytes> marks (traces/marker_names.h)
//   activations    ssgd/activation_bytes/<layer>=<bytes> marks, likewise: the
//                  latest of each layer
//   sharding       FSDP's ranges (FSDP::pre_forward (<unit>), ...,
//                  traces/torch_op_names.h), handed back with each iteration
//                  for walk/trace_sharding.h; they give no task
// Host operators (device -1) of one thread also own the interpreter's time
// before them: a gap shorter than kInterpreterGapNs since the thread's
// previous operator ended is added to the operator's work (its start moves
// back; where it is placed does not change); a longer gap is a wait.
// A GPU kernel with a launch record (the API call of its correlation id)
// also owns the time its device sat idle just before it when that idle time
// was the host's: the device had finished all earlier compute (kernels,
// copies and memsets on any stream; a collective's NCCL kernels do not count,
// since the compute streams wait for the host while one runs on its own) and
// the kernel was launched only after that, or the gap is shorter than
// kQueuedGapNs (the launch's own latency, the device's scheduling). A kernel
// launched after that but held after its launch until a collective ended
// (its stream waiting on the collective's event) owns the gap up to its
// launch; the wait stays idle. Without a launch record
// nothing tells a wait for the host from a wait for other work, and the gap
// stays idle. (Until 2026-11-30 a collective running on its own stream
// counted as busy, and the host's launch gaps beside it were lost: a
// host-bound DDP backward on two A100s lost 13 ms of 101; docs/validation.md,
// section 9d.) No kernel owns
// time in an io range (the scenario's io task stands for it), time before
// the start of the iteration it belongs to (a pause between a profiler's
// cycles or unmarked steps), or idle time another kernel starting at the
// same moment already owns. Its start moves back to the end of the
// device's earlier work; where it is placed does not change. A longer gap
// before a kernel launched in time is a wait (for another stream: a
// collective) and stays idle. In eager PyTorch on a fast GPU the host's
// launches are often the bottleneck: ResNet-50 at batch 64 on an H200 kept
// its device idle for a tenth of each iteration (docs/validation.md, 9).
// NCCL kernels (traces/kernel_names.h) are never compute: beside Collective
// records (ssgd's tracer writes both) they are left out and counted; on a
// rank without any Collective they are its collectives, of unknown size,
// with a warning.
//
// The rules, for the work launched in an iteration [start, end) and the
// layer ranges that start in it:
//   kernel       inside a layer range: the innermost (latest-starting) range
//                open at its launch, its forward or backward. Outside every
//                range (the glue rule): launched before the iteration's
//                first layer range, the first layer's forward; at or after
//                the end of its last backward range, the update; otherwise
//                the layer range that ended last before its launch (ties: the
//                later-starting). An iteration without layer ranges is all
//                update.
//   collective   comm, labelled with the backward range open at its launch,
//                else the backward range that ended last before it, else no
//                layer
//   h2d copy     h2d;  io range   io
//
// Iterations found from work (a rank without iteration markers): each run
// of optimizer kernels (traces/kernel_names.h) with no other work between them
// ends an iteration; without any, every K-th collective does, K being the
// smallest period with which their sizes repeat over at least two periods.
// An iteration ends just after the launch of its last piece, where the next
// begins; the first begins with the trace; work after the last end is a
// partial iteration and left out.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "dag/task.h"
#include "traces/kernel_class.h"
#include "traces/torch_op_names.h"
#include "traces/trace_reader.h"

namespace ssgd::walk {

// A forward/<layer> or backward/<layer> range of one rank.
struct LayerRange {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int32_t layer = 0;              // index into TraceWalk::layers()
  dag::TaskKind kind = dag::TaskKind::kForward;  // kForward or kBackward
};

// A piece of work of an iteration with the task the rules give it.
struct TaskWork {
  dag::TaskKind kind = dag::TaskKind::kForward;  // kernels: kForward, kBackward or kUpdate; kComm, kH2d, kIo
  std::int32_t layer = -1;    // forward/backward: the layer; comm: the launching layer or -1
  bool in_range = false;      // kernels: launched inside a layer range (else by the glue rule)
  std::int64_t start_ns = 0;  // when it ran (on the GPU, or the host's own times)
  std::int64_t end_ns = 0;
  std::int64_t bytes = 0;          // comm and h2d
  std::uint64_t communicator = 0;  // comm
  std::uint64_t sequence = 0;      // comm
  int op = 0;                      // comm: its v1::Collective::Op (an NCCL kernel's, by name)
  std::int64_t record = -1;        // comm: the trace record it came from
  std::int64_t launch_ns = 0;      // when it was launched (the host's time that places it)
  std::int32_t nranks = 0;         // comm: the ranks of its group (0: unknown)
  std::string datatype;            // comm: its datatype ("float32"; empty: unknown)
  // Kernels: the kernel's own time; duration_ns() - own_ns is the idle time
  // before it that it owns (the host's: launch gaps, the interpreter).
  std::int64_t own_ns = 0;
  std::int32_t kernel = -1;   // GPU kernels, copies, memsets: index into TraceWalk::kernels()
  std::int64_t threads = 0;   // a GPU kernel's grid x block threads; 0: unknown
  bool host_op = false;       // a host operator (device -1)
  [[nodiscard]] std::int64_t duration_ns() const { return end_ns - start_ns; }
};

// A distinct GPU kernel name of a trace (copies and memsets under "memcpy"
// and "memset"), with its class and arithmetic (traces/kernel_class.h).
struct KernelKind {
  std::string name;
  trace::KernelClass kind = trace::KernelClass::kOther;
  std::optional<trace::KernelMath> math;
};

// The GPU a trace's kernels ran on, from its device records (or its hosts'
// GPUs): empty name when the trace has none.
struct TraceGpu {
  std::string name;
  std::int32_t sm_count = 0;  // 0: unknown
  std::int32_t compute_capability_major = 0;
  std::int32_t compute_capability_minor = 0;
};

struct WalkIteration {
  std::int64_t number = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

// A range of sharded data parallelism (FSDP's record_function ranges,
// traces/torch_op_names.h) of one rank.
struct ShardingSpan {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  trace::ShardingRange range;
};

// One iteration of one rank: its layer ranges, by start, its work with
// tasks, in launch order, and its sharding ranges that start in it, by start.
struct IterationWork {
  std::vector<LayerRange> ranges;
  std::vector<TaskWork> work;
  std::vector<ShardingSpan> sharding;
};

// Before a GPU kernel launched while its device was still busy, an idle gap
// shorter than this is the launch's latency and the device's own scheduling
// (a few microseconds to tens), and counts as the kernel's; a longer one is
// a wait for other work (a collective on another stream).
inline constexpr std::int64_t kQueuedGapNs = 50'000;

// Between two host operators of one thread, a gap shorter than this is the
// interpreter at work (Python, hooks, autograd bookkeeping: tens of
// microseconds each) and counts as compute; a longer one is a wait (for a
// collective or a barrier: milliseconds).
inline constexpr std::int64_t kInterpreterGapNs = 500'000;

class TraceWalk {
 public:
  struct Options {
    // Find the iterations of a rank without iteration/<N> ranges from its
    // work (profile_from_trace); otherwise such a rank has none (ssgd diff).
    bool split_unmarked_iterations = false;
  };

  // Reads every event of `reader` (`source` names it in messages). Throws
  // ssgd::InputError for a marker name without a layer or with a bad
  // iteration number, an iteration number a rank marks twice, a marked range
  // that ends before it starts, a malformed ssgd/grad_bytes mark, a
  // collective record that is there twice (traces/collective_records.h),
  // and a kernel, copy, memset or collective lasting more than one layer's
  // time may (2^42 ns, 73 minutes: a start_ns of 0 is a missing timestamp),
  // naming `source`, the record and the field.
  TraceWalk(trace::TraceReader& reader, const std::string& source, const Options& options);

  // Layer names in forward order; empty when the trace has no forward ranges.
  [[nodiscard]] const std::vector<std::string>& layers() const { return layers_; }
  // Ranks that have iterations, ascending.
  [[nodiscard]] std::vector<std::int32_t> ranks() const;
  // A rank's iterations by start; empty for a rank the trace lacks.
  [[nodiscard]] const std::vector<WalkIteration>& iterations(std::int32_t rank) const;
  // The work of `iteration` (one of iterations(rank)) with its tasks.
  [[nodiscard]] IterationWork iteration_work(std::int32_t rank,
                                             const WalkIteration& iteration) const;

  // Per layer, its ssgd/grad_bytes mark (0 for a layer without one); empty
  // when the trace has no such marks.
  [[nodiscard]] const std::vector<std::int64_t>& marked_grad_bytes() const {
    return marked_grad_bytes_;
  }
  // Per layer, its ssgd/activation_bytes mark (0, with a warning, for a
  // layer without one); empty when the trace has no such marks.
  [[nodiscard]] const std::vector<std::int64_t>& marked_activation_bytes() const {
    return marked_activation_bytes_;
  }
  // The distinct GPU kernels, indexed by TaskWork::kernel.
  [[nodiscard]] const std::vector<KernelKind>& kernels() const { return kernels_; }
  // The GPU of the trace's first device record (a trace of several models
  // of GPU warns, in warnings()).
  [[nodiscard]] const TraceGpu& gpu() const { return gpu_; }
  // NCCL kernels left out because their rank has Collective records.
  [[nodiscard]] std::int64_t nccl_kernels_dropped() const { return nccl_kernels_dropped_; }
  // What the reader of the result should know, one line each.
  [[nodiscard]] const std::vector<std::string>& warnings() const { return warnings_; }

  // A tracing window's marks (domain "ssgd-window", tracer/core/trace_window.h)
  // of one rank: every reported step, and when recording went on and off.
  struct WindowMarks {
    std::vector<std::pair<std::int64_t, std::int64_t>> steps;  // start, end
    std::vector<std::int64_t> opens, closes;
  };
  // By rank; empty when the trace has no window.
  [[nodiscard]] const std::map<std::int32_t, WindowMarks>& window_marks() const {
    return window_marks_;
  }

 private:
  enum class WorkKind { kKernel, kCollective, kH2d, kIo };
  struct Work {
    WorkKind kind;
    std::int64_t host_ns;  // launch
    std::int64_t start_ns, end_ns, bytes;
    std::uint64_t communicator, sequence;
    bool optimizer;                 // a kernel named like an optimizer step
    std::int64_t host_thread = -1;  // a host operator (device -1): its thread; else -1
    std::int32_t device = -1;       // a GPU kernel: its device; else -1
    bool launch_known = false;      // host_ns is its launch API call's start
    int op = 0;                     // a collective: its v1::Collective::Op
    std::int64_t record = -1;       // a collective: its record in the trace
    std::int32_t nranks = 0;        // a collective: its group's ranks
    std::int32_t datatype = -1;     // a collective: its datatype, in datatypes_
    std::int64_t own_ns = 0;        // a kernel's own time (its start may move back)
    std::int32_t kernel = -1;       // a GPU kernel, copy or memset: in kernels_
    std::int64_t threads = 0;       // a GPU kernel: grid x block threads
  };
  // A span of time a GPU was busy: its compute (a kernel, a copy or a
  // memset) or a collective (its NCCL kernels, or its record), which
  // add_launch_gaps tells apart.
  struct Busy {
    std::int32_t device;
    std::int64_t start_ns, end_ns;
    bool comm = false;
  };
  struct NamedRange {
    std::int64_t start_ns, end_ns;
    std::string layer;
    dag::TaskKind kind;
  };
  struct Rank {
    std::vector<WalkIteration> iterations;
    std::vector<NamedRange> named_ranges;  // while reading
    std::vector<LayerRange> ranges;        // by start
    std::vector<ShardingSpan> sharding;    // by start
    std::vector<Work> work;                // by launch
    std::vector<Work> nccl_kernels;        // kept apart until the rank is read
    std::vector<std::uint64_t> nccl_correlations;
    std::vector<std::pair<std::uint64_t, std::size_t>> pending;  // correlation -> work index
    std::unordered_map<std::uint64_t, std::int64_t> launch_ns;   // correlation -> API call start
    std::vector<Busy> busy;                                      // while reading
    bool has_collectives = false;
  };

  std::map<std::string, std::int32_t> order_layers();  // returns each layer's index
  // An ssgd/<key>/<layer>=<bytes> mark as read, before the layers are known.
  struct LayerBytesMark {
    std::string layer;
    std::int64_t bytes = 0, start_ns = 0, record = 0;
  };
  // Per layer, the latest of `marks` (0 for a layer without one, with a
  // warning ending in `unmarked_warning` unless null); empty without marks.
  // Warns about marks naming no layer and layers whose marks changed.
  std::vector<std::int64_t> latest_by_layer(std::vector<LayerBytesMark> marks,
                                            const std::map<std::string, std::int32_t>& layer_index,
                                            const std::string& key, const char* unmarked_warning);
  void place_work();
  void add_interpreter_time();
  void add_launch_gaps();
  void split_unmarked_iterations();

  std::vector<std::string> layers_;
  std::vector<std::string> datatypes_;  // the collectives' datatypes, each once
  std::vector<KernelKind> kernels_;
  std::unordered_map<std::string, std::int32_t> kernel_index_;
  TraceGpu gpu_;
  bool mixed_gpus_ = false;
  std::int32_t kernel_kind(const std::string& name);
  void note_gpu(const trace::v1::Gpu& gpu);
  std::map<std::int32_t, Rank> ranks_;
  std::vector<std::int64_t> marked_grad_bytes_;
  std::vector<std::int64_t> marked_activation_bytes_;
  std::int64_t nccl_kernels_dropped_ = 0;
  std::vector<std::string> warnings_;
  bool simulated_ = false;  // a replay's own trace (trace::kSimulatedTraceTool)
  std::map<std::int32_t, WindowMarks> window_marks_;
};

}  // namespace ssgd::walk
