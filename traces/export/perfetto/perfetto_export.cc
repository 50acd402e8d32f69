#include "traces/export/perfetto/perfetto_export.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

#include "common/chrome_trace_writer.h"
#include "common/work_context.h"

namespace ssgd::trace {
namespace {

// Sort indexes: marker tracks, then API tracks, then per device its streams
// in stream order and its synchronization track.
constexpr std::int64_t kMarkerSort = 0;
constexpr std::int64_t kApiSort = 1;
constexpr std::int64_t kDeviceSortStep = 1'000'000;

std::int64_t stream_sort(std::int32_t device, std::uint32_t stream) {
  return (static_cast<std::int64_t>(device) + 1) * kDeviceSortStep +
         std::min<std::int64_t>(stream, kDeviceSortStep - 2);
}

// One end of a launch arrow, waiting for the other.
struct PendingEnd {
  bool is_launch = false;  // the ApiCall's end, else the GPU activity's
  std::int64_t tid = 0;
  std::int64_t at_ns = 0;
};

struct RankTracks {
  std::int64_t pid = 0;
  std::int64_t next_tid = 1;
  std::map<std::uint64_t, std::int64_t> markers, api;  // by host thread id
  std::map<std::pair<std::int32_t, std::uint32_t>, std::int64_t> streams;
  std::map<std::int32_t, std::int64_t> sync;
  std::map<std::int32_t, std::int64_t> graph;  // graph_node tracks, by kind
  std::unordered_map<std::uint64_t, PendingEnd> pending;  // by correlation id
};

// Host name of `rank`: the only host, or, when every host has the same
// number g of GPUs (a merged or simulated run, ranks placed host by host),
// hosts[rank / g]; empty when it cannot be told.
std::string host_of(const v1::CaptureMetadata& m, std::int32_t rank) {
  if (m.hosts_size() == 1) return m.hosts(0).hostname();
  if (m.hosts_size() == 0 || rank < 0) return "";
  const int g = m.hosts(0).gpus_size();
  for (const auto& h : m.hosts()) {
    if (h.gpus_size() != g) return "";
  }
  if (g == 0 || rank / g >= m.hosts_size()) return "";
  return m.hosts(rank / g).hostname();
}

std::string dims(std::int32_t x, std::int32_t y, std::int32_t z) {
  return fmt::format("[{},{},{}]", x, y, z);
}

class Exporter {
 public:
  Exporter(const v1::CaptureMetadata& metadata, ChromeTraceWriter& out)
      : metadata_(metadata), out_(out) {}

  void add(const v1::Event& ev) {
    RankTracks& rt = rank(ev.rank());
    switch (ev.payload_case()) {
      case v1::Event::kKernel: {
        const auto& k = ev.kernel();
        const auto tid = stream_track(rt, k.device(), k.stream());
        slice(k.name(), "kernel", rt, tid, k.start_ns(), k.end_ns(),
              fmt::format(R"("device":{},"stream":{},"correlation_id":{},"grid":{},"block":{})",
                          k.device(), k.stream(), k.correlation_id(),
                          dims(k.grid_x(), k.grid_y(), k.grid_z()),
                          dims(k.block_x(), k.block_y(), k.block_z())));
        activity(rt, k.correlation_id(), tid, k.start_ns());
        break;
      }
      case v1::Event::kMemcpy: {
        const auto& c = ev.memcpy();
        const auto tid = stream_track(rt, c.device(), c.stream());
        const std::string kind = v1::Memcpy::Kind_Name(c.kind());
        slice("Memcpy " + kind, "memcpy", rt, tid, c.start_ns(), c.end_ns(),
              fmt::format(R"("kind":"{}","size_bytes":{},"src_device":{},"dst_device":{},)"
                          R"("device":{},"stream":{},"correlation_id":{})",
                          kind, c.size_bytes(), c.src_device(), c.dst_device(), c.device(),
                          c.stream(), c.correlation_id()));
        activity(rt, c.correlation_id(), tid, c.start_ns());
        break;
      }
      case v1::Event::kMemset: {
        const auto& m = ev.memset();
        const auto tid = stream_track(rt, m.device(), m.stream());
        slice("Memset", "memset", rt, tid, m.start_ns(), m.end_ns(),
              fmt::format(R"("size_bytes":{},"value":{},"device":{},"stream":{},"correlation_id":{})",
                          m.size_bytes(), m.value(), m.device(), m.stream(), m.correlation_id()));
        activity(rt, m.correlation_id(), tid, m.start_ns());
        break;
      }
      case v1::Event::kCollective: {
        const auto& c = ev.collective();
        const auto tid = stream_track(rt, c.device(), c.stream());
        const std::string op = v1::Collective::Op_Name(c.op());
        // The communicator id is a 64-bit hash: a string, which JSON
        // readers do not round to a double.
        slice("nccl " + op, "collective", rt, tid, c.start_ns(), c.end_ns(),
              fmt::format(R"("op":"{}","size_bytes":{},"communicator_id":"{}","rank":{},)"
                          R"("nranks":{},"sequence_number":{},"datatype":"{}","count":{},)"
                          R"("algorithm":"{}","protocol":"{}","channels":{},"peer":{},)"
                          R"("device":{},"stream":{},"correlation_id":{})",
                          op, c.size_bytes(), c.communicator_id(), c.rank(), c.nranks(),
                          c.sequence_number(), json_escape(c.datatype()), c.count(),
                          json_escape(c.algorithm()), json_escape(c.protocol()), c.channels(),
                          c.peer(), c.device(), c.stream(), c.correlation_id()));
        activity(rt, c.correlation_id(), tid, c.start_ns());
        break;
      }
      case v1::Event::kMarker: {
        const auto& m = ev.marker();
        const auto tid = host_track(rt, rt.markers, m.thread_id(), "markers", kMarkerSort);
        slice(m.name(), "marker", rt, tid, m.start_ns(), m.end_ns(),
              fmt::format(R"("domain":"{}","thread_id":{})", json_escape(m.domain()), m.thread_id()));
        break;
      }
      case v1::Event::kApiCall: {
        const auto& a = ev.api_call();
        const auto tid = host_track(rt, rt.api, a.thread_id(), "CUDA API", kApiSort);
        slice(a.name(), "cuda_api", rt, tid, a.start_ns(), a.end_ns(),
              fmt::format(R"("api":"{}","thread_id":{},"correlation_id":{})",
                          v1::ApiCall::Api_Name(a.api()), a.thread_id(), a.correlation_id()));
        launch(rt, a.correlation_id(), tid, a.start_ns());
        break;
      }
      case v1::Event::kSynchronization: {
        const auto& s = ev.synchronization();
        auto [it, added] = rt.sync.emplace(s.device(), 0);
        if (added) {
          it->second = new_track(rt, fmt::format("GPU {} synchronization", s.device()),
                                 stream_sort(s.device(), kDeviceSortStep - 1));
        }
        const std::string kind = v1::Synchronization::Kind_Name(s.kind());
        slice(kind, "synchronization", rt, it->second, s.start_ns(), s.end_ns(),
              fmt::format(R"("kind":"{}","device":{},"stream":{},"cuda_event_id":{},"correlation_id":{})",
                          kind, s.device(), s.stream(), s.cuda_event_id(), s.correlation_id()));
        break;
      }
      case v1::Event::kCudaEvent: {
        const auto& e = ev.cuda_event();
        const auto tid = stream_track(rt, e.device(), e.stream());
        out_.instant("cudaEventRecord", "cuda_event", rt.pid, tid, e.timestamp_ns(),
                     fmt::format(R"("event_id":{},"correlation_id":{})", e.event_id(),
                                 e.correlation_id()));
        ++result.slices;
        break;
      }
      case v1::Event::kGraphNode: {
        // A node of an imported execution graph, at its recorded times, on a
        // track of its kind.
        const auto& g = ev.graph_node();
        const std::string kind = v1::GraphNode::Kind_Name(g.kind());
        auto [it, added] = rt.graph.emplace(g.kind(), 0);
        if (added) it->second = new_track(rt, "graph " + kind, kApiSort + 1 + g.kind());
        slice(g.name(), "graph_node", rt, it->second, g.start_ns(), g.end_ns(),
              fmt::format(R"("id":{},"kind":"{}","source_type":"{}","op":"{}","size_bytes":{},)"
                          R"("group":"{}","data_deps":{},"ctrl_deps":{})",
                          g.id(), kind, json_escape(g.source_type()),
                          v1::Collective::Op_Name(g.op()), g.size_bytes(), json_escape(g.group()),
                          g.data_deps_size(), g.ctrl_deps_size()));
        break;
      }
      default:
        ++result.skipped;
        break;
    }
  }

  void finish() {
    for (const auto& [r, rt] : ranks_) result.unmatched += rt.pending.size();
    result.ranks = static_cast<std::int64_t>(ranks_.size());
  }

  PerfettoExportResult result;

 private:
  RankTracks& rank(std::int32_t r) {
    auto [it, added] = ranks_.try_emplace(r);
    if (added) {
      it->second.pid = static_cast<std::int64_t>(r) + 1;
      const std::string host = host_of(metadata_, r);
      out_.process_name(it->second.pid,
                        host.empty() ? fmt::format("rank {}", r) : fmt::format("rank {} ({})", r, host));
      out_.process_sort_index(it->second.pid, r);
    }
    return it->second;
  }

  std::int64_t new_track(RankTracks& rt, const std::string& name, std::int64_t sort_index) {
    const std::int64_t tid = rt.next_tid++;
    out_.thread_name(rt.pid, tid, name);
    out_.thread_sort_index(rt.pid, tid, sort_index);
    return tid;
  }

  std::int64_t host_track(RankTracks& rt, std::map<std::uint64_t, std::int64_t>& tracks,
                          std::uint64_t thread, const char* what, std::int64_t sort_index) {
    auto [it, added] = tracks.emplace(thread, 0);
    if (added) it->second = new_track(rt, fmt::format("thread {} {}", thread, what), sort_index);
    return it->second;
  }

  std::int64_t stream_track(RankTracks& rt, std::int32_t device, std::uint32_t stream) {
    auto [it, added] = rt.streams.emplace(std::make_pair(device, stream), 0);
    if (added) {
      it->second = new_track(rt, fmt::format("GPU {} stream {}", device, stream),
                             stream_sort(device, stream));
    }
    return it->second;
  }

  void slice(const std::string& name, const char* category, const RankTracks& rt, std::int64_t tid,
             std::int64_t start_ns, std::int64_t end_ns, const std::string& args) {
    out_.slice(name, category, rt.pid, tid, start_ns, end_ns - start_ns, args);
    ++result.slices;
  }

  // The two ends of an arrow meet under their correlation id, in either order.
  void launch(RankTracks& rt, std::uint64_t correlation, std::int64_t tid, std::int64_t at_ns) {
    meet(rt, correlation, {true, tid, at_ns});
  }
  void activity(RankTracks& rt, std::uint64_t correlation, std::int64_t tid, std::int64_t at_ns) {
    meet(rt, correlation, {false, tid, at_ns});
  }
  void meet(RankTracks& rt, std::uint64_t correlation, const PendingEnd& end) {
    if (correlation == 0) return;
    auto it = rt.pending.find(correlation);
    if (it == rt.pending.end()) {
      rt.pending.emplace(correlation, end);
      result.peak_pending = std::max<std::uint64_t>(result.peak_pending, rt.pending.size());
      return;
    }
    if (it->second.is_launch == end.is_launch) return;  // a second activity: no arrow
    const PendingEnd& from = end.is_launch ? end : it->second;
    const PendingEnd& to = end.is_launch ? it->second : end;
    const std::uint64_t id = ++result.flows;
    out_.flow_start(id, "launch", "launch", rt.pid, from.tid, from.at_ns);
    out_.flow_end(id, "launch", "launch", rt.pid, to.tid, to.at_ns);
    rt.pending.erase(it);
  }

  const v1::CaptureMetadata& metadata_;
  ChromeTraceWriter& out_;
  std::map<std::int32_t, RankTracks> ranks_;
};

}  // namespace

PerfettoExportResult export_perfetto(TraceReader& reader, ChromeTraceWriter& out,
                                     const PerfettoExportOptions& options) {
  const WorkContext context("exporting as a Perfetto timeline");  // the reader's file
  Exporter exporter(reader.metadata(), out);
  v1::Event ev;
  while (reader.next(ev)) {
    exporter.add(ev);
    ++exporter.result.events_read;
  }
  if (reader.truncated() && !options.allow_truncated) {
    throw truncated_trace_error(reader, "; pass --allow-truncated to export the readable prefix");
  }
  exporter.finish();
  exporter.result.truncated = reader.truncated();
  return exporter.result;
}

}  // namespace ssgd::trace
