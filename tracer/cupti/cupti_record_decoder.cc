#include "tracer/cupti/cupti_record_decoder.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace ssgd::tracer {

// CUPTI hands out kernel records in the newest layout it knows; a libcupti
// that still writes CUpti_ActivityKernel9 is read correctly as long as the
// fields read here sit where Kernel10 has them.
#define SSGD_SAME_OFFSET(field)                                                  \
  static_assert(offsetof(CUpti_ActivityKernel9, field) ==                        \
                    offsetof(CUpti_ActivityKernel10, field),                     \
                "CUpti_ActivityKernel9 and 10 disagree on the offset of " #field)
SSGD_SAME_OFFSET(start);
SSGD_SAME_OFFSET(end);
SSGD_SAME_OFFSET(deviceId);
SSGD_SAME_OFFSET(streamId);
SSGD_SAME_OFFSET(gridX);
SSGD_SAME_OFFSET(blockZ);
SSGD_SAME_OFFSET(correlationId);
SSGD_SAME_OFFSET(name);
#undef SSGD_SAME_OFFSET

namespace {

std::int64_t ns(std::uint64_t t) { return static_cast<std::int64_t>(t); }

// Arrays (CUDA arrays) are device memory: a copy to or from one is counted
// as a copy to or from the device.
CopyKind copy_kind(std::uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return CopyKind::kHostToDevice;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return CopyKind::kDeviceToHost;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return CopyKind::kDeviceToDevice;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return CopyKind::kHostToHost;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return CopyKind::kPeerToPeer;
    default: return CopyKind::kUnknown;
  }
}

SyncKind sync_kind(CUpti_ActivitySynchronizationType t) {
  switch (t) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return SyncKind::kEventSynchronize;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return SyncKind::kStreamWaitEvent;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return SyncKind::kStreamSynchronize;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
      return SyncKind::kContextSynchronize;
    default: return SyncKind::kUnknown;
  }
}

ExternalKind external_kind(CUpti_ExternalCorrelationKind k) {
  switch (k) {
    case CUPTI_EXTERNAL_CORRELATION_KIND_OPENACC: return ExternalKind::kOpenAcc;
    case CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0: return ExternalKind::kCustom0;
    case CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1: return ExternalKind::kCustom1;
    case CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2: return ExternalKind::kCustom2;
    default: return ExternalKind::kUnknown;
  }
}

std::array<std::uint8_t, 16> uuid_bytes(const CUuuid& u) {
  std::array<std::uint8_t, 16> out{};
  std::memcpy(out.data(), u.bytes, out.size());
  return out;
}

// CUPTI's "not applicable" (CUPTI_SYNCHRONIZATION_INVALID_VALUE) for stream
// and event ids of synchronization records becomes 0, the "none" of the
// trace format.
std::uint32_t valid_or_zero(std::uint32_t v) {
  return v == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? 0 : v;
}

}  // namespace

std::int64_t pcie_bandwidth_bytes_per_s(std::uint32_t generation, std::uint32_t lanes) {
  struct Gen {
    std::int64_t megatransfers_per_s;
    std::int64_t efficiency_num;
    std::int64_t efficiency_den;
  };
  constexpr Gen kGens[] = {{2500, 8, 10},    {5000, 8, 10},    {8000, 128, 130},
                           {16000, 128, 130}, {32000, 128, 130}, {64000, 242, 256}};
  if (generation < 1 || generation > std::size(kGens) || lanes == 0) return 0;
  const Gen& g = kGens[generation - 1];
  return std::int64_t{lanes} * g.megatransfers_per_s * 1'000'000 * g.efficiency_num /
         g.efficiency_den / 8;
}

bool CuptiRecordDecoder::take_link(ActivityRecord& out) noexcept {
  if (ready_links_.empty()) return false;
  out.payload = ready_links_.front();
  out.name = {};
  ready_links_.pop_front();
  return true;
}

bool CuptiRecordDecoder::resolve_nvlink(const TopologyLink& l) {
  // An end without a GPU uuid is an NVLink-attached CPU (CUPTI's NPU): the host.
  const auto end = [this](const std::array<std::uint8_t, 16>& uuid, std::int32_t& device) {
    if (std::all_of(uuid.begin(), uuid.end(), [](std::uint8_t b) { return b == 0; })) {
      device = -1;
      return true;
    }
    const auto it = uuid_devices_.find(uuid);
    if (it == uuid_devices_.end()) return false;
    device = it->second;
    return true;
  };
  LinkActivity a;
  std::int32_t d1 = -1;
  if (!end(l.uuid0, a.src_device) || !end(l.uuid1, d1)) return false;
  a.dst_device = d1;
  a.kind = l.nvswitch ? LinkKind::kNvSwitch : LinkKind::kNvLink;
  a.bandwidth_bytes_per_s = static_cast<std::int64_t>(l.bandwidth_bytes_per_s);
  ready_links_.push_back(a);
  std::swap(a.src_device, a.dst_device);
  ready_links_.push_back(a);
  return true;
}

std::string demangle_kernel_name(const char* mangled) {
  if (mangled == nullptr) return {};
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), &std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(mangled);
}

CuptiRecordDecoder::CuptiRecordDecoder(ApiNameLookup api_names)
    : api_names_(std::move(api_names)) {}

DecodeStatus CuptiRecordDecoder::decode(const CUpti_Activity& in, DecodeOutput& out) noexcept {
  DecodeStatus status = DecodeStatus::kUnknownKind;
  try {
    status = decode_kind(in, out);
  } catch (...) {
    // Only an allocation (a name, a held marker) can throw; the record is
    // lost and counted like a marker the decoder could not hold.
    ++counters_.dropped_markers;
    return DecodeStatus::kHeld;
  }
  switch (status) {
    case DecodeStatus::kRecord: ++counters_.decoded; break;
    case DecodeStatus::kLink: ++counters_.links; break;
    case DecodeStatus::kUnknownKind:
      ++counters_.unknown_kinds;
      counters_.last_unknown_kind = static_cast<std::uint32_t>(in.kind);
      break;
    case DecodeStatus::kUnmatched: ++counters_.unmatched_markers; break;
    case DecodeStatus::kHeld: break;
  }
  return status;
}

std::int32_t CuptiRecordDecoder::device_of_context(std::uint32_t context_id) const {
  const auto it = context_devices_.find(context_id);
  return it == context_devices_.end() ? -1 : it->second;
}

DecodeStatus CuptiRecordDecoder::decode_kind(const CUpti_Activity& in, DecodeOutput& out) {
  out.record.name = {};
  switch (in.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto& r = reinterpret_cast<const CUpti_ActivityKernel10&>(in);
      KernelActivity a;
      a.device = static_cast<std::int32_t>(r.deviceId);
      a.stream = r.streamId;
      a.start_ns = ns(r.start);
      a.end_ns = ns(r.end);
      a.correlation_id = r.correlationId;
      a.grid = {r.gridX, r.gridY, r.gridZ};
      a.block = {r.blockX, r.blockY, r.blockZ};
      out.record.payload = a;
      name_ = demangle_kernel_name(r.name);
      out.record.name = name_;
      return DecodeStatus::kRecord;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto& r = reinterpret_cast<const CUpti_ActivityMemcpy6&>(in);
      MemcpyActivity a;
      a.kind = copy_kind(r.copyKind);
      a.size_bytes = static_cast<std::int64_t>(r.bytes);
      a.device = static_cast<std::int32_t>(r.deviceId);
      // The host is -1; a copy within one device has it at both ends.
      const bool from_device =
          a.kind == CopyKind::kDeviceToHost || a.kind == CopyKind::kDeviceToDevice;
      const bool to_device =
          a.kind == CopyKind::kHostToDevice || a.kind == CopyKind::kDeviceToDevice;
      a.src_device = from_device ? a.device : -1;
      a.dst_device = to_device ? a.device : -1;
      a.stream = r.streamId;
      a.start_ns = ns(r.start);
      a.end_ns = ns(r.end);
      a.correlation_id = r.correlationId;
      out.record.payload = a;
      return DecodeStatus::kRecord;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto& r = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4&>(in);
      MemcpyActivity a;
      a.kind = copy_kind(r.copyKind);
      a.size_bytes = static_cast<std::int64_t>(r.bytes);
      a.src_device = static_cast<std::int32_t>(r.srcDeviceId);
      a.dst_device = static_cast<std::int32_t>(r.dstDeviceId);
      a.device = static_cast<std::int32_t>(r.deviceId);
      a.stream = r.streamId;
      a.start_ns = ns(r.start);
      a.end_ns = ns(r.end);
      a.correlation_id = r.correlationId;
      out.record.payload = a;
      return DecodeStatus::kRecord;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto& r = reinterpret_cast<const CUpti_ActivityMemset4&>(in);
      MemsetActivity a;
      a.device = static_cast<std::int32_t>(r.deviceId);
      a.stream = r.streamId;
      a.start_ns = ns(r.start);
      a.end_ns = ns(r.end);
      a.size_bytes = static_cast<std::int64_t>(r.bytes);
      a.value = r.value;
      a.correlation_id = r.correlationId;
      out.record.payload = a;
      return DecodeStatus::kRecord;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto& r = reinterpret_cast<const CUpti_ActivityAPI&>(in);
      ApiCallActivity a;
      a.api = in.kind == CUPTI_ACTIVITY_KIND_RUNTIME ? ApiKind::kRuntime : ApiKind::kDriver;
      a.thread_id = r.threadId;
      a.start_ns = ns(r.start);
      a.end_ns = ns(r.end);
      a.correlation_id = r.correlationId;
      out.record.payload = a;
      const char* name = api_names_ ? api_names_(a.api, r.cbid) : nullptr;
      if (name != nullptr) out.record.name = name;
      return DecodeStatus::kRecord;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto& r = reinterpret_cast<const CUpti_ActivitySynchronization2&>(in);
      SynchronizationActivity a;
      a.kind = sync_kind(r.type);
      a.device = device_of_context(r.contextId);
      a.stream = valid_or_zero(r.streamId);
      a.start_ns = ns(r.start);
      a.end_ns = ns(r.end);
      a.correlation_id = r.correlationId;
      a.cuda_event_id = valid_or_zero(r.cudaEventId);
      out.record.payload = a;
      return DecodeStatus::kRecord;
    }
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
      const auto& r = reinterpret_cast<const CUpti_ActivityCudaEvent2&>(in);
      CudaEventActivity a;
      a.event_id = r.eventId;
      a.device = static_cast<std::int32_t>(r.deviceId);
      a.stream = r.streamId;
      a.timestamp_ns = ns(r.deviceTimestamp);
      a.correlation_id = r.correlationId;
      out.record.payload = a;
      return DecodeStatus::kRecord;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto& r = reinterpret_cast<const CUpti_ActivityExternalCorrelation&>(in);
      ExternalCorrelationActivity a;
      a.kind = external_kind(r.externalKind);
      a.external_id = r.externalId;
      a.correlation_id = r.correlationId;
      out.record.payload = a;
      return DecodeStatus::kRecord;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      const auto& r = reinterpret_cast<const CUpti_ActivityDevice5&>(in);
      DeviceActivity a;
      a.device = static_cast<std::int32_t>(r.id);
      a.uuid = uuid_bytes(r.uuid);
      a.pci_domain = -1;  // CUpti_ActivityDevice5 has no PCI address
      a.sm_count = static_cast<std::int32_t>(r.numMultiprocessors);
      a.memory_bytes = static_cast<std::int64_t>(r.globalMemorySize);
      a.compute_capability_major = static_cast<std::int32_t>(r.computeCapabilityMajor);
      a.compute_capability_minor = static_cast<std::int32_t>(r.computeCapabilityMinor);
      out.record.payload = a;
      if (r.name != nullptr) out.record.name = r.name;
      uuid_devices_[a.uuid] = a.device;
      // NVLinks that waited for this GPU's ordinal.
      std::erase_if(pending_links_, [this](const TopologyLink& l) { return resolve_nvlink(l); });
      return DecodeStatus::kRecord;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
      const auto& r = reinterpret_cast<const CUpti_ActivityContext3&>(in);
      context_devices_[r.contextId] = static_cast<std::int32_t>(r.deviceId);
      return DecodeStatus::kHeld;
    }
    case CUPTI_ACTIVITY_KIND_NVLINK: {
      const auto& r = reinterpret_cast<const CUpti_ActivityNvLink4&>(in);
      TopologyLink l;
      l.kind = TopologyLink::Kind::kNvLink;
      if (r.typeDev0 == CUPTI_DEV_TYPE_GPU) l.uuid0 = uuid_bytes(r.idDev0.uuidDev);
      if (r.typeDev1 == CUPTI_DEV_TYPE_GPU) l.uuid1 = uuid_bytes(r.idDev1.uuidDev);
      l.nvswitch = r.nvswitchConnected != 0;
      l.nvlink_version = r.nvlinkVersion;
      l.physical_links = r.physicalNvLinkCount;
      // CUPTI documents the bandwidth in "kbytes/sec"; taken as 10^3 bytes.
      l.bandwidth_bytes_per_s = r.bandwidth * 1000ULL;
      out.link = l;
      if (!resolve_nvlink(l)) {
        if (pending_links_.size() < kMaxPendingLinks) {
          pending_links_.push_back(l);
        } else {
          ++counters_.unmapped_links;
        }
      }
      return DecodeStatus::kLink;
    }
    case CUPTI_ACTIVITY_KIND_PCIE: {
      const auto& r = reinterpret_cast<const CUpti_ActivityPcie&>(in);
      TopologyLink l;
      const bool gpu = r.type == CUPTI_PCIE_DEVICE_TYPE_GPU;
      l.kind = gpu ? TopologyLink::Kind::kPcieGpu : TopologyLink::Kind::kPcieBridge;
      l.id = gpu ? static_cast<std::uint32_t>(r.id.devId) : r.id.bridgeId;
      if (gpu) l.uuid0 = uuid_bytes(r.attr.gpuAttr.uuidDev);
      l.pci_domain = r.domain;
      l.upstream_bus = r.upstreamBus;
      l.pcie_generation = r.pcieGeneration;
      l.link_width = r.linkWidth;
      out.link = l;
      if (gpu) {
        // The record names the GPU by its CUdevice: already the ordinal.
        LinkActivity a;
        a.kind = LinkKind::kPcie;
        a.src_device = static_cast<std::int32_t>(l.id);
        a.dst_device = -1;
        a.bandwidth_bytes_per_s = pcie_bandwidth_bytes_per_s(l.pcie_generation, l.link_width);
        ready_links_.push_back(a);
        std::swap(a.src_device, a.dst_device);
        ready_links_.push_back(a);
      } else {
        ++counters_.pcie_bridges;  // the trace's Link joins devices, not bridges
      }
      return DecodeStatus::kLink;
    }
    case CUPTI_ACTIVITY_KIND_MARKER:
      return decode_marker(reinterpret_cast<const CUpti_ActivityMarker2&>(in), out);
    default:
      return DecodeStatus::kUnknownKind;
  }
}

DecodeStatus CuptiRecordDecoder::decode_marker(const CUpti_ActivityMarker2& r, DecodeOutput& out) {
  const std::uint64_t thread_id =
      r.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? r.objectId.pt.threadId : 0;
  const bool instant = (r.flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) != 0;
  if ((r.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) != 0 && !instant) {
    if (open_markers_.size() >= kMaxOpenMarkers) {
      ++counters_.dropped_markers;
      return DecodeStatus::kHeld;
    }
    OpenMarker m;
    m.start_ns = ns(r.timestamp);
    m.thread_id = thread_id;
    if (r.name != nullptr) m.name = r.name;
    if (r.domain != nullptr) m.domain = r.domain;
    open_markers_[r.id] = std::move(m);
    return DecodeStatus::kHeld;
  }
  MarkerActivity a;
  if (instant) {
    a.thread_id = thread_id;
    a.start_ns = a.end_ns = ns(r.timestamp);
    if (r.domain != nullptr) a.domain = r.domain;
    name_ = r.name != nullptr ? r.name : "";
  } else {
    if ((r.flags & CUPTI_ACTIVITY_FLAG_MARKER_END) == 0) return DecodeStatus::kUnmatched;
    const auto it = open_markers_.find(r.id);
    if (it == open_markers_.end()) return DecodeStatus::kUnmatched;
    a.thread_id = it->second.thread_id;
    a.start_ns = it->second.start_ns;
    a.end_ns = ns(r.timestamp);
    a.domain.assign(it->second.domain);
    name_ = std::move(it->second.name);
    open_markers_.erase(it);
  }
  out.record.payload = a;
  out.record.name = name_;
  return DecodeStatus::kRecord;
}

}  // namespace ssgd::tracer
