#include "tracer/core/event_conversion.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <type_traits>

namespace ssgd::tracer {

namespace v1 = trace::v1;

namespace {

v1::Memcpy::Kind to_proto(CopyKind k) {
  switch (k) {
    case CopyKind::kHostToDevice: return v1::Memcpy::HTOD;
    case CopyKind::kDeviceToHost: return v1::Memcpy::DTOH;
    case CopyKind::kDeviceToDevice: return v1::Memcpy::DTOD;
    case CopyKind::kHostToHost: return v1::Memcpy::HTOH;
    case CopyKind::kPeerToPeer: return v1::Memcpy::PTOP;
    case CopyKind::kUnknown: break;
  }
  return v1::Memcpy::UNKNOWN;
}

v1::ApiCall::Api to_proto(ApiKind k) {
  switch (k) {
    case ApiKind::kRuntime: return v1::ApiCall::RUNTIME;
    case ApiKind::kDriver: return v1::ApiCall::DRIVER;
    case ApiKind::kUnknown: break;
  }
  return v1::ApiCall::UNKNOWN;
}

v1::Synchronization::Kind to_proto(SyncKind k) {
  switch (k) {
    case SyncKind::kEventSynchronize: return v1::Synchronization::EVENT_SYNCHRONIZE;
    case SyncKind::kStreamWaitEvent: return v1::Synchronization::STREAM_WAIT_EVENT;
    case SyncKind::kStreamSynchronize: return v1::Synchronization::STREAM_SYNCHRONIZE;
    case SyncKind::kContextSynchronize: return v1::Synchronization::CONTEXT_SYNCHRONIZE;
    case SyncKind::kUnknown: break;
  }
  return v1::Synchronization::UNKNOWN;
}

v1::ExternalCorrelation::Kind to_proto(ExternalKind k) {
  switch (k) {
    case ExternalKind::kOpenAcc: return v1::ExternalCorrelation::OPENACC;
    case ExternalKind::kCustom0: return v1::ExternalCorrelation::CUSTOM0;
    case ExternalKind::kCustom1: return v1::ExternalCorrelation::CUSTOM1;
    case ExternalKind::kCustom2: return v1::ExternalCorrelation::CUSTOM2;
    case ExternalKind::kUnknown: break;
  }
  return v1::ExternalCorrelation::UNKNOWN;
}

v1::Collective::Op to_proto(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return v1::Collective::ALL_REDUCE;
    case CollectiveOp::kReduceScatter: return v1::Collective::REDUCE_SCATTER;
    case CollectiveOp::kAllGather: return v1::Collective::ALL_GATHER;
    case CollectiveOp::kBroadcast: return v1::Collective::BROADCAST;
    case CollectiveOp::kReduce: return v1::Collective::REDUCE;
    case CollectiveOp::kAllToAll: return v1::Collective::ALL_TO_ALL;
    case CollectiveOp::kSend: return v1::Collective::SEND;
    case CollectiveOp::kRecv: return v1::Collective::RECV;
    case CollectiveOp::kUnknown: break;
  }
  return v1::Collective::UNKNOWN;
}

void fill(const KernelActivity& a, std::string_view name, v1::Event& e) {
  auto* k = e.mutable_kernel();
  k->set_name(std::string(name));
  k->set_device(a.device);
  k->set_stream(a.stream);
  k->set_start_ns(a.start_ns);
  k->set_end_ns(a.end_ns);
  k->set_correlation_id(a.correlation_id);
  k->set_grid_x(a.grid[0]);
  k->set_grid_y(a.grid[1]);
  k->set_grid_z(a.grid[2]);
  k->set_block_x(a.block[0]);
  k->set_block_y(a.block[1]);
  k->set_block_z(a.block[2]);
}

void fill(const MemcpyActivity& a, std::string_view, v1::Event& e) {
  auto* c = e.mutable_memcpy();
  c->set_kind(to_proto(a.kind));
  c->set_size_bytes(a.size_bytes);
  c->set_src_device(a.src_device);
  c->set_dst_device(a.dst_device);
  c->set_device(a.device);
  c->set_stream(a.stream);
  c->set_start_ns(a.start_ns);
  c->set_end_ns(a.end_ns);
  c->set_correlation_id(a.correlation_id);
}

void fill(const MemsetActivity& a, std::string_view, v1::Event& e) {
  auto* s = e.mutable_memset();
  s->set_device(a.device);
  s->set_stream(a.stream);
  s->set_start_ns(a.start_ns);
  s->set_end_ns(a.end_ns);
  s->set_size_bytes(a.size_bytes);
  s->set_value(a.value);
  s->set_correlation_id(a.correlation_id);
}

void fill(const ApiCallActivity& a, std::string_view name, v1::Event& e) {
  auto* c = e.mutable_api_call();
  c->set_api(to_proto(a.api));
  c->set_name(std::string(name));
  c->set_thread_id(a.thread_id);
  c->set_start_ns(a.start_ns);
  c->set_end_ns(a.end_ns);
  c->set_correlation_id(a.correlation_id);
}

void fill(const SynchronizationActivity& a, std::string_view, v1::Event& e) {
  auto* s = e.mutable_synchronization();
  s->set_kind(to_proto(a.kind));
  s->set_device(a.device);
  s->set_stream(a.stream);
  s->set_start_ns(a.start_ns);
  s->set_end_ns(a.end_ns);
  s->set_correlation_id(a.correlation_id);
  s->set_cuda_event_id(a.cuda_event_id);
}

void fill(const CudaEventActivity& a, std::string_view, v1::Event& e) {
  auto* c = e.mutable_cuda_event();
  c->set_event_id(a.event_id);
  c->set_device(a.device);
  c->set_stream(a.stream);
  c->set_timestamp_ns(a.timestamp_ns);
  c->set_correlation_id(a.correlation_id);
}

void fill(const ExternalCorrelationActivity& a, std::string_view, v1::Event& e) {
  auto* c = e.mutable_external_correlation();
  c->set_kind(to_proto(a.kind));
  c->set_external_id(a.external_id);
  c->set_correlation_id(a.correlation_id);
}

void fill(const DeviceActivity& a, std::string_view name, v1::Event& e) {
  auto* g = e.mutable_device();
  g->set_device_id(a.device);
  g->set_name(std::string(name));
  g->set_uuid(format_gpu_uuid(a.uuid));
  g->set_pci_bus_id(format_pci_bus_id(a.pci_domain, a.pci_bus, a.pci_device));
  g->set_sm_count(a.sm_count);
  g->set_memory_bytes(a.memory_bytes);
  g->set_compute_capability_major(a.compute_capability_major);
  g->set_compute_capability_minor(a.compute_capability_minor);
}

void fill(const CollectiveActivity& a, std::string_view, v1::Event& e) {
  auto* c = e.mutable_collective();
  c->set_op(to_proto(a.op));
  c->set_size_bytes(a.size_bytes);
  c->set_communicator_id(a.communicator_id);
  c->set_rank(a.rank);
  c->set_nranks(a.nranks);
  c->set_sequence_number(a.sequence_number);
  c->set_start_ns(a.start_ns);
  c->set_end_ns(a.end_ns);
  c->set_device(a.device);
  c->set_stream(a.stream);
  c->set_datatype(std::string(a.datatype.view()));
  c->set_count(a.count);
  c->set_algorithm(std::string(a.algorithm.view()));
  c->set_protocol(std::string(a.protocol.view()));
  c->set_channels(a.channels);
  c->set_correlation_id(a.correlation_id);
  c->set_peer(a.peer);
}

v1::Link::Kind to_proto(LinkKind k) {
  switch (k) {
    case LinkKind::kPcie: return v1::Link::PCIE;
    case LinkKind::kNvLink: return v1::Link::NVLINK;
    case LinkKind::kNvSwitch: return v1::Link::NVSWITCH;
    case LinkKind::kUnknown: break;
  }
  return v1::Link::UNKNOWN;
}

// Both ends are on this rank's host: hosts[0] of a per-rank file.
void fill(const LinkActivity& a, std::string_view, v1::Event& e) {
  auto* l = e.mutable_link();
  l->set_src_host(0);
  l->set_src_device(a.src_device);
  l->set_dst_host(0);
  l->set_dst_device(a.dst_device);
  l->set_kind(to_proto(a.kind));
  l->set_bandwidth_bytes_per_s(static_cast<double>(a.bandwidth_bytes_per_s));
}

void fill(const MarkerActivity& a, std::string_view name, v1::Event& e) {
  auto* m = e.mutable_marker();
  m->set_name(std::string(name));
  m->set_domain(std::string(a.domain.view()));
  m->set_thread_id(a.thread_id);
  m->set_start_ns(a.start_ns);
  m->set_end_ns(a.end_ns);
}

}  // namespace

void to_event(const ActivityRecord& record, std::int32_t rank, v1::Event& event) {
  event.Clear();
  event.set_rank(rank);
  std::visit([&](const auto& a) { fill(a, record.name, event); }, record.payload);
}

CollectiveOp collective_op_from_proto(v1::Collective::Op op) {
  for (const CollectiveOp o :
       {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter, CollectiveOp::kAllGather,
        CollectiveOp::kBroadcast, CollectiveOp::kReduce, CollectiveOp::kAllToAll,
        CollectiveOp::kSend, CollectiveOp::kRecv}) {
    if (to_proto(o) == op) return o;
  }
  return CollectiveOp::kUnknown;
}

std::string format_gpu_uuid(const std::array<std::uint8_t, 16>& uuid) {
  if (std::all_of(uuid.begin(), uuid.end(), [](std::uint8_t b) { return b == 0; })) return "";
  std::string s = "GPU-";
  for (std::size_t i = 0; i < uuid.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += fmt::format("{:02x}", uuid[i]);
  }
  return s;
}

std::string format_pci_bus_id(std::int32_t domain, std::int32_t bus, std::int32_t device) {
  if (domain < 0) return "";
  return fmt::format("{:04x}:{:02x}:{:02x}.0", domain, bus, device);
}

}  // namespace ssgd::tracer
