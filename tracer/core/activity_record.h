#pragma once
// The tracer's neutral activity records: what the CUPTI activity source, the
// CUPTI callbacks and the NCCL profiler plugin report, once decoded from
// their versioned C structs (the decoding lives in tracer/cupti and
// tracer/nccl, one file each), and before they become ssgd.trace.v1 events
// (tracer/core/event_conversion.h). Records are plain values: no pointers
// but the one name view, nothing to free, so a producer fills one on its
// stack in a C callback and a RecordBufferPool copies it into a fixed buffer.
//
// Times are int64 nanoseconds on the host's event clock (ClockDomain.kind in
// the trace header). A device is a CUDA device ordinal, -1 for the host.

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>
#include <variant>

namespace ssgd::tracer {

// A short string stored inline, cut at N - 1 bytes (NCCL datatype and
// algorithm names, NVTX domains): no allocation, and a record stays a value.
template <std::size_t N>
class ShortText {
 public:
  ShortText() = default;
  // Implicit on purpose, so that `c.datatype = "float32";` reads naturally.
  ShortText(std::string_view s) { assign(s); }  // NOLINT(google-explicit-constructor)
  ShortText(const char* s) { assign(s); }       // NOLINT(google-explicit-constructor)
  void assign(std::string_view s) {
    size_ = static_cast<std::uint8_t>(std::min(s.size(), N - 1));
    std::copy_n(s.data(), size_, data_.data());
  }
  [[nodiscard]] std::string_view view() const { return {data_.data(), size_}; }

 private:
  static_assert(N <= 256);
  std::array<char, N> data_{};
  std::uint8_t size_ = 0;
};

// One GPU kernel execution. Name: the kernel's (demangled) name.
struct KernelActivity {
  std::int32_t device = 0;
  std::uint32_t stream = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t correlation_id = 0;
  std::array<std::int32_t, 3> grid{};
  std::array<std::int32_t, 3> block{};
};

enum class CopyKind : std::uint8_t { kUnknown, kHostToDevice, kDeviceToHost, kDeviceToDevice,
                                     kHostToHost, kPeerToPeer };

// One copy on a copy engine. For kPeerToPeer, src_device and dst_device are
// the two GPUs; `device` is the one whose engine did the copy.
struct MemcpyActivity {
  CopyKind kind = CopyKind::kUnknown;
  std::int64_t size_bytes = 0;
  std::int32_t src_device = -1;
  std::int32_t dst_device = -1;
  std::int32_t device = 0;
  std::uint32_t stream = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t correlation_id = 0;
};

struct MemsetActivity {
  std::int32_t device = 0;
  std::uint32_t stream = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t size_bytes = 0;
  std::uint32_t value = 0;
  std::uint64_t correlation_id = 0;
};

enum class ApiKind : std::uint8_t { kUnknown, kRuntime, kDriver };

// One CUDA runtime or driver call. Name: the function, e.g. "cudaLaunchKernel".
struct ApiCallActivity {
  ApiKind api = ApiKind::kUnknown;
  std::uint64_t thread_id = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t correlation_id = 0;
};

enum class SyncKind : std::uint8_t { kUnknown, kEventSynchronize, kStreamWaitEvent,
                                     kStreamSynchronize, kContextSynchronize };

struct SynchronizationActivity {
  SyncKind kind = SyncKind::kUnknown;
  std::int32_t device = 0;
  std::uint32_t stream = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t correlation_id = 0;
  std::uint32_t cuda_event_id = 0;
};

// cudaEventRecord as the GPU reached it.
struct CudaEventActivity {
  std::uint32_t event_id = 0;
  std::int32_t device = 0;
  std::uint32_t stream = 0;
  std::int64_t timestamp_ns = 0;
  std::uint64_t correlation_id = 0;
};

enum class ExternalKind : std::uint8_t { kUnknown, kOpenAcc, kCustom0, kCustom1, kCustom2 };

// Ties a CUPTI correlation id to an outer layer's id. Has no time.
struct ExternalCorrelationActivity {
  ExternalKind kind = ExternalKind::kUnknown;
  std::uint64_t external_id = 0;
  std::uint64_t correlation_id = 0;
};

// A GPU as the driver describes it. Name: the marketing name. Has no time.
struct DeviceActivity {
  std::int32_t device = 0;
  std::array<std::uint8_t, 16> uuid{};  // all zero when unknown
  std::int32_t pci_domain = -1;         // -1 when the PCI address is unknown
  std::int32_t pci_bus = 0;
  std::int32_t pci_device = 0;
  std::int32_t sm_count = 0;
  std::int64_t memory_bytes = 0;
  std::int32_t compute_capability_major = 0;
  std::int32_t compute_capability_minor = 0;
};

enum class CollectiveOp : std::uint8_t { kUnknown, kAllReduce, kReduceScatter, kAllGather,
                                         kBroadcast, kReduce, kAllToAll, kSend, kRecv };

// One NCCL collective or point-to-point operation on this rank, as the NCCL
// profiler plugin reports it.
struct CollectiveActivity {
  CollectiveOp op = CollectiveOp::kUnknown;
  std::uint64_t communicator_id = 0;
  std::int32_t rank = 0;    // inside the communicator
  std::int32_t nranks = 0;  // of the communicator
  std::int64_t count = 0;   // elements of `datatype`
  std::int64_t size_bytes = 0;
  ShortText<24> datatype;  // e.g. "float32"
  std::uint64_t sequence_number = 0;
  ShortText<24> algorithm;  // e.g. "Ring"; empty when unknown
  ShortText<16> protocol;   // e.g. "LL128"; empty when unknown
  std::int32_t channels = 0;
  std::int32_t peer = 0;  // SEND/RECV peer, BROADCAST/REDUCE root
  std::int32_t device = 0;
  std::uint32_t stream = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t correlation_id = 0;
};

enum class LinkKind : std::uint8_t { kUnknown, kPcie, kNvLink, kNvSwitch };

// One directed link between two devices of this process's host (NVLink,
// or a GPU's PCIe link to the host), as the driver described it. Has no time.
struct LinkActivity {
  LinkKind kind = LinkKind::kUnknown;
  std::int32_t src_device = -1;  // CUDA ordinal; -1 is the host
  std::int32_t dst_device = -1;
  std::int64_t bandwidth_bytes_per_s = 0;  // 0 when unknown
};

// A host range marked with NVTX. Name: the range's message.
struct MarkerActivity {
  ShortText<32> domain;  // empty for the default domain
  std::uint64_t thread_id = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

using ActivityPayload =
    std::variant<KernelActivity, MemcpyActivity, MemsetActivity, ApiCallActivity,
                 SynchronizationActivity, CudaEventActivity, ExternalCorrelationActivity,
                 DeviceActivity, CollectiveActivity, MarkerActivity, LinkActivity>;

// The kinds, in the order of ActivityPayload's alternatives.
enum class ActivityKind : std::uint8_t { kKernel, kMemcpy, kMemset, kApiCall, kSynchronization,
                                         kCudaEvent, kExternalCorrelation, kDevice, kCollective,
                                         kMarker, kLink };
inline constexpr std::size_t kActivityKindCount = std::variant_size_v<ActivityPayload>;

// One record. `name` is only read while the record is appended (the buffer
// pool copies it); kinds without a name ignore it.
struct ActivityRecord {
  ActivityPayload payload;
  std::string_view name;

  [[nodiscard]] ActivityKind kind() const { return static_cast<ActivityKind>(payload.index()); }
};

// "kernel", "memcpy", ... as in messages and tests.
std::string_view activity_kind_name(ActivityKind kind);

}  // namespace ssgd::tracer
