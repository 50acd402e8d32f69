#include "simulator/report/simulated_trace.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/version.h"
#include "traces/marker_names.h"
#include "traces/trace_writer.h"

namespace ssgd::sim {
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
  m.set_tool("ssgd simulate");
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

}  // namespace

void write_simulated_trace(const ReplayResult& result, const SimulatedTraceOptions& options,
                           const std::filesystem::path& path) {
  if (!result.graph || !result.schedule) {
    throw std::invalid_argument("write_simulated_trace needs a replay made with keep_schedule");
  }
  const dag::TaskGraph& graph = *result.graph;
  const Schedule& schedule = *result.schedule;
  const std::int64_t workers = std::max<std::int64_t>(result.workers, 1);
  const std::int64_t built = std::max<std::int64_t>(result.ranks_simulated, 1);
  const std::int64_t written = options.max_ranks <= 0 ? workers : std::min(workers, options.max_ranks);
  const std::int64_t gpus_per_node = std::max<std::int64_t>(options.gpus_per_node, 1);
  const std::int64_t iterations = std::max<std::int64_t>(result.iterations, 1);
  const auto& layer_names = graph.layer_names();
  const auto layers = static_cast<std::int64_t>(layer_names.size());
  auto source_of = [&](std::int64_t rank) { return built < workers ? 0 : rank; };

  // Each source rank's tasks, then the collectives it takes part in (all),
  // in task-id order; the span of each of its iterations; its backward tasks.
  std::vector<std::vector<dag::TaskId>> lists(static_cast<std::size_t>(built));
  std::vector<std::pair<std::int64_t, std::int64_t>> spans(
      static_cast<std::size_t>(built * iterations),
      {std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()});
  std::vector<dag::TaskId> backward(static_cast<std::size_t>(built * iterations * layers), dag::kNoTask);
  std::vector<std::int64_t> compute_start(spans.size(), std::numeric_limits<std::int64_t>::max());
  std::vector<dag::TaskId> comms;
  for (dag::TaskId t = 0; t < graph.task_count(); ++t) {
    const dag::Task& task = graph.task(t);
    if (task.rank >= built) continue;
    const std::int64_t first = task.rank == dag::kAllRanks ? 0 : task.rank;
    const std::int64_t last = task.rank == dag::kAllRanks ? built : task.rank + 1;
    if (task.kind == dag::TaskKind::kComm) comms.push_back(t);
    for (std::int64_t src = first; src < last; ++src) {
      lists[static_cast<std::size_t>(src)].push_back(t);
      auto& span = spans[static_cast<std::size_t>(src * iterations + task.iteration)];
      span.first = std::min(span.first, schedule.start[t].ns());
      span.second = std::max(span.second, schedule.end[t].ns());
      if (task.kind != dag::TaskKind::kComm && task.kind != dag::TaskKind::kIo &&
          task.kind != dag::TaskKind::kH2d) {
        auto& c = compute_start[static_cast<std::size_t>(src * iterations + task.iteration)];
        c = std::min(c, schedule.start[t].ns());
      }
      if (task.kind == dag::TaskKind::kBackward && task.layer >= 0 && task.layer < layers) {
        backward[static_cast<std::size_t>((src * iterations + task.iteration) * layers + task.layer)] = t;
      }
    }
  }
  // An iteration's range ends, at the latest, where the next one's compute
  // starts: with per-group updates the next forward may start before the
  // last collective ends, and the ranges must not share work.
  for (std::int64_t src = 0; src < built; ++src) {
    for (std::int64_t i = 0; i + 1 < iterations; ++i) {
      auto& span = spans[static_cast<std::size_t>(src * iterations + i)];
      const std::int64_t next = compute_start[static_cast<std::size_t>(src * iterations + i + 1)];
      span.second = std::max(span.first, std::min(span.second, next));
    }
  }
  // Sequence numbers: the order in which the collectives started.
  std::stable_sort(comms.begin(), comms.end(), [&](dag::TaskId a, dag::TaskId b) {
    return schedule.start[a] < schedule.start[b];
  });
  std::vector<std::uint64_t> sequence(graph.task_count(), 0);
  for (std::size_t k = 0; k < comms.size(); ++k) sequence[comms[k]] = k;

  std::vector<Item> items;
  for (std::int64_t r = 0; r < written; ++r) {
    const std::int64_t src = source_of(r);
    for (std::int64_t i = 0; i < iterations; ++i) {
      const auto& span = spans[static_cast<std::size_t>(src * iterations + i)];
      if (span.first <= span.second) {
        items.push_back({span.first, static_cast<std::int32_t>(r), static_cast<std::int32_t>(i), -1});
      }
    }
    const auto& list = lists[static_cast<std::size_t>(src)];
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

  trace::TraceWriter writer(path, simulated_metadata(workers, written, gpus_per_node, options));
  std::vector<std::uint64_t> next_correlation(static_cast<std::size_t>(written), 1);
  v1::Event ev;
  auto marker = [&](std::int32_t rank, const std::string& name, std::uint64_t thread,
                    std::int64_t start, std::int64_t end) {
    ev.Clear();
    ev.set_rank(rank);
    auto* m = ev.mutable_marker();
    m->set_name(name);
    m->set_domain("ssgd-sim");
    m->set_thread_id(thread);
    m->set_start_ns(start);
    m->set_end_ns(end);
    writer.append(ev);
  };
  auto kernel = [&](std::int32_t rank, std::int32_t device, const std::string& name,
                    std::int64_t start, std::int64_t end) {
    ev.Clear();
    ev.set_rank(rank);
    auto* k = ev.mutable_kernel();
    k->set_name(name);
    k->set_device(device);
    k->set_stream(kComputeStream);
    k->set_start_ns(start);
    k->set_end_ns(end);
    writer.append(ev);
  };
  for (const Item& item : items) {
    const std::int64_t src = source_of(item.rank);
    const auto device = static_cast<std::int32_t>(item.rank % gpus_per_node);
    if (item.position < 0) {
      const auto& span = spans[static_cast<std::size_t>(src * iterations + item.iteration)];
      marker(item.rank, trace::iteration_mark(item.iteration), kMainThread, span.first,
             span.second);
      continue;
    }
    const dag::TaskId t = lists[static_cast<std::size_t>(src)][static_cast<std::size_t>(item.position)];
    const dag::Task& task = graph.task(t);
    const std::int64_t start = schedule.start[t].ns();
    const std::int64_t end = schedule.end[t].ns();
    const bool runs = end > start;
    const std::string layer =
        task.layer >= 0 && task.layer < layers ? layer_names[static_cast<std::size_t>(task.layer)] : "";
    switch (task.kind) {
      case dag::TaskKind::kIo:
        if (runs) marker(item.rank, "io", kLoaderThread, start, end);
        break;
      case dag::TaskKind::kH2d:
        if (runs) {
          ev.Clear();
          ev.set_rank(item.rank);
          auto* c = ev.mutable_memcpy();
          c->set_kind(v1::Memcpy::HTOD);
          c->set_src_device(-1);
          c->set_dst_device(device);
          c->set_device(device);
          c->set_stream(kCopyStream);
          c->set_start_ns(start);
          c->set_end_ns(end);
          writer.append(ev);
        }
        break;
      case dag::TaskKind::kForward:
      case dag::TaskKind::kBackward: {
        const bool fwd = task.kind == dag::TaskKind::kForward;
        marker(item.rank, fwd ? trace::forward_mark(layer) : trace::backward_mark(layer), kMainThread,
               start, end);
        if (runs) kernel(item.rank, device, layer + (fwd ? " forward" : " backward"), start, end);
        break;
      }
      case dag::TaskKind::kUpdate:
        if (runs) {
          marker(item.rank, "update", kMainThread, start, end);
          kernel(item.rank, device, "optimizer update", start, end);
        }
        break;
      case dag::TaskKind::kComm: {
        if (!runs) break;
        const std::uint64_t correlation = next_correlation[static_cast<std::size_t>(item.rank)]++;
        std::int64_t launch = start;
        if (task.layer >= 0 && task.layer < layers) {
          const dag::TaskId b =
              backward[static_cast<std::size_t>((src * iterations + task.iteration) * layers + task.layer)];
          if (b != dag::kNoTask) launch = std::min(launch, schedule.start[b].ns());
        }
        ev.Clear();
        ev.set_rank(item.rank);
        auto* api = ev.mutable_api_call();
        api->set_api(v1::ApiCall::RUNTIME);
        api->set_name("ncclAllReduce");
        api->set_thread_id(kMainThread);
        api->set_start_ns(launch);
        api->set_end_ns(launch);
        api->set_correlation_id(correlation);
        writer.append(ev);
        ev.Clear();
        ev.set_rank(item.rank);
        auto* c = ev.mutable_collective();
        c->set_op(v1::Collective::ALL_REDUCE);
        c->set_size_bytes(task.bytes);
        c->set_communicator_id(kCommunicatorId);
        c->set_rank(item.rank);
        c->set_nranks(static_cast<std::int32_t>(workers));
        c->set_sequence_number(sequence[t]);
        c->set_start_ns(start);
        c->set_end_ns(end);
        c->set_device(device);
        c->set_stream(kNetworkStream);
        c->set_datatype("float32");
        c->set_count(task.bytes / 4);
        c->set_correlation_id(correlation);
        writer.append(ev);
        break;
      }
    }
  }
  writer.close();
}

}  // namespace ssgd::sim
