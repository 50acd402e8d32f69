#include "walk/trace_walk.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <tuple>
#include <variant>

#include <fmt/format.h>

#include "common/error.h"
#include "traces/collective_records.h"
#include "traces/kernel_names.h"
#include "traces/layer_profile.h"
#include "traces/marker_names.h"

namespace ssgd::walk {

namespace v1 = trace::v1;

namespace {

// A piece of work lasting longer than one layer's time may be (2^42 ns, 73
// minutes: traces/layer_profile.h) is no measurement: its start or end is
// missing (0, which the tracer never writes: tracer/core/timestamp_check.h)
// or from another clock, and its time would swamp every sum after it.
template <typename Span>
void require_plausible_span(const Span& span, std::string_view payload, const std::string& source,
                            std::int64_t record) {
  const std::int64_t lasts = span.end_ns() - span.start_ns();  // both in 0..2^62: no overflow
  if (lasts <= trace::kMaxLayerTimeNs) return;
  const bool zero_start = span.start_ns() == 0;
  throw InputError(
      {source, std::nullopt, record, fmt::format("{}.{}", payload, zero_start ? "start_ns" : "end_ns")},
      fmt::format("the {} lasts {:.3g} s (start_ns {}, end_ns {}), more than one layer's time may "
                  "be (2^42 ns, 73 minutes){}",
                  payload, static_cast<double>(lasts) * 1e-9, span.start_ns(), span.end_ns(),
                  zero_start ? ": a start_ns of 0 is a missing timestamp (the tracer drops such "
                               "records), not the start of the clock"
                             : ": its start or end is not on the trace's clock"));
}

}  // namespace

std::vector<std::int64_t> TraceWalk::latest_by_layer(
    std::vector<LayerBytesMark> marks, const std::map<std::string, std::int32_t>& layer_index,
    const std::string& key, const char* unmarked_warning) {
  if (marks.empty()) return {};
  // The latest mark of each layer wins (in time, then trace order): the
  // helper writes them at every iteration, and its first ones may come
  // before it has seen which modules run.
  std::stable_sort(marks.begin(), marks.end(), [](const auto& a, const auto& b) {
    return std::tie(a.start_ns, a.record) < std::tie(b.start_ns, b.record);
  });
  std::vector<std::int64_t> bytes(layers_.size(), 0);
  std::vector<bool> seen(layers_.size(), false);
  std::vector<bool> changed(layers_.size(), false);
  std::int64_t unknown = 0;
  for (const auto& g : marks) {
    const auto it = layer_index.find(g.layer);
    if (it == layer_index.end()) {
      ++unknown;
      continue;
    }
    const auto l = static_cast<std::size_t>(it->second);
    if (seen[l] && bytes[l] != g.bytes) changed[l] = true;
    seen[l] = true;
    bytes[l] = g.bytes;
  }
  const auto changes = std::count(changed.begin(), changed.end(), true);
  if (changes > 0) {
    warnings_.push_back("the ssgd/" + key + " marks of " + std::to_string(changes) +
                        " layer(s) changed during the capture; the latest are used");
  }
  if (unknown > 0) {
    warnings_.push_back(std::to_string(unknown) + " ssgd/" + key +
                        " mark(s) name no layer of the trace; ignored");
  }
  const auto unmarked = std::count(seen.begin(), seen.end(), false);
  if (unmarked_warning != nullptr && unmarked > 0) {
    warnings_.push_back(std::to_string(unmarked) + " layer(s) of " +
                        std::to_string(layers_.size()) + " have no ssgd/" + key + " mark; " +
                        unmarked_warning);
  }
  return bytes;
}

TraceWalk::TraceWalk(trace::TraceReader& reader, const std::string& source,
                     const Options& options) {
  std::vector<LayerBytesMark> grad_bytes, activation_bytes;  // marks
  trace::CollectiveRecordSet collectives;  // none twice (traces/collective_records.h)
  // Per rank, each iteration number's record: a number marked twice would
  // count one step twice.
  std::map<std::pair<std::int32_t, std::int64_t>, std::int64_t> iteration_records;
  for (const auto& host : reader.metadata().hosts()) {
    for (const auto& gpu : host.gpus()) note_gpu(gpu);
  }
  // A replay's own trace (presentation/report/simulated_trace.h) writes its
  // tasks as kernels without launch calls: their absence says nothing.
  simulated_ = reader.metadata().tool() == trace::kSimulatedTraceTool;
  v1::Event ev;
  std::int64_t record = 0;
  while (reader.next(ev)) {
    Rank& rank = ranks_[ev.rank()];
    const auto add = [&rank](Work w, std::uint64_t correlation) {
      // A kernel's own time, before its start may move back to own idle time.
      if (w.kind == WorkKind::kKernel) w.own_ns = w.end_ns - w.start_ns;
      rank.work.push_back(w);
      if (correlation != 0) rank.pending.emplace_back(correlation, rank.work.size() - 1);
    };
    switch (ev.payload_case()) {
      case v1::Event::kMarker: {
        const auto& m = ev.marker();
        if (m.domain() ==
            trace::kWindowMarkDomain) {  // a tracing window's: not the program's marks
          WindowMarks& w = window_marks_[ev.rank()];
          if (m.name().rfind("step/", 0) == 0 && m.end_ns() >= m.start_ns()) {
            w.steps.emplace_back(m.start_ns(), m.end_ns());
          } else if (m.name() == "window/open") {
            w.opens.push_back(m.start_ns());
          } else if (m.name() == "window/close") {
            w.closes.push_back(m.start_ns());
          }
          break;
        }
        using trace::MarkerName;
        const MarkerName mark = trace::parse_marker_name(m, source, record);
        if (mark.kind == MarkerName::Kind::kIteration) {
          const auto [first, fresh] =
              iteration_records.try_emplace({ev.rank(), mark.number}, record);
          if (!fresh) {
            throw InputError({source, std::nullopt, record, "marker.name"},
                             fmt::format("'{}' of rank {} is marked again (first at record {}): "
                                         "each iteration/<N> range numbers one step",
                                         m.name(), ev.rank(), first->second));
          }
          rank.iterations.push_back({mark.number, m.start_ns(), m.end_ns()});
        } else if (mark.kind != MarkerName::Kind::kOther) {
          rank.named_ranges.push_back({m.start_ns(), m.end_ns(), mark.layer,
                                       mark.kind == MarkerName::Kind::kBackward
                                           ? dag::TaskKind::kBackward
                                           : dag::TaskKind::kForward});
        } else if (auto sharding = trace::parse_sharding_range(m.name())) {
          rank.sharding.push_back({m.start_ns(), m.end_ns(), std::move(*sharding)});
        } else if (m.name() == "io") {
          add({WorkKind::kIo, m.start_ns(), m.start_ns(), m.end_ns(), 0, 0, 0, false}, 0);
        } else if (trace::is_metadata_mark(m.name())) {
          const trace::MetadataMark meta =
              trace::parse_metadata_mark(m.name(), {source, std::nullopt, record, "marker.name"});
          if (const auto* g = std::get_if<trace::GradBytesMark>(&meta)) {
            grad_bytes.push_back({g->layer, g->bytes, m.start_ns(), record});
          } else if (const auto* a = std::get_if<trace::ActivationBytesMark>(&meta)) {
            activation_bytes.push_back({a->layer, a->bytes, m.start_ns(), record});
          }
        }
        break;
      }
      case v1::Event::kKernel: {
        const auto& k = ev.kernel();
        require_plausible_span(k, "kernel", source, record);
        if (trace::is_nccl_kernel(k.name())) {  // communication, never compute: see place_work()
          Work w{WorkKind::kCollective, k.start_ns(), k.start_ns(),
                 k.end_ns(), 0, 0, rank.nccl_kernels.size(), false};
          w.op = static_cast<int>(trace::parse_nccl_kernel_name(k.name()).op);
          w.record = record;
          rank.nccl_kernels.push_back(w);
          rank.nccl_correlations.push_back(k.correlation_id());
          // A collective on its own stream leaves the compute streams idle,
          // and the host's launch gaps there are still the host's
          // (add_launch_gaps).
          if (k.device() != trace::kHostDevice) {
            rank.busy.push_back({k.device(), k.start_ns(), k.end_ns(), true});
          }
          break;
        }
        // A host operator (device -1) is placed by its midpoint, not its
        // start: the marks' backward ranges open in a grad_fn pre-hook, which
        // autograd runs inside the evaluate_function operator of the node
        // they mark, microseconds after that operator began.
        const std::int64_t placed =
            k.device() == trace::kHostDevice ? std::midpoint(k.start_ns(), k.end_ns()) : k.start_ns();
        const bool host = k.device() == trace::kHostDevice;
        Work w{WorkKind::kKernel, placed, k.start_ns(), k.end_ns(), 0, 0, 0,
               trace::is_optimizer_kernel(k.name()),
               host ? static_cast<std::int64_t>(k.stream()) : -1, host ? -1 : k.device()};
        if (!host) {
          w.kernel = kernel_kind(k.name());
          // Each dimension is at most 2^31: the product of the six fits only
          // when bounded, and a grid past 2^40 threads is no real launch.
          const std::int64_t blocks = std::int64_t{std::max(k.grid_x(), 0)} *
                                      std::max(k.grid_y(), 0) * std::max(k.grid_z(), 0);
          const std::int64_t per_block = std::int64_t{std::max(k.block_x(), 0)} *
                                         std::max(k.block_y(), 0) * std::max(k.block_z(), 0);
          if (blocks > 0 && per_block > 0 && blocks <= (std::int64_t{1} << 40) / per_block) {
            w.threads = blocks * per_block;
          }
        }
        add(w, k.correlation_id());
        if (!host) rank.busy.push_back({k.device(), k.start_ns(), k.end_ns()});
        break;
      }
      case v1::Event::kCollective: {
        const auto& c = ev.collective();
        require_plausible_span(c, "collective", source, record);
        collectives.add(c, {source, std::nullopt, record, ""});
        rank.has_collectives = true;
        Work w{WorkKind::kCollective, c.start_ns(), c.start_ns(), c.end_ns(), c.size_bytes(),
               c.communicator_id(), c.sequence_number(), false};
        w.op = static_cast<int>(c.op());
        w.record = record;
        w.nranks = c.nranks();
        if (!c.datatype().empty()) {
          const auto known = std::find(datatypes_.begin(), datatypes_.end(), c.datatype());
          w.datatype = static_cast<std::int32_t>(known - datatypes_.begin());
          if (known == datatypes_.end()) datatypes_.push_back(c.datatype());
        }
        add(w, c.correlation_id());
        if (c.device() >= 0) rank.busy.push_back({c.device(), c.start_ns(), c.end_ns(), true});
        break;
      }
      case v1::Event::kMemcpy: {
        const auto& c = ev.memcpy();
        require_plausible_span(c, "memcpy", source, record);
        rank.busy.push_back({c.device(), c.start_ns(), c.end_ns()});
        if (c.kind() == v1::Memcpy::DTOD && c.device() >= 0) {  // the GPU's own work: compute
          Work w{WorkKind::kKernel, c.start_ns(), c.start_ns(), c.end_ns(), 0, 0, 0, false, -1,
                 c.device()};
          w.kernel = kernel_kind("memcpy");
          add(w, c.correlation_id());
          break;
        }
        if (c.kind() != v1::Memcpy::HTOD) break;
        add({WorkKind::kH2d, c.start_ns(), c.start_ns(), c.end_ns(), c.size_bytes(), 0, 0, false},
            c.correlation_id());
        break;
      }
      case v1::Event::kMemset: {
        const auto& m = ev.memset();
        require_plausible_span(m, "memset", source, record);
        rank.busy.push_back({m.device(), m.start_ns(), m.end_ns()});
        if (m.device() >= 0) {  // the GPU's own work: compute, like a kernel
          Work w{WorkKind::kKernel, m.start_ns(), m.start_ns(), m.end_ns(), 0, 0, 0, false, -1,
                 m.device()};
          w.kernel = kernel_kind("memset");
          add(w, m.correlation_id());
        }
        break;
      }
      case v1::Event::kDevice:
        note_gpu(ev.device());
        break;
      case v1::Event::kApiCall:
        if (ev.api_call().correlation_id() != 0) {
          rank.launch_ns.emplace(ev.api_call().correlation_id(), ev.api_call().start_ns());
        }
        break;
      default: break;
    }
    ++record;
  }

  const std::map<std::string, std::int32_t> layer_index = order_layers();
  // A layer without gradients has no grad_bytes mark; every marked module
  // writes its activation_bytes, 0 included.
  marked_grad_bytes_ = latest_by_layer(std::move(grad_bytes), layer_index, "grad_bytes",
                                       /*unmarked_warning=*/nullptr);
  marked_activation_bytes_ =
      latest_by_layer(std::move(activation_bytes), layer_index, "activation_bytes",
                      "their activations are counted as 0");
  place_work();
  add_interpreter_time();
  add_launch_gaps();
  if (options.split_unmarked_iterations) split_unmarked_iterations();
  for (auto& [r, rank] : ranks_) {
    std::stable_sort(rank.iterations.begin(), rank.iterations.end(),
                     [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
    std::stable_sort(rank.sharding.begin(), rank.sharding.end(),
                     [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  }
}

// Layers in the order of their first forward range (start, then rank);
// every rank's ranges then name layers by index, sorted by start.
std::map<std::string, std::int32_t> TraceWalk::order_layers() {
  std::vector<std::tuple<std::int64_t, std::int32_t, const std::string*>> forwards;
  for (const auto& [r, rank] : ranks_) {
    for (const auto& range : rank.named_ranges) {
      if (range.kind == dag::TaskKind::kForward) forwards.emplace_back(range.start_ns, r, &range.layer);
    }
  }
  std::stable_sort(forwards.begin(), forwards.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  std::map<std::string, std::int32_t> index;
  for (const auto& f : forwards) {
    if (index.emplace(*std::get<2>(f), static_cast<std::int32_t>(layers_.size())).second) {
      layers_.push_back(*std::get<2>(f));
    }
  }
  std::int64_t unknown_backward = 0;
  for (auto& [r, rank] : ranks_) {
    for (const auto& range : rank.named_ranges) {
      const auto it = index.find(range.layer);
      if (it == index.end()) {
        ++unknown_backward;
        continue;
      }
      rank.ranges.push_back({range.start_ns, range.end_ns, it->second, range.kind});
    }
    rank.named_ranges.clear();
    std::stable_sort(
        rank.ranges.begin(), rank.ranges.end(),
        [](const LayerRange& a, const LayerRange& b) { return a.start_ns < b.start_ns; });
  }
  if (unknown_backward > 0) {
    warnings_.push_back(std::to_string(unknown_backward) +
                        " backward ranges name layers with no forward range; ignored");
  }
  return index;
}

// NCCL kernels are dropped where Collective records describe the same
// operations, and are the rank's collectives where there are none; then
// all work moves to its launch time and into launch order.
void TraceWalk::place_work() {
  for (auto& [r, rank] : ranks_) {
    if (rank.nccl_kernels.empty()) continue;
    if (rank.has_collectives) {
      nccl_kernels_dropped_ += static_cast<std::int64_t>(rank.nccl_kernels.size());
      continue;
    }
    warnings_.push_back(
        "rank " + std::to_string(r) +
        ": no NCCL collective records (was the NCCL profiler "
        "plugin loaded?); its " +
        std::to_string(rank.nccl_kernels.size()) +
        " NCCL kernels give the communication times, with unknown sizes (grad_bytes 0)");
    for (std::size_t i = 0; i < rank.nccl_kernels.size(); ++i) {
      rank.work.push_back(rank.nccl_kernels[i]);
      if (rank.nccl_correlations[i] != 0) {
        rank.pending.emplace_back(rank.nccl_correlations[i], rank.work.size() - 1);
      }
    }
  }
  std::int64_t graph_kernels = 0;
  std::int64_t graph_launches = 0;
  for (auto& [r, rank] : ranks_) {
    // One launch call that started several GPU kernels is a CUDA graph's
    // launch (cudaGraphLaunch: every kernel of the graph carries its
    // correlation id). They are placed as launched together by that call,
    // in the layer whose range made it: the first to run owns the device's
    // wait for the host, as an eager kernel does; the others only the short
    // gaps of a queue (add_launch_gaps).
    std::unordered_map<std::uint64_t, std::int64_t> gpu_kernels_of;
    for (const auto& [correlation, index] : rank.pending) {
      const Work& w = rank.work[index];
      if (w.kind == WorkKind::kKernel && w.device >= 0) ++gpu_kernels_of[correlation];
    }
    for (const auto& [correlation, index] : rank.pending) {
      const auto it = rank.launch_ns.find(correlation);
      if (it == rank.launch_ns.end()) continue;
      Work& w = rank.work[index];
      if (w.kind == WorkKind::kKernel && w.device >= 0 && gpu_kernels_of[correlation] > 1) {
        ++graph_kernels;
      }
      w.host_ns = it->second;
      w.launch_known = true;
    }
    for (const auto& [correlation, n] : gpu_kernels_of) {
      if (n > 1 && rank.launch_ns.count(correlation) > 0) ++graph_launches;
    }
    // Without launch calls the host's part of each iteration is unknown: a
    // host-bound trace would replay at the GPU's own time, too short.
    std::int64_t gpu_kernels = 0;
    bool any_launch = false;
    for (const Work& w : rank.work) {
      if (w.kind != WorkKind::kKernel || w.device < 0) continue;
      ++gpu_kernels;
      any_launch = any_launch || w.launch_known;
    }
    if (gpu_kernels > 0 && !any_launch && !simulated_) {
      warnings_.push_back(fmt::format(
          "rank {}: {} GPU kernel(s) and no launch call (the trace holds no CUDA API calls): the "
          "host's launch gaps are unknown and the replay keeps only the GPU's own time, short "
          "where the host set the pace",
          r, gpu_kernels));
    }
    std::stable_sort(rank.work.begin(), rank.work.end(),
                     [](const Work& a, const Work& b) { return a.host_ns < b.host_ns; });
    rank.nccl_kernels.clear();
    rank.nccl_correlations.clear();
    rank.pending.clear();
    rank.launch_ns.clear();
  }
  if (graph_kernels > 0) {
    warnings_.push_back(fmt::format(
        "{} kernel(s) started by {} CUDA graph launch(es) (one launch call, many kernels): each "
        "graph's kernels are placed as launched together by its call, in the layer that made it",
        graph_kernels, graph_launches));
  }
}

// A thread that runs host operators (a CPU training loop) spends the time
// between them in the interpreter: module calls, hooks, the autograd
// engine's bookkeeping, none of it an operator the profiler records. On the
// testbed's captures that is 3.5% of a small CNN's iteration, 0.7% of an
// MLP's (docs/validation.md, section 6). A gap shorter than
// kInterpreterGapNs before an operator on the same thread is counted as
// part of that operator's work; a longer one is the thread waiting (for a
// collective, a barrier, a lock) and stays idle.
void TraceWalk::add_interpreter_time() {
  for (auto& [r, rank] : ranks_) {
    std::map<std::int64_t, std::vector<Work*>> by_thread;
    for (Work& w : rank.work) {
      if (w.kind == WorkKind::kKernel && w.host_thread >= 0) by_thread[w.host_thread].push_back(&w);
    }
    for (auto& [thread, ops] : by_thread) {
      std::stable_sort(ops.begin(), ops.end(),
                       [](const Work* a, const Work* b) { return a->start_ns < b->start_ns; });
      for (std::size_t i = 1; i < ops.size(); ++i) {
        const std::int64_t previous_end = ops[i - 1]->end_ns;
        const std::int64_t gap = ops[i]->start_ns - previous_end;
        if (gap > 0 && gap < kInterpreterGapNs) ops[i]->start_ns = previous_end;
      }
    }
  }
}

std::int32_t TraceWalk::kernel_kind(const std::string& name) {
  const auto [it, fresh] =
      kernel_index_.try_emplace(name, static_cast<std::int32_t>(kernels_.size()));
  if (fresh) kernels_.push_back({name, trace::classify_kernel(name), trace::kernel_math(name)});
  return it->second;
}

void TraceWalk::note_gpu(const trace::v1::Gpu& gpu) {
  if (gpu.name().empty()) return;
  if (gpu_.name.empty()) {
    gpu_ = {gpu.name(), gpu.sm_count(), gpu.compute_capability_major(),
            gpu.compute_capability_minor()};
  } else if (gpu.name() != gpu_.name && !mixed_gpus_) {
    mixed_gpus_ = true;
    warnings_.push_back(fmt::format(
        "the trace's GPUs are of more than one model ('{}', '{}'): kernels are split by what "
        "bounds them as on the first",
        gpu_.name, gpu.name()));
  }
}

// See the header: a GPU kernel owns its device's idle time before it when
// the host made it wait. Run after place_work, so launches are known.
void TraceWalk::add_launch_gaps() {
  for (auto& [r, rank] : ranks_) {
    std::vector<Busy>& busy = rank.busy;
    if (busy.empty()) continue;
    std::stable_sort(busy.begin(), busy.end(), [](const Busy& a, const Busy& b) {
      return std::tie(a.device, a.start_ns) < std::tie(b.device, b.start_ns);
    });
    std::vector<Work*> kernels;
    for (Work& w : rank.work) {
      if (w.kind == WorkKind::kKernel && w.device >= 0 && w.launch_known) kernels.push_back(&w);
    }
    std::stable_sort(kernels.begin(), kernels.end(), [](const Work* a, const Work* b) {
      return std::tie(a->device, a->start_ns) < std::tie(b->device, b->start_ns);
    });
    // The rank's io ranges (data loading): no kernel owns their time, which
    // the scenario's io task stands for.
    std::vector<std::pair<std::int64_t, std::int64_t>> io;
    for (const Work& w : rank.work) {
      if (w.kind == WorkKind::kIo) io.emplace_back(w.start_ns, w.end_ns);
    }
    std::sort(io.begin(), io.end());
    // One pass per device: for each kernel, the latest end of the device's
    // work (and of the io ranges) that started before it (running maximum
    // over `busy` and `io` in start order).
    std::size_t b = 0;
    std::size_t i = 0;
    std::int32_t device = -1;
    constexpr std::int64_t kNothingYet = std::numeric_limits<std::int64_t>::min();
    std::int64_t busy_until = kNothingYet;
    std::int64_t comm_until = kNothingYet;  // the latest end of the device's collectives
    for (Work* k : kernels) {
      if (k->device != device) {
        device = k->device;
        busy_until = comm_until = kNothingYet;
        i = 0;
        while (b < busy.size() && busy[b].device < device) ++b;
      }
      const std::int64_t start = k->start_ns;
      for (; b < busy.size() && busy[b].device == device && busy[b].start_ns < start; ++b) {
        std::int64_t& until = busy[b].comm ? comm_until : busy_until;
        until = std::max(until, busy[b].end_ns);
      }
      for (; i < io.size() && io[i].first < start; ++i) {
        busy_until = std::max(busy_until, io[i].second);
      }
      // Launched while a collective ran: the host was not waiting for it,
      // so the compute streams' idle time up to the launch is the host's.
      // Launched after every collective had ended: the host may have waited
      // for one (a synchronize), and a collective counts as busy.
      const bool beside_comm = comm_until != kNothingYet && k->host_ns < comm_until;
      const std::int64_t dry = beside_comm ? busy_until : std::max(busy_until, comm_until);
      if (dry != kNothingYet && dry < start) {
        const std::int64_t gap = start - dry;
        if (gap < kQueuedGapNs) {
          k->start_ns = dry;
        } else if (k->host_ns >= dry) {
          // Held after its launch until a collective ended (its stream
          // waiting on the collective's event): the part up to the launch is
          // its own; the wait stays idle.
          const bool waited =
              beside_comm && comm_until <= start && start - k->host_ns >= kQueuedGapNs;
          k->start_ns = waited ? start - (k->host_ns - dry) : dry;
        }
      }
      // A kernel that starts at the same time on another stream owns no
      // idle time: this one has it.
      busy_until = std::max(busy_until, start);
    }
    busy.clear();
    busy.shrink_to_fit();
  }
}

void TraceWalk::split_unmarked_iterations() {
  for (auto& [r, rank] : ranks_) {
    if (!rank.iterations.empty()) continue;
    // Kernels and collectives, in launch order: what the rules look at.
    std::vector<const Work*> work;
    for (const Work& w : rank.work) {
      if (w.kind == WorkKind::kKernel || w.kind == WorkKind::kCollective) work.push_back(&w);
    }
    if (work.empty()) continue;
    std::vector<std::size_t> ends;  // index of the work that ends each iteration
    std::string how;
    for (std::size_t i = 0; i < work.size(); ++i) {
      if (work[i]->optimizer && (i + 1 == work.size() || !work[i + 1]->optimizer)) {
        ends.push_back(i);
      }
    }
    if (!ends.empty()) {
      how = "after each optimizer step (kernels named like adam, sgd or multi_tensor_apply)";
    } else {
      std::vector<std::size_t> coll;
      for (std::size_t i = 0; i < work.size(); ++i) {
        if (work[i]->kind == WorkKind::kCollective) coll.push_back(i);
      }
      const std::size_t n = coll.size();
      for (std::size_t k = 1; 2 * k <= n && ends.empty(); ++k) {
        bool periodic = true;
        for (std::size_t i = 0; i + k < n && periodic; ++i) {
          periodic = work[coll[i]]->bytes == work[coll[i + k]]->bytes;
        }
        if (!periodic) continue;
        for (std::size_t j = k - 1; j < n; j += k) ends.push_back(coll[j]);
        how = "every " + std::to_string(k) + " collective(s), the period of their sizes";
      }
    }
    if (ends.empty()) continue;
    // Each iteration starts just after the previous end was launched, so
    // that the layer ranges opened before its first launch are inside it.
    std::int64_t start = std::numeric_limits<std::int64_t>::min();
    for (std::size_t e = 0; e < ends.size(); ++e) {
      const std::int64_t end = work[ends[e]]->host_ns + 1;
      rank.iterations.push_back({static_cast<std::int64_t>(e), start, end});
      start = end;
    }
    warnings_.push_back("rank " + std::to_string(r) +
                        " has no iteration/<N> markers: its iterations were split " + how + " (" +
                        std::to_string(rank.iterations.size()) + " found)");
  }
}

std::vector<std::int32_t> TraceWalk::ranks() const {
  std::vector<std::int32_t> out;
  for (const auto& [r, rank] : ranks_) {
    if (!rank.iterations.empty()) out.push_back(r);
  }
  return out;
}

const std::vector<WalkIteration>& TraceWalk::iterations(std::int32_t rank) const {
  static const std::vector<WalkIteration> kNone;
  const auto it = ranks_.find(rank);
  return it == ranks_.end() ? kNone : it->second.iterations;
}

IterationWork TraceWalk::iteration_work(std::int32_t rank_id,
                                        const WalkIteration& iteration) const {
  IterationWork out;
  const auto found = ranks_.find(rank_id);
  if (found == ranks_.end()) return out;
  const Rank& rank = found->second;
  const std::int64_t s = iteration.start_ns;
  const std::int64_t e = iteration.end_ns;
  const auto starts_before = [](const LayerRange& r, std::int64_t t) { return r.start_ns < t; };
  auto range = std::lower_bound(rank.ranges.begin(), rank.ranges.end(), s, starts_before);
  for (; range != rank.ranges.end() && range->start_ns < e; ++range) out.ranges.push_back(*range);
  const auto& ranges = out.ranges;
  const auto span_before = [](const ShardingSpan& r, std::int64_t t) { return r.start_ns < t; };
  for (auto span = std::lower_bound(rank.sharding.begin(), rank.sharding.end(), s, span_before);
       span != rank.sharding.end() && span->start_ns < e; ++span) {
    out.sharding.push_back(*span);
  }
  std::optional<std::int64_t> backward_end;  // end of the iteration's last backward range
  for (const auto& r : ranges) {
    if (r.kind == dag::TaskKind::kBackward) {
      backward_end = std::max(backward_end.value_or(r.end_ns), r.end_ns);
    }
  }
  // One pass over the work in launch order. `open` holds the ranges started
  // and not yet ended at the current launch, by start, so its last is the
  // innermost; `ended` and `ended_backward` are the ranges that ended last.
  std::vector<const LayerRange*> open;
  const LayerRange* ended = nullptr;
  const LayerRange* ended_backward = nullptr;
  const auto later = [](const LayerRange* best, const LayerRange& r) {
    return best == nullptr ||
           std::tie(r.end_ns, r.start_ns) >= std::tie(best->end_ns, best->start_ns);
  };
  std::size_t next = 0;
  const auto launched_before = [](const Work& x, std::int64_t t) { return x.host_ns < t; };
  for (auto w = std::lower_bound(rank.work.begin(), rank.work.end(), s, launched_before);
       w != rank.work.end() && w->host_ns < e; ++w) {
    for (; next < ranges.size() && ranges[next].start_ns <= w->host_ns; ++next) {
      open.push_back(&ranges[next]);
    }
    std::erase_if(open, [&](const LayerRange* r) {
      if (r->end_ns > w->host_ns) return false;
      if (later(ended, *r)) ended = r;
      if (r->kind == dag::TaskKind::kBackward && later(ended_backward, *r)) ended_backward = r;
      return true;
    });
    const LayerRange* holder = open.empty() ? nullptr : open.back();
    TaskWork t;
    t.start_ns = w->start_ns;
    // A GPU kernel's idle time ends where its iteration begins: a pause
    // before the iteration (between a profiler's cycles, unmarked steps) is
    // no iteration's.
    if (w->kind == WorkKind::kKernel && w->device >= 0) t.start_ns = std::max(t.start_ns, s);
    t.end_ns = w->end_ns;
    t.bytes = w->bytes;
    t.launch_ns = w->host_ns;
    t.own_ns = std::min(w->own_ns, t.end_ns - t.start_ns);
    t.kernel = w->kernel;
    t.threads = w->threads;
    t.host_op = w->kind == WorkKind::kKernel && w->device < 0;
    switch (w->kind) {
      case WorkKind::kIo: t.kind = dag::TaskKind::kIo; break;
      case WorkKind::kH2d: t.kind = dag::TaskKind::kH2d; break;
      case WorkKind::kCollective: {
        t.kind = dag::TaskKind::kComm;
        const LayerRange* by =
            holder && holder->kind == dag::TaskKind::kBackward ? holder : ended_backward;
        t.layer = by ? by->layer : -1;
        t.communicator = w->communicator;
        t.sequence = w->sequence;
        t.op = w->op;
        t.record = w->record;
        t.nranks = w->nranks;
        if (w->datatype >= 0) t.datatype = datatypes_[static_cast<std::size_t>(w->datatype)];
        break;
      }
      case WorkKind::kKernel:
        if (holder) {  // inside a range
          t.kind = holder->kind;
          t.layer = holder->layer;
          t.in_range = true;
        } else if (ranges.empty() || (backward_end && w->host_ns >= *backward_end)) {
          t.kind = dag::TaskKind::kUpdate;
        } else if (w->host_ns < ranges.front().start_ns) {
          t.kind = dag::TaskKind::kForward;
          t.layer = 0;
        } else {  // between ranges: the first range has ended, so `ended` is set
          t.kind = ended->kind;
          t.layer = ended->layer;
        }
        break;
    }
    out.work.push_back(t);
  }
  return out;
}

}  // namespace ssgd::walk
