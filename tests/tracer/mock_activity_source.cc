#include "tests/tracer/mock_activity_source.h"

#include <atomic>
#include <thread>

namespace ssgd::tracer::testing {

namespace v1 = trace::v1;

ActivityRecord synthetic_record(std::uint64_t id, std::int64_t base_ns, std::string& name) {
  const std::int64_t start = base_ns + 1000 * static_cast<std::int64_t>(id);
  const std::int64_t end = start + 500;
  ActivityRecord r;
  switch (static_cast<ActivityKind>(id % kActivityKindCount)) {
    case ActivityKind::kKernel: {
      KernelActivity k;
      k.device = 1;
      k.stream = 7;
      k.start_ns = start;
      k.end_ns = end;
      k.correlation_id = id;
      k.grid = {static_cast<std::int32_t>(id % 100), 2, 1};
      k.block = {256, 1, 1};
      r.payload = k;
      name = "void sgemm_kernel<float, 128>(int) #" + std::to_string(id);
      break;
    }
    case ActivityKind::kMemcpy: {
      MemcpyActivity c;
      const bool peer = (id / kActivityKindCount) % 2 == 0;  // every other memcpy
      c.kind = peer ? CopyKind::kPeerToPeer : CopyKind::kHostToDevice;
      c.size_bytes = 4096;
      c.src_device = peer ? 0 : -1;
      c.dst_device = 1;
      c.device = 1;
      c.stream = 3;
      c.start_ns = start;
      c.end_ns = end;
      c.correlation_id = id;
      r.payload = c;
      break;
    }
    case ActivityKind::kMemset: {
      MemsetActivity m;
      m.start_ns = start;
      m.end_ns = end;
      m.size_bytes = 64;
      m.value = 0;
      m.correlation_id = id;
      r.payload = m;
      break;
    }
    case ActivityKind::kApiCall: {
      ApiCallActivity a;
      a.api = ApiKind::kRuntime;
      a.thread_id = 42;
      a.start_ns = start;
      a.end_ns = end;
      a.correlation_id = id;
      r.payload = a;
      name = "cudaLaunchKernel";
      break;
    }
    case ActivityKind::kSynchronization: {
      SynchronizationActivity s;
      s.kind = SyncKind::kStreamSynchronize;
      s.stream = 7;
      s.start_ns = start;
      s.end_ns = end;
      s.correlation_id = id;
      r.payload = s;
      break;
    }
    case ActivityKind::kCudaEvent: {
      CudaEventActivity e;
      e.event_id = 5;
      e.stream = 7;
      e.timestamp_ns = start;
      e.correlation_id = id;
      r.payload = e;
      break;
    }
    case ActivityKind::kExternalCorrelation: {
      ExternalCorrelationActivity x;
      x.kind = ExternalKind::kCustom0;
      x.external_id = 1000 + id;
      x.correlation_id = id;
      r.payload = x;
      break;
    }
    case ActivityKind::kDevice: {
      DeviceActivity d;
      d.device = static_cast<std::int32_t>(id);
      d.uuid = {0x5e, 0x2f, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
      d.pci_domain = 0;
      d.pci_bus = 0x3b;
      d.sm_count = 80;
      d.memory_bytes = 17179869184;
      d.compute_capability_major = 7;
      r.payload = d;
      name = "Tesla V100-SXM2-16GB";
      break;
    }
    case ActivityKind::kCollective: {
      CollectiveActivity c;
      c.op = CollectiveOp::kAllReduce;
      c.communicator_id = 0xC0FFEE;
      c.rank = 1;
      c.nranks = 4;
      c.count = 1024;
      c.size_bytes = 4096;
      c.datatype = "float32";
      c.sequence_number = id;
      c.algorithm = "Ring";
      c.protocol = "LL128";
      c.channels = 2;
      c.start_ns = start;
      c.end_ns = end;
      c.correlation_id = id;
      r.payload = c;
      break;
    }
    case ActivityKind::kMarker: {
      MarkerActivity m;
      m.domain = "ssgd";
      m.thread_id = id;
      m.start_ns = start;
      m.end_ns = end;
      r.payload = m;
      name = "forward/conv1";
      break;
    }
    case ActivityKind::kLink: {
      LinkActivity l;
      l.kind = LinkKind::kNvLink;
      l.src_device = 0;
      l.dst_device = 1;
      l.bandwidth_bytes_per_s = static_cast<std::int64_t>(id);  // carries the id
      r.payload = l;
      break;
    }
  }
  r.name = name;
  return r;
}

std::uint64_t synthetic_id(const v1::Event& e) {
  switch (e.payload_case()) {
    case v1::Event::kKernel: return e.kernel().correlation_id();
    case v1::Event::kMemcpy: return e.memcpy().correlation_id();
    case v1::Event::kMemset: return e.memset().correlation_id();
    case v1::Event::kApiCall: return e.api_call().correlation_id();
    case v1::Event::kSynchronization: return e.synchronization().correlation_id();
    case v1::Event::kCudaEvent: return e.cuda_event().correlation_id();
    case v1::Event::kExternalCorrelation: return e.external_correlation().correlation_id();
    case v1::Event::kDevice: return static_cast<std::uint64_t>(e.device().device_id());
    case v1::Event::kCollective: return e.collective().correlation_id();
    case v1::Event::kMarker: return e.marker().thread_id();
    case v1::Event::kLink: return static_cast<std::uint64_t>(e.link().bandwidth_bytes_per_s());
    case v1::Event::kGraphNode:  // the tracer writes none
    case v1::Event::PAYLOAD_NOT_SET: break;
  }
  return UINT64_MAX;
}

MockRunResult run_mock_source(TraceSink& sink, int threads, std::uint64_t total,
                              std::int64_t base_ns) {
  std::atomic<std::uint64_t> stored{0};
  std::atomic<std::uint64_t> dropped{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      RecordProducer producer = sink.producer();
      std::string name;
      for (std::uint64_t id = static_cast<std::uint64_t>(t); id < total;
           id += static_cast<std::uint64_t>(threads)) {
        const ActivityRecord r = synthetic_record(id, base_ns, name);
        if (producer.append(r) == AppendStatus::kStored) {
          stored.fetch_add(1);
        } else {
          dropped.fetch_add(1);
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  return {stored.load(), dropped.load()};
}

}  // namespace ssgd::tracer::testing
