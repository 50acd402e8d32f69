#include "walk/trace_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <map>
#include <utility>
#include <vector>

#include "common/checked_math.h"
#include "common/error.h"
#include "common/intervals.h"
#include "traces/collective_names.h"
#include "traces/collective_records.h"
#include "traces/kernel_names.h"
#include "traces/trace_collectives.h"
#include "walk/trace_sharding.h"
#include "walk/trace_walk.h"

namespace ssgd::walk {
namespace {

// The mean of n values adding up to v (>= 0), rounded half up, without
// forming v + n / 2.
std::int64_t mean_half_up(std::int64_t v, std::int64_t n) { return v / n + (v % n >= n - n / 2); }

// The micro-batches an iteration ran (gradient accumulation), read off its
// first layer (the one whose forward range starts first): a micro-batch
// begins with a forward range of it that starts outside every backward range
// after its backward range of the micro-batch before has ended. A
// checkpointed layer's recomputation (before or inside its backward) is not
// one; a first layer without backward ranges gives 1. `last_start` is when
// the last micro-batch began.
struct MicroBatches {
  std::int64_t count = 1;
  std::int64_t last_start = 0;
};

MicroBatches micro_batches_of(const IterationWork& work) {
  MicroBatches out;
  const LayerRange* first = nullptr;
  Intervals backward;
  for (const LayerRange& r : work.ranges) {
    if (r.kind == dag::TaskKind::kBackward) {
      backward.emplace_back(r.start_ns, std::max(r.end_ns, r.start_ns + 1));
    } else if (first == nullptr || r.start_ns < first->start_ns) {
      first = &r;
    }
  }
  if (first == nullptr) return out;
  backward = merged_intervals(std::move(backward));
  std::vector<const LayerRange*> own;  // the first layer's ranges, by start
  for (const LayerRange& r : work.ranges) {
    if (r.layer == first->layer) own.push_back(&r);
  }
  std::sort(own.begin(), own.end(),
            [](const LayerRange* x, const LayerRange* y) { return x->start_ns < y->start_ns; });
  std::int64_t count = 0;
  std::int64_t backward_ended = -1;  // the end of its backward since the last micro-batch began
  for (const LayerRange* r : own) {
    if (r->kind == dag::TaskKind::kBackward) {
      if (count > 0) backward_ended = std::max(backward_ended, r->end_ns);
      continue;
    }
    if (covered_ns(backward, r->start_ns, r->start_ns + 1) > 0) continue;
    if (count == 0 || (backward_ended >= 0 && backward_ended <= r->start_ns)) {
      ++count;
      out.last_start = r->start_ns;
      backward_ended = -1;
    }
  }
  out.count = std::max<std::int64_t>(count, 1);
  return out;
}

struct LayerAccumulator {
  std::int64_t forward_ns = 0;
  std::int64_t backward_ns = 0;
  std::int64_t comm_ns = 0;
  std::int64_t bytes = 0;
  std::int64_t all_reduce_bytes = 0;  // apart: a sharded run's all-reduces follow its reduce-scatters
  trace::RateSplit forward_split;
  trace::RateSplit backward_split;
  std::int64_t forward_beside_comm_ns = 0;   // of forward_ns, beside a collective of the rank
  std::int64_t backward_beside_comm_ns = 0;
  double forward_beside_comm_bytes = 0;  // bytes the rank's collectives moved through it meanwhile
  double backward_beside_comm_bytes = 0;
};

// A tracing window's steps (TraceWalk::window_marks): those inside a span
// when recording was on are traced, the others untraced; the medians of
// each, none when either kind is missing.
std::optional<trace::TracingWindowSteps> window_steps(const TraceWalk& walk) {
  std::vector<std::int64_t> traced, untraced;
  for (const auto& [rank, marks] : walk.window_marks()) {
    std::vector<std::pair<std::int64_t, std::int64_t>> on;  // recording on, [open, close)
    std::vector<std::int64_t> closes = marks.closes;
    std::sort(closes.begin(), closes.end());
    for (const std::int64_t open : marks.opens) {
      const auto c = std::lower_bound(closes.begin(), closes.end(), open);
      on.emplace_back(open, c == closes.end() ? std::numeric_limits<std::int64_t>::max() : *c);
    }
    for (const auto& step : marks.steps) {
      const bool inside = std::any_of(on.begin(), on.end(), [&step](const auto& span) {
        return step.first >= span.first && step.second <= span.second;
      });
      (inside ? traced : untraced).push_back(step.second - step.first);
    }
  }
  if (traced.empty() || untraced.empty()) return std::nullopt;
  const auto median = [](std::vector<std::int64_t> v) {
    std::sort(v.begin(), v.end());
    return Duration(v[v.size() / 2]);
  };
  return trace::TracingWindowSteps{static_cast<std::int64_t>(traced.size()),
                                   static_cast<std::int64_t>(untraced.size()), median(traced),
                                   median(untraced)};
}

// Where a compute work item's own time starts (a kernel's execution; a host
// operator's whole time).
std::int64_t own_start(const TaskWork& w) {
  return w.host_op || w.kernel < 0 ? w.start_ns : w.end_ns - w.own_ns;
}

// The part of a compute work item's own time that ran beside one of `comm`.
std::int64_t beside(const Intervals& comm, const TaskWork& w) {
  if (comm.empty()) return 0;
  return covered_ns(comm, own_start(w), w.end_ns);
}

// The threads one wave of `gpu` holds: its SMs times the threads an SM
// keeps resident (2048 on Volta, Ampere's and Hopper's data-centre parts and
// Blackwell; 1536 on sm_86, sm_87 and sm_89; 1024 on Turing: CUDA C++
// programming guide, "Technical Specifications per Compute Capability").
// 0 when the trace does not give the SM count.
std::int64_t wave_threads(const TraceGpu& gpu) {
  if (gpu.sm_count <= 0) return 0;
  std::int64_t per_sm = 2048;
  if (gpu.compute_capability_major == 7 && gpu.compute_capability_minor == 5) per_sm = 1024;
  if (gpu.compute_capability_major == 8 && gpu.compute_capability_minor >= 6) per_sm = 1536;
  return std::int64_t{gpu.sm_count} * per_sm;
}

// The rate that bounds a GPU kernel's own time (traces/rate_split.h).
trace::WorkRate rate_of(const KernelKind& k, std::int64_t threads, std::int64_t wave) {
  using trace::WorkRate;
  if (trace::is_compute_class(k.kind)) {
    switch (k.math.value_or(trace::KernelMath::kFp32)) {
      case trace::KernelMath::kFp32: return WorkRate::kFp32;
      case trace::KernelMath::kTf32: return WorkRate::kTf32;
      case trace::KernelMath::kFp16: return WorkRate::kFp16;
      case trace::KernelMath::kBf16: return WorkRate::kBf16;
      case trace::KernelMath::kFp8: return WorkRate::kFp8;
    }
  }
  if (trace::is_memory_class(k.kind)) {
    return threads > 0 && wave > 0 && threads <= wave ? WorkRate::kLatency : WorkRate::kMemory;
  }
  return WorkRate::kOther;
}

}  // namespace

TraceProfileResult profile_from_trace(trace::TraceReader& reader, const std::string& source) {
  const TraceWalk walk(reader, source, {.split_unmarked_iterations = true});
  TraceProfileResult out;
  if (walk.layers().empty()) {
    throw InputError({source, std::nullopt, std::nullopt, "marker.name"},
                     "the trace has no forward/<layer> marker ranges, so its layers are unknown "
                     "(mark them, e.g. with tracer/python's helper)");
  }
  out.warnings = walk.warnings();
  out.nccl_kernels_dropped = walk.nccl_kernels_dropped();

  const auto L = walk.layers().size();
  std::vector<LayerAccumulator> acc(L);
  std::int64_t update_ns = 0;
  std::int64_t update_beside_comm_ns = 0;  // of update_ns, beside a collective of the rank
  double update_beside_comm_bytes = 0;
  trace::RateSplit update_split;
  // The kernels by class and rate (traces/kernel_class.h, traces/rate_split.h).
  const std::int64_t wave = wave_threads(walk.gpu());
  trace::KernelClassTable classes;
  std::vector<std::int64_t> kernel_ns(walk.kernels().size(), 0);
  bool gpu_work = false;
  // Splits a kernel's time into `split`: its own time by the rate that
  // bounds it, the idle time it owns (and a host operator's whole time) as
  // the host's.
  const auto split_into = [&](trace::RateSplit& split, const TaskWork& w) {
    if (w.host_op || w.kernel < 0) {
      split[trace::WorkRate::kHost] += w.duration_ns();
      return;
    }
    gpu_work = true;
    const KernelKind& k = walk.kernels()[static_cast<std::size_t>(w.kernel)];
    const trace::WorkRate rate = rate_of(k, w.threads, wave);
    split[rate] += w.own_ns;
    split[trace::WorkRate::kHost] += w.duration_ns() - w.own_ns;
    const auto c = static_cast<std::size_t>(k.kind);
    classes.ns[c] += w.own_ns;
    ++classes.kernels[c];
    if (trace::is_compute_class(k.kind) && !k.math) classes.math_unknown_ns += w.own_ns;
    if (rate == trace::WorkRate::kLatency) classes.latency_ns += w.own_ns;
    kernel_ns[static_cast<std::size_t>(w.kernel)] += w.own_ns;
  };
  std::int64_t samples = 0;  // rank-iterations accumulated
  // The sum of those rank-iterations' spans, ns; none when one has no span
  // (or the sum overflows).
  std::optional<std::int64_t> span_sum = 0;
  // micro-batches an iteration ran -> iterations
  std::map<std::int64_t, std::int64_t> micro_batches;
  std::int64_t reduced_every_micro_batch = 0;  // iterations of several that communicated in each
  std::int64_t max_iterations = 0;
  std::int64_t empty_iterations = 0;  // marked, but no kernel or collective launched in them
  trace::MeasuredOnlyCollectives& measured_only = out.profile.measured_only;
  // ssgd/grad_bytes marks give the gradients' sizes when the collectives lack theirs.
  const bool sizes_marked = !walk.marked_grad_bytes().empty();
  std::map<std::string, std::int64_t> other_kinds;  // kind label -> count
  // Sharded data parallelism: units, strategy and gradient bytes (walk/trace_sharding.h).
  TraceSharding sharding(L, reader.metadata().world_size());
  // A collective replayed at its measured time that grad_bytes cannot stand for.
  const auto measured_only_collective = [&](const TaskWork& w, bool sized) {
    if (measured_only.any()) return;
    measured_only.first_record = w.record;
    measured_only.first_field = sized ? "collective.op" : "collective.size_bytes";
    measured_only.first_what =
        sized ? fmt::format("the collective is a {}, which the replay does not model",
                            trace::collective_op_label(w.op))
              : fmt::format("the {} collective has no size", trace::collective_op_label(w.op));
  };
  // Sums of the trace's durations and sizes over layers, ranks and
  // iterations: an overflow names the trace instead of wrapping.
  auto accumulate = [&](std::int64_t& total, std::int64_t value, const char* what) {
    const auto sum = checked_add(total, value);
    if (!sum) {
      throw InputError({source, std::nullopt, std::nullopt, ""},
                       fmt::format("the total {} over the trace's iterations exceeds 2^63 - 1",
                                   what));
    }
    total = *sum;
  };
  for (const std::int32_t rank : walk.ranks()) {
    const auto& iterations = walk.iterations(rank);
    ++out.ranks;
    max_iterations = std::max<std::int64_t>(max_iterations, iterations.size());
    // Not a training step: an iteration that launched nothing, or one
    // without a layer range on a rank whose other iterations have them.
    // torch.profiler (2.11) closes the range the helper opened after the
    // last step it recorded when it stops, and what it caught in it (one
    // copy, or nothing) averaged in as a step took a quarter off replays of
    // four-step captures. Those are left out first; then the first step is
    // warm-up when there are more. (Two passes over the walker's work, so
    // that one rank's iterations are never all held at once.)
    const auto launched = [](const IterationWork& work) {
      return std::any_of(work.work.begin(), work.work.end(), [](const TaskWork& w) {
        return w.kind != dag::TaskKind::kIo && w.kind != dag::TaskKind::kH2d;
      });
    };
    std::vector<char> has_ranges(iterations.size()), has_work(iterations.size());
    bool rank_has_ranges = false;
    Intervals comm;  // the rank's collectives, whichever iteration launched them
    RatedIntervals flows;  // and the bytes a ns each moved through the rank
    for (std::size_t i = 0; i < iterations.size(); ++i) {
      const IterationWork work = walk.iteration_work(rank, iterations[i]);
      for (const TaskWork& w : work.work) {
        if (w.kind == dag::TaskKind::kComm && w.end_ns > w.start_ns) {
          comm.emplace_back(w.start_ns, w.end_ns);
          flows.add(w.start_ns, w.end_ns,
                    trace::trace_bytes_through(static_cast<trace::v1::Collective::Op>(w.op),
                                               w.bytes, w.nranks) /
                        static_cast<double>(w.duration_ns()));
        }
      }
      has_ranges[i] = !work.ranges.empty();
      has_work[i] = launched(work);
      rank_has_ranges = rank_has_ranges || has_ranges[i];
    }
    comm = merged_intervals(std::move(comm));
    flows.seal();
    std::vector<std::size_t> steps;
    for (std::size_t i = 0; i < iterations.size(); ++i) {
      if (has_work[i] && (has_ranges[i] || !rank_has_ranges)) {
        steps.push_back(i);
      } else {
        ++empty_iterations;
      }
    }
    for (std::size_t k = steps.size() > 1 ? 1 : 0; k < steps.size(); ++k) {
      const IterationWork work = walk.iteration_work(rank, iterations[steps[k]]);
      // A span that cannot be one (the first of a rank's split iterations
      // starts unbounded) leaves the traced steps unknown.
      const auto span = checked_sub(iterations[steps[k]].end_ns, iterations[steps[k]].start_ns);
      span_sum = span && *span > 0 && *span <= trace::kMaxProfileTimeNs && span_sum
                     ? checked_add(*span_sum, *span)
                     : std::nullopt;
      ++samples;
      MicroBatches micro = micro_batches_of(work);
      // Gradients reduced before the last micro-batch began: the capture
      // communicated on every micro-batch (no no_sync), and its iteration is
      // replayed as one micro-batch of all of them.
      if (micro.count > 1 &&
          std::any_of(work.work.begin(), work.work.end(), [&](const TaskWork& w) {
            return w.kind == dag::TaskKind::kComm && w.op != trace::v1::Collective::ALL_GATHER &&
                   w.start_ns < micro.last_start;
          })) {
        ++reduced_every_micro_batch;
        micro.count = 1;
      }
      ++micro_batches[micro.count];
      sharding.add(work);
      for (const TaskWork& w : work.work) {
        switch (w.kind) {
          case dag::TaskKind::kComm: {
            ++out.collectives;
            // An all-gather moves parameters, never gradients: neither its
            // bytes nor its time are a layer's gradient communication.
            if (w.op == trace::v1::Collective::ALL_GATHER) {
              ++out.gathers;
              break;
            }
            auto& a = acc[w.layer >= 0 ? static_cast<std::size_t>(w.layer) : 0];
            accumulate(a.comm_ns, w.duration_ns(), "collective time of a layer");
            // Only a collective of the whole group on one buffer has bytes a
            // gradient collective stands for; every other is replayed at
            // its measured time alone.
            const bool modelled_kind =
                trace::is_group_buffer_collective(static_cast<trace::v1::Collective::Op>(w.op));
            if (!modelled_kind) {
              measured_only_collective(w, w.bytes > 0);
              ++measured_only.other_kind;
              ++other_kinds[trace::collective_op_label(w.op)];
            } else if (w.bytes == 0 && !sizes_marked) {
              measured_only_collective(w, false);
              ++measured_only.without_size;
            } else {
              accumulate(w.op == trace::v1::Collective::ALL_REDUCE ? a.all_reduce_bytes : a.bytes,
                         w.bytes, "gradient bytes of a layer");
            }
            break;
          }
          case dag::TaskKind::kForward:
          case dag::TaskKind::kBackward: {
            ++(w.in_range ? out.kernels_in_ranges : out.kernels_outside_ranges);
            auto& a = acc[static_cast<std::size_t>(w.layer)];
            accumulate(w.kind == dag::TaskKind::kForward ? a.forward_ns : a.backward_ns,
                       w.duration_ns(), "compute time of a layer");
            (w.kind == dag::TaskKind::kForward ? a.forward_beside_comm_ns : a.backward_beside_comm_ns) +=
                beside(comm, w);
            (w.kind == dag::TaskKind::kForward ? a.forward_beside_comm_bytes
                                               : a.backward_beside_comm_bytes) +=
                flows.amount(own_start(w), w.end_ns);
            split_into(w.kind == dag::TaskKind::kForward ? a.forward_split : a.backward_split, w);
            break;
          }
          case dag::TaskKind::kUpdate:
            ++out.kernels_outside_ranges;
            ++out.kernels_update;
            accumulate(update_ns, w.duration_ns(), "update time");
            update_beside_comm_ns += beside(comm, w);
            update_beside_comm_bytes += flows.amount(own_start(w), w.end_ns);
            split_into(update_split, w);
            break;
          default:  // io and h2d are the scenario's
            break;
        }
      }
    }
  }
  if (empty_iterations > 0) {
    out.warnings.push_back(fmt::format(
        "{} marked iteration(s) launched nothing or ran no layer (a range the profiler closed "
        "when it stopped?); left out",
        empty_iterations));
  }
  if (samples == 0 && empty_iterations > 0) {
    throw InputError({source, std::nullopt, std::nullopt, "marker.name"},
                     "no marked iteration launched a kernel or a collective in a layer: nothing to "
                     "replay");
  }
  if (samples == 0) {
    throw InputError({source, std::nullopt, std::nullopt, "marker.name"},
                     "the trace has no iteration/<N> marker ranges, no optimizer-step kernels and "
                     "no collectives whose sizes repeat; mark iterations to replay it");
  }
  out.iterations_seen = max_iterations;
  // Steady iterations per rank, rounded up: ranks may have kept different counts.
  const std::int64_t ranks = std::max<std::int64_t>(out.ranks, 1);
  out.iterations_used = (samples + ranks - 1) / ranks;
  auto avg = [&](std::int64_t v) { return mean_half_up(v, samples); };
  trace::LayerProfile& p = out.profile;
  p.source = source;
  p.model = reader.metadata().framework();
  p.provenance = "trace " + source + ": " + std::to_string(out.ranks) + " rank(s), " +
                 std::to_string(out.iterations_used) + " steady iteration(s) averaged";
  p.update = Duration(avg(update_ns));
  // Gradient accumulation: every layer ran `micro` forward and backward passes an
  // iteration. The rows hold one micro-batch's (the replay runs
  // workload.accumulation of them), the update and the collectives one
  // step's. `micro` is the most common count; iterations that differ are said.
  std::int64_t micro = 1, micro_iterations = 0;
  std::int64_t micro_total = 0;  // micro-batches over the iterations accumulated
  for (const auto& [n, count] : micro_batches) {
    if (count > micro_iterations) micro = n, micro_iterations = count;
    micro_total += n * count;
  }
  if (micro > 1) {
    p.micro_batches = micro;
    out.warnings.push_back(fmt::format(
        "every layer ran {} forward passes an iteration (gradient accumulation): the layers' "
        "times are one micro-batch's, and workload.accumulation is {} unless the scenario sets it",
        micro, micro));
  }
  if (micro_batches.size() > 1) {
    std::string counts;
    for (const auto& [n, count] : micro_batches) {
      counts += fmt::format("{}{} iteration(s) of {}", counts.empty() ? "" : ", ", count, n);
    }
    out.warnings.push_back(fmt::format(
        "the iterations ran different numbers of micro-batches ({}): the layers' times are "
        "the mean over all {} micro-batches, and workload.accumulation defaults to {}",
        counts, micro_total, micro));
  }
  if (reduced_every_micro_batch > 0) {
    out.warnings.push_back(fmt::format(
        "{} iteration(s) ran several micro-batches and reduced gradients before the last (no "
        "no_sync): each is replayed as one micro-batch of all of them, its collectives "
        "included; a what-if of another accumulation from it is not meaningful",
        reduced_every_micro_batch));
  }
  // One micro-batch's mean time.
  auto avg_micro = [&](std::int64_t v) { return mean_half_up(v, micro_total); };
  const auto& marked = walk.marked_grad_bytes();
  const auto& activations = walk.marked_activation_bytes();
  const bool with_comm = out.collectives > 0;
  for (std::size_t l = 0; l < L; ++l) {
    trace::LayerRow row;
    row.layer = static_cast<std::int64_t>(l);
    row.name = walk.layers()[l];
    row.forward = Duration(avg_micro(acc[l].forward_ns));
    row.backward = Duration(avg_micro(acc[l].backward_ns));
    // HSDP's all-reduces carry the shards its reduce-scatters (or reduces)
    // made: the gradients are counted once, by those.
    const std::int64_t all_reduced =
        sharding.all_reduces_carry_shards() ? 0 : acc[l].all_reduce_bytes;
    row.grad_bytes = marked.empty() ? avg(checked_add(acc[l].bytes, all_reduced).value_or(acc[l].bytes)) : marked[l];
    if (with_comm) row.comm = Duration(avg(acc[l].comm_ns));
    if (!activations.empty()) row.activation_bytes = activations[l];
    const auto share = [](std::int64_t part, std::int64_t whole) {
      return whole > 0 ? std::min(1.0, static_cast<double>(part) / static_cast<double>(whole)) : 0.0;
    };
    const auto rate = [](double bytes, std::int64_t ns) {
      return ns > 0 ? bytes / static_cast<double>(ns) : 0.0;
    };
    row.forward_beside_comm = share(acc[l].forward_beside_comm_ns, acc[l].forward_ns);
    row.backward_beside_comm = share(acc[l].backward_beside_comm_ns, acc[l].backward_ns);
    row.forward_beside_comm_rate = rate(acc[l].forward_beside_comm_bytes, acc[l].forward_ns);
    row.backward_beside_comm_rate = rate(acc[l].backward_beside_comm_bytes, acc[l].backward_ns);
    if (gpu_work) {
      row.forward_split =
          trace::averaged_split(acc[l].forward_split, micro_total, row.forward.ns());
      row.backward_split =
          trace::averaged_split(acc[l].backward_split, micro_total, row.backward.ns());
    }
    p.layers.push_back(std::move(row));
  }
  p.host_compute = !gpu_work;
  p.tracing_window = window_steps(walk);
  if (span_sum && samples > 0) {
    p.traced.step = Duration(mean_half_up(*span_sum, samples));
    p.traced.steps = samples;
  }
  p.traced.world = reader.metadata().world_size();
  p.traced.hosts = reader.metadata().hosts_size();
  for (const auto& host : reader.metadata().hosts()) {
    p.traced.gpus_per_host = std::max<std::int64_t>(p.traced.gpus_per_host, host.gpus_size());
  }
  if (p.tracing_window) {
    const auto& w = *p.tracing_window;
    out.warnings.push_back(fmt::format(
        "tracing window: {} step(s) traced, {} recorded by their boundaries only; the traced "
        "ones took {:.3f} ms (median), the others {:.3f} ms: {:+.1f}% inside the window "
        "(workload.tracer_overhead: remove takes the difference out of the host's time)",
        w.traced, w.untraced, static_cast<double>(w.traced_median.ns()) / 1e6,
        static_cast<double>(w.untraced_median.ns()) / 1e6,
        w.untraced_median.ns() > 0
            ? 100.0 * static_cast<double>(w.traced_median.ns() - w.untraced_median.ns()) /
                  static_cast<double>(w.untraced_median.ns())
            : 0.0));
  } else if (!walk.window_marks().empty()) {
    out.warnings.push_back("tracing window: every reported step was traced, or none: no "
                           "untraced step to tell the window's own cost by");
  }
  p.update_beside_comm =
      update_ns > 0 ? std::min(1.0, static_cast<double>(update_beside_comm_ns) /
                                        static_cast<double>(update_ns))
                    : 0.0;
  p.update_beside_comm_rate =
      update_ns > 0 ? update_beside_comm_bytes / static_cast<double>(update_ns) : 0.0;
  if (gpu_work) {
    // Every part of the split was also added to its total, whose overflow
    // was checked: none of these sums overflows.
    p.update_split = trace::averaged_split(update_split, samples, p.update->ns());
    p.gpu = walk.gpu().name;
    for (auto& v : classes.ns) v = avg(v);
    for (auto& v : classes.kernels) v = avg(v);
    classes.math_unknown_ns = avg(classes.math_unknown_ns);
    classes.latency_ns = avg(classes.latency_ns);
    std::vector<std::pair<std::int64_t, std::size_t>> unclassified;
    for (std::size_t k = 0; k < kernel_ns.size(); ++k) {
      if (walk.kernels()[k].kind == trace::KernelClass::kOther && kernel_ns[k] > 0) {
        unclassified.emplace_back(kernel_ns[k], k);
      }
    }
    std::sort(unclassified.begin(), unclassified.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    for (std::size_t i = 0; i < unclassified.size() && i < 10; ++i) {
      classes.unclassified.emplace_back(
          trace::short_kernel_name(walk.kernels()[unclassified[i].second].name),
          avg(unclassified[i].first));
    }
    p.kernel_classes = std::move(classes);
  }
  sharding.fill(p, samples, out.warnings);
  out.units = sharding.units();
  // A sharded step's optimizer stepped on one shard of the N ranks a shard
  // spans; a profile's update is the whole model's, which the replay divides
  // by the scenario's N (docs/sharding.md), so the measured one is N times.
  if (p.update && p.update->ns() > 0 && !p.sharding.empty() && p.sharding != "none") {
    const std::int64_t n = p.shard_group.value_or(reader.metadata().world_size());
    if (n > 1) {
      const Duration shard = *p.update;
      p.update = shard * n;
      if (p.update_split) {
        for (auto& v : p.update_split->ns) v *= n;
      }
      out.warnings.push_back(fmt::format(
          "sharding {}: the optimizer stepped on one shard of {} ranks ({:.3f} ms); the profile's "
          "update is the whole model's, {} times that ({:.3f} ms), which the replay divides by "
          "the ranks a shard spans",
          p.sharding, n, static_cast<double>(shard.ns()) / 1e6, n,
          static_cast<double>(p.update->ns()) / 1e6));
    }
  }
  if (measured_only.without_size > 0) {
    out.warnings.push_back(fmt::format(
        "{} collective(s) had no size; replayed at their measured durations (first: record {}). "
        "A replay that models them (a policy that merges gradients) needs sizes: record them "
        "with tracer/python's ssgd_marks (ssgd/collective_bytes or ssgd/grad_bytes marks) or "
        "torch.profiler(record_shapes=True)",
        measured_only.without_size, measured_only.first_record));
  }
  if (measured_only.other_kind > 0) {
    std::string kinds;
    for (const auto& [kind, n] : other_kinds) {
      kinds += fmt::format("{}{} {}", kinds.empty() ? "" : ", ", n, kind);
    }
    out.warnings.push_back(fmt::format(
        "{} collective(s) are of kinds the S-SGD replay does not model ({}); replayed at their "
        "measured durations, their bytes not counted as gradients",
        measured_only.other_kind, kinds));
  }
  // The bounds every reader of a layer profile keeps (traces/layer_profile.h).
  std::int64_t total_ns = 0;
  for (const auto& row : p.layers) {
    for (const auto& [field, d] : {std::pair{"forward_ns", row.forward},
                                   {"backward_ns", row.backward},
                                   {"comm_ns", row.comm.value_or(Duration::zero())}}) {
      if (d.ns() > trace::kMaxLayerTimeNs) {
        throw InputError({source, std::nullopt, std::nullopt, field},
                         fmt::format("layer '{}' averages {} {} ns, more than a layer's time may "
                                     "be (2^42 ns, 73 minutes): the trace's times are not one "
                                     "clock's",
                                     row.name, field, d.ns()));
      }
      total_ns += d.ns();  // at most 3 x 2^42 a layer: no overflow before the check below
      if (total_ns > trace::kMaxProfileTimeNs) {
        throw InputError({source, std::nullopt, std::nullopt, field},
                         fmt::format("the layers' times add up to more than a profile's may "
                                     "(2^50 ns, 13 days) at layer '{}'",
                                     row.name));
      }
    }
  }
  if (!with_comm) {
    out.warnings.push_back(marked.empty()
                               ? "the trace has no collectives: gradient sizes are unknown, so no "
                                 "communication is simulated"
                               : "the trace has no collectives: communication is modelled from "
                                 "its ssgd/grad_bytes marks");
  }
  return out;
}

}  // namespace ssgd::walk
