#pragma once
// Layer marks derived from the CPU ranges of a Kineto (PyTorch profiler)
// trace, for files that have no forward/<layer> and backward/<layer>
// annotations: the forward/<layer> and backward/<layer> MarkerRanges that
// walk/trace_profile.h builds a layer profile from. docs/kineto.md ("Layers")
// has the rules and the PyTorch facts behind them; in short:
//
//   Every forward operator records the autograd sequence number it will
//   give the backward node it creates (`Sequence number` arg of a cpu_op),
//   and the autograd engine runs that node inside a cpu_op
//   `autograd::engine::evaluate_function: <Node>` carrying the same number,
//   usually on another thread. So a backward op belongs to the layer of the
//   forward op that created its node.
//
//   modules: a layer is a leaf `nn.Module: <Class>_<i>` python_function
//            range (one with no module range inside it); its forward range
//            is the module's range, and each backward op whose node was
//            created by a top-level forward op inside it gives a
//            backward/<module> range with the backward op's times.
//   ops:     a layer is a top-level forward cpu_op (not inside another
//            cpu_op) of an iteration, on the thread of ProfilerStep#N,
//            carrying a sequence number; named `<op name>#<k>`, k its
//            position among the iteration's layers, so that every
//            iteration gives the same names.
//
// A top-level forward op with sequence number s owns the backward nodes
// numbered s up to the next top-level op's number (an op that makes several
// nodes, like a composite loss, gives them consecutive numbers; one that
// makes none leaves its number to the next op).
//
// Memory: the ranges are put in time order by an EventSorter of their own
// (bounded run in memory, the rest spilled), then read once; the map of
// sequence numbers and the open ranges are those of the current iteration
// only, cleared at every ProfilerStep#N: one small entry per top-level
// forward op of an iteration. Without ProfilerStep#N ranges the whole file
// is one iteration.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "traces/event_sorter.h"
#include "traces/proto/trace_events.pb.h"

namespace ssgd::trace {

// Where an import takes its layer marks from (`ssgd import kineto --layers`).
enum class KinetoLayerSource {
  kAuto,     // kMarks if the file has forward/backward annotations, else
             // kModules if it has nn.Module ranges, else kOps
  kMarks,    // annotations named forward/<l>, backward/<l>, and every
             // nn.Module range as forward/<module> (the importer's first rules)
  kModules,  // leaf nn.Module ranges, backward through sequence numbers
  kOps,      // top-level forward operators, backward through sequence numbers
};

std::string_view kineto_layer_source_name(KinetoLayerSource source);
// "auto", "marks", "modules", "ops"; nullopt for anything else.
std::optional<KinetoLayerSource> parse_kineto_layer_source(std::string_view text);

// One CPU range the derivation reads, as the mapper found it (times as the
// file's ts, before baseTimeNanoseconds is added).
struct KinetoHostOp {
  enum class Kind : std::int32_t {
    kStep = 0,        // ProfilerStep#N: an iteration boundary
    kModule = 1,      // nn.Module: <Class>_<i>; name without the prefix
    kForwardOp = 2,   // a cpu_op with a Sequence number, not a backward one
    kBackwardOp = 3,  // autograd::engine::evaluate_function: <Node> with one
  };
  Kind kind = Kind::kStep;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t thread_id = 0;
  std::int64_t sequence_number = -1;
  std::string name;
};

// What the derivation found, for the import summary.
struct KinetoLayerStats {
  std::uint64_t layers = 0;           // distinct layer names
  std::uint64_t forward_ranges = 0;   // forward/<layer> marks written
  std::uint64_t backward_ranges = 0;  // backward/<layer> marks written
  // Backward ops whose sequence number no forward op of their iteration
  // had (an earlier iteration's node, or forward ops not recorded).
  std::uint64_t backward_unmatched = 0;
  // Backward ops whose forward op was in no layer (outside every leaf
  // module, an excluded op, outside ProfilerStep#N).
  std::uint64_t backward_outside_layers = 0;
  std::uint64_t containers = 0;       // distinct module names left out: they hold modules
  std::uint64_t ranges_ignored = 0;   // module and forward ranges on other threads
  std::uint64_t ops_sorted = 0;       // ranges read
  std::size_t sort_runs = 0;          // runs spilled
  std::uint64_t peak_iteration_ops = 0;  // most forward ops held for one iteration
};

class KinetoLayerDeriver {
 public:
  using Emit = std::function<void(const v1::Event&)>;
  // `spill_dir` and `run_bytes` as for EventSorter.
  KinetoLayerDeriver(std::filesystem::path spill_dir, std::size_t run_bytes);

  void add(const KinetoHostOp& op);
  // Reads every range added, in time order, and emits the MarkerRanges of
  // `source` (kModules or kOps). Call once.
  KinetoLayerStats derive(KinetoLayerSource source, const Emit& emit);

  [[nodiscard]] std::uint64_t ops() const { return sorter_.events(); }

 private:
  struct Layer {
    std::string name;
    bool leaf = true;  // modules: no module range inside it
  };
  struct OpenModule {
    std::int64_t start_ns, end_ns;
    std::uint64_t thread_id;
    std::int32_t layer;
  };

  void step(const KinetoHostOp& op);
  void module(const KinetoHostOp& op);
  void forward_op(const KinetoHostOp& op);
  void backward_op(const KinetoHostOp& op);
  // Closes the forward thread's ranges that ended by `t_ns`.
  void close_until(std::int64_t t_ns);
  void close_module();
  void mark(const std::string& name, std::int64_t start_ns, std::int64_t end_ns,
            std::uint64_t thread_id, const char* domain);

  EventSorter sorter_;
  KinetoLayerSource source_ = KinetoLayerSource::kOps;
  const Emit* emit_ = nullptr;
  KinetoLayerStats stats_;
  v1::Event event_;  // reused

  // The current iteration.
  std::optional<std::uint64_t> forward_thread_;
  bool steps_seen_ = false;
  std::int64_t step_end_ns_ = 0;
  std::vector<Layer> layers_;
  std::map<std::int64_t, std::int32_t> owners_;  // first sequence number -> layer, -1: none
  std::int64_t max_sequence_ = -1;               // highest seen on the forward thread
  std::vector<std::int64_t> open_op_ends_;       // forward ops still running
  std::vector<OpenModule> open_modules_;
  std::int64_t next_k_ = 0;
  // Across the file: distinct names, for the counts.
  std::set<std::string> layer_names_;
  std::set<std::string> container_names_;
};

}  // namespace ssgd::trace
