#include "presentation/report/simulated_trace.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/version.h"
#include "traces/marker_names.h"
#include "traces/trace_writer.h"

namespace ssgd::report {
namespace {

namespace v1 = trace::v1;

// One event-producing item of one written rank: an iteration marker
// (position -1) or the task at `position` in its source rank's list.
struct Item {
  std::int64_t start_ns;
  std::int32_t rank;
  std::int32_t iteration;
  std::int64_t position;
};

v1::CaptureMetadata simulated_metadata(std::int64_t workers, std::int64_t written,
                                       std::int64_t gpus_per_node,
                                       const SimulatedTraceOptions& options) {
  v1::CaptureMetadata m;
  m.set_tool(std::string(trace::kSimulatedTraceTool));
  m.set_tool_version(std::string(ssgd_version()));
  m.set_rank(0);
  m.set_world_size(static_cast<std::int32_t>(workers));
  m.set_framework(options.framework);
  m.set_provenance(options.provenance);
  const std::int64_t nodes = (written + gpus_per_node - 1) / gpus_per_node;
  for (std::int64_t n = 0; n < nodes; ++n) {
    auto* host = m.add_hosts();
    host->set_hostname("sim-node" + std::to_string(n));
    host->mutable_clock()->set_kind(v1::ClockDomain::SIMULATED);
    for (std::int64_t d = 0; d < gpus_per_node; ++d) {
      auto* gpu = host->add_gpus();
      gpu->set_device_id(static_cast<std::int32_t>(d));
      gpu->set_name("simulated GPU");
    }
  }
  return m;
}

// What the schedule says of each source rank (one standing for all when
// folded): its tasks, then the collectives it takes part in, in task-id
// order; the span of each of its iterations; its backward task per layer;
// and every collective's sequence number, in the order they started.
struct RankTasks {
  bool folded = false;  // one source rank stands for every written rank
  std::int64_t built = 1;
  std::int64_t iterations = 1;
  std::int64_t layers = 0;
  std::vector<std::vector<dag::TaskId>> lists;
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;  // [src * iterations + i]
  std::vector<dag::TaskId> backward;    // [(src * iterations + i) * layers + layer]
  std::vector<std::uint64_t> sequence;  // by task id

  [[nodiscard]] std::int64_t source_of(std::int64_t rank) const { return folded ? 0 : rank; }
  [[nodiscard]] const std::pair<std::int64_t, std::int64_t>& span(std::int64_t src,
                                                                  std::int64_t i) const {
    return spans[static_cast<std::size_t>(src * iterations + i)];
  }
  [[nodiscard]] dag::TaskId backward_of(std::int64_t src, std::int64_t i,
                                        std::int64_t layer) const {
    return backward[static_cast<std::size_t>((src * iterations + i) * layers + layer)];
  }
};

RankTasks rank_tasks(const dag::TaskGraph& graph, const sim::Schedule& schedule, std::int64_t built,
                     std::int64_t workers, std::int64_t iterations) {
  RankTasks r;
  r.folded = built < workers;
  r.built = built;
  r.iterations = iterations;
  r.layers = static_cast<std::int64_t>(graph.layer_names().size());
  r.lists.resize(static_cast<std::size_t>(built));
  r.spans.assign(
      static_cast<std::size_t>(built * iterations),
      {std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()});
  r.backward.assign(static_cast<std::size_t>(built * iterations * r.layers), dag::kNoTask);
  std::vector<std::int64_t> compute_start(r.spans.size(), std::numeric_limits<std::int64_t>::max());
  std::vector<dag::TaskId> comms;
  for (dag::TaskId t = 0; t < graph.task_count(); ++t) {
    const dag::Task& task = graph.task(t);
    if (task.rank >= built) continue;
    const std::int64_t first = task.rank == dag::kAllRanks ? 0 : task.rank;
    const std::int64_t last = task.rank == dag::kAllRanks ? built : task.rank + 1;
    if (task.kind == dag::TaskKind::kComm) comms.push_back(t);
    for (std::int64_t src = first; src < last; ++src) {
      r.lists[static_cast<std::size_t>(src)].push_back(t);
      const auto at = static_cast<std::size_t>(src * iterations + task.iteration);
      auto& span = r.spans[at];
      span.first = std::min(span.first, schedule.start[t].ns());
      span.second = std::max(span.second, schedule.end[t].ns());
      if (task.kind != dag::TaskKind::kComm && task.kind != dag::TaskKind::kIo &&
          task.kind != dag::TaskKind::kH2d) {
        compute_start[at] = std::min(compute_start[at], schedule.start[t].ns());
      }
      if (task.kind == dag::TaskKind::kBackward && task.layer >= 0 && task.layer < r.layers) {
        r.backward[at * static_cast<std::size_t>(r.layers) + static_cast<std::size_t>(task.layer)] =
            t;
      }
    }
  }
  // An iteration's range ends, at the latest, where the next one's compute
  // starts: with per-group updates the next forward may start before the
  // last collective ends, and the ranges must not share work.
  for (std::int64_t src = 0; src < built; ++src) {
    for (std::int64_t i = 0; i + 1 < iterations; ++i) {
      auto& span = r.spans[static_cast<std::size_t>(src * iterations + i)];
      const std::int64_t next = compute_start[static_cast<std::size_t>(src * iterations + i + 1)];
      span.second = std::max(span.first, std::min(span.second, next));
    }
  }
  // Sequence numbers: the order in which the collectives started.
  std::stable_sort(comms.begin(), comms.end(), [&](dag::TaskId a, dag::TaskId b) {
    return schedule.start[a] < schedule.start[b];
  });
  r.sequence.assign(graph.task_count(), 0);
  for (std::size_t k = 0; k < comms.size(); ++k) r.sequence[comms[k]] = k;
  return r;
}

// Every written rank's iteration markers and tasks, in start order (then rank,
// then position).
std::vector<Item> ordered_items(const dag::TaskGraph& graph, const sim::Schedule& schedule,
                                const RankTasks& tasks, std::int64_t written) {
  std::vector<Item> items;
  for (std::int64_t r = 0; r < written; ++r) {
    const std::int64_t src = tasks.source_of(r);
    for (std::int64_t i = 0; i < tasks.iterations; ++i) {
      const auto& span = tasks.span(src, i);
      if (span.first <= span.second) {
        items.push_back(
            {span.first, static_cast<std::int32_t>(r), static_cast<std::int32_t>(i), -1});
      }
    }
    const auto& list = tasks.lists[static_cast<std::size_t>(src)];
    for (std::size_t k = 0; k < list.size(); ++k) {
      items.push_back({schedule.start[list[k]].ns(), static_cast<std::int32_t>(r),
                       graph.task(list[k]).iteration, static_cast<std::int64_t>(k)});
    }
  }
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.position < b.position;
  });
  return items;
}

// Writes one rank's events of one task, as a tracer would have recorded them.
class EventWriter {
 public:
  EventWriter(trace::TraceWriter& writer, std::int64_t written, std::int64_t workers)
      : writer_(writer),
        next_correlation_(static_cast<std::size_t>(written), 1),
        workers_(workers) {}

  void marker(std::int32_t rank, const std::string& name, std::uint64_t thread, std::int64_t start,
              std::int64_t end) {
    ev_.Clear();
    ev_.set_rank(rank);
    auto* m = ev_.mutable_marker();
    m->set_name(name);
    m->set_domain("ssgd-sim");
    m->set_thread_id(thread);
    m->set_start_ns(start);
    m->set_end_ns(end);
    writer_.append(ev_);
  }

  void kernel(std::int32_t rank, std::int32_t device, const std::string& name, std::int64_t start,
              std::int64_t end) {
    ev_.Clear();
    ev_.set_rank(rank);
    auto* k = ev_.mutable_kernel();
    k->set_name(name);
    k->set_device(device);
    k->set_stream(kComputeStream);
    k->set_start_ns(start);
    k->set_end_ns(end);
    writer_.append(ev_);
  }

  void host_to_device(std::int32_t rank, std::int32_t device, std::int64_t start,
                      std::int64_t end) {
    ev_.Clear();
    ev_.set_rank(rank);
    auto* c = ev_.mutable_memcpy();
    c->set_kind(v1::Memcpy::HTOD);
    c->set_src_device(-1);
    c->set_dst_device(device);
    c->set_device(device);
    c->set_stream(kCopyStream);
    c->set_start_ns(start);
    c->set_end_ns(end);
    writer_.append(ev_);
  }

  // The launch call (at `launch`) and the all-reduce it started, correlated.
  void all_reduce(std::int32_t rank, std::int32_t device, std::int64_t bytes,
                  std::uint64_t sequence, std::int64_t launch, std::int64_t start,
                  std::int64_t end) {
    const std::uint64_t correlation = next_correlation_[static_cast<std::size_t>(rank)]++;
    ev_.Clear();
    ev_.set_rank(rank);
    auto* api = ev_.mutable_api_call();
    api->set_api(v1::ApiCall::RUNTIME);
    api->set_name("ncclAllReduce");
    api->set_thread_id(kMainThread);
    api->set_start_ns(launch);
    api->set_end_ns(launch);
    api->set_correlation_id(correlation);
    writer_.append(ev_);
    ev_.Clear();
    ev_.set_rank(rank);
    auto* c = ev_.mutable_collective();
    c->set_op(v1::Collective::ALL_REDUCE);
    c->set_size_bytes(bytes);
    c->set_communicator_id(kCommunicatorId);
    c->set_rank(rank);
    c->set_nranks(static_cast<std::int32_t>(workers_));
    c->set_sequence_number(sequence);
    c->set_start_ns(start);
    c->set_end_ns(end);
    c->set_device(device);
    c->set_stream(kNetworkStream);
    c->set_datatype("float32");
    c->set_count(bytes / 4);
    c->set_correlation_id(correlation);
    writer_.append(ev_);
  }

 private:
  trace::TraceWriter& writer_;
  std::vector<std::uint64_t> next_correlation_;
  std::int64_t workers_;
  v1::Event ev_;
};

}  // namespace

void write_simulated_trace(const sim::ReplayResult& result, const SimulatedTraceOptions& options,
                           const std::filesystem::path& path) {
  if (!result.task_graph || !result.schedule) {
    throw std::invalid_argument("write_simulated_trace needs a replay made with keep_schedule");
  }
  const dag::TaskGraph& graph = *result.task_graph;
  const sim::Schedule& schedule = *result.schedule;
  const std::int64_t workers = std::max<std::int64_t>(result.workers, 1);
  const std::int64_t built = std::max<std::int64_t>(result.ranks_simulated, 1);
  const std::int64_t written =
      options.max_ranks <= 0 ? workers : std::min(workers, options.max_ranks);
  const std::int64_t gpus_per_node = std::max<std::int64_t>(options.gpus_per_node, 1);
  const std::int64_t iterations = std::max<std::int64_t>(result.iterations, 1);
  const auto& layer_names = graph.layer_names();
  const auto layers = static_cast<std::int64_t>(layer_names.size());
  const RankTasks tasks = rank_tasks(graph, schedule, built, workers, iterations);
  const std::vector<Item> items = ordered_items(graph, schedule, tasks, written);

  trace::TraceWriter writer(path, simulated_metadata(workers, written, gpus_per_node, options));
  EventWriter out(writer, written, workers);
  for (const Item& item : items) {
    const std::int64_t src = tasks.source_of(item.rank);
    const auto device = static_cast<std::int32_t>(item.rank % gpus_per_node);
    if (item.position < 0) {
      const auto& span = tasks.span(src, item.iteration);
      out.marker(item.rank, trace::iteration_mark(item.iteration), kMainThread, span.first,
                 span.second);
      continue;
    }
    const dag::TaskId t =
        tasks.lists[static_cast<std::size_t>(src)][static_cast<std::size_t>(item.position)];
    const dag::Task& task = graph.task(t);
    const std::int64_t start = schedule.start[t].ns();
    const std::int64_t end = schedule.end[t].ns();
    const bool runs = end > start;
    const bool has_layer = task.layer >= 0 && task.layer < layers;
    const std::string layer = has_layer ? layer_names[static_cast<std::size_t>(task.layer)] : "";
    switch (task.kind) {
      case dag::TaskKind::kIo:
        if (runs) out.marker(item.rank, "io", kLoaderThread, start, end);
        break;
      case dag::TaskKind::kH2d:
        if (runs) out.host_to_device(item.rank, device, start, end);
        break;
      case dag::TaskKind::kForward:
      case dag::TaskKind::kBackward: {
        const bool fwd = task.kind == dag::TaskKind::kForward;
        out.marker(item.rank, fwd ? trace::forward_mark(layer) : trace::backward_mark(layer),
                   kMainThread, start, end);
        if (runs)
          out.kernel(item.rank, device, layer + (fwd ? " forward" : " backward"), start, end);
        break;
      }
      case dag::TaskKind::kUpdate:
        if (runs) {
          out.marker(item.rank, "update", kMainThread, start, end);
          out.kernel(item.rank, device, "optimizer update", start, end);
        }
        break;
      case dag::TaskKind::kComm: {
        if (!runs) break;
        // Launched when its gradients' layer started its backward, as DDP does.
        std::int64_t launch = start;
        if (has_layer) {
          const dag::TaskId b = tasks.backward_of(src, task.iteration, task.layer);
          if (b != dag::kNoTask) launch = std::min(launch, schedule.start[b].ns());
        }
        out.all_reduce(item.rank, device, task.bytes, tasks.sequence[t], launch, start, end);
        break;
      }
    }
  }
  writer.close();
}

}  // namespace ssgd::report
