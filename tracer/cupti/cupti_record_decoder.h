#pragma once
// Decodes CUPTI's activity records (versioned C structs, cupti_activity.h)
// into the tracer's neutral ActivityRecords (tracer/core/activity_record.h).
// Every CUPTI struct the tracer reads is read here and nowhere else, so a
// new CUDA release with new struct versions changes this file only.
//
// The versions read are those CUDA 13's cupti_activity.h names as current:
//
//   CONCURRENT_KERNEL, KERNEL   CUpti_ActivityKernel10 (the fields read sit at
//                               the same offsets as in CUpti_ActivityKernel9;
//                               static_asserts in the .cc check it)
//   MEMCPY                      CUpti_ActivityMemcpy6
//   MEMCPY2 (peer to peer)      CUpti_ActivityMemcpyPtoP4
//   MEMSET                      CUpti_ActivityMemset4
//   RUNTIME, DRIVER             CUpti_ActivityAPI (the function name comes from
//                               an ApiNameLookup: cuptiGetCallbackName in the
//                               tracer, a table in tests)
//   SYNCHRONIZATION             CUpti_ActivitySynchronization2
//   CUDA_EVENT                  CUpti_ActivityCudaEvent2 (deviceTimestamp)
//   EXTERNAL_CORRELATION        CUpti_ActivityExternalCorrelation
//   DEVICE                      CUpti_ActivityDevice5
//   CONTEXT                     CUpti_ActivityContext3 (remembered: it maps the
//                               context ids of synchronization records to devices)
//   NVLINK, PCIE                CUpti_ActivityNvLink4, CUpti_ActivityPcie, decoded
//                               into TopologyLinks, then into directed
//                               LinkActivity records (take_link) between CUDA
//                               ordinals: NVLink names GPUs by UUID, mapped
//                               to ordinals through the DEVICE records (a link
//                               waits for its GPUs' DEVICE records); a PCIe
//                               GPU record names its ordinal (CUdevice)
//   MARKER                      CUpti_ActivityMarker2: a range is a START and an
//                               END record with the same id; the decoder holds
//                               the start (name copied) until its end arrives
//
// Any other kind is skipped and counted by kind. Not thread-safe: the
// activity source decodes one buffer at a time under its own lock.

#include <cupti_activity.h>

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "tracer/core/activity_record.h"

namespace ssgd::tracer {

// The name of a runtime or driver API function from its callback id; null
// when unknown (the record then has an empty name).
using ApiNameLookup = std::function<const char*(ApiKind api, std::uint32_t cbid)>;

// One interconnect link or PCIe node that CUPTI described (NVLINK, PCIE).
struct TopologyLink {
  enum class Kind : std::uint8_t { kNvLink, kPcieGpu, kPcieBridge };
  Kind kind = Kind::kNvLink;
  // NVLink: the two ends' GPU uuids (all zero for a non-GPU end) and whether
  // the link goes through an NVSwitch; bandwidth in bytes per second.
  std::array<std::uint8_t, 16> uuid0{};
  std::array<std::uint8_t, 16> uuid1{};
  bool nvswitch = false;
  std::uint32_t nvlink_version = 0;
  std::uint32_t physical_links = 0;
  std::uint64_t bandwidth_bytes_per_s = 0;
  // PCIe: the GPU's device ordinal or the bridge id, its PCI domain and
  // upstream bus, generation and width.
  std::uint32_t id = 0;
  std::uint32_t pci_domain = 0;
  std::uint32_t upstream_bus = 0;
  std::uint32_t pcie_generation = 0;
  std::uint32_t link_width = 0;
};

enum class DecodeStatus : std::uint8_t {
  kRecord,       // `record` holds a decoded activity
  kLink,         // `link` holds a topology link; take_link() gives its directed links
  kHeld,         // remembered for later (a marker start, a context), nothing to emit
  kUnknownKind,  // a kind the decoder does not read: skipped and counted
  kUnmatched,    // a marker end without its start: skipped and counted
};

struct DecodeOutput {
  ActivityRecord record;
  TopologyLink link;
};

struct DecoderCounters {
  std::uint64_t decoded = 0;
  std::uint64_t links = 0;               // NVLINK and PCIE records read
  std::uint64_t pcie_bridges = 0;        // PCIe bridge records: no Link for them
  std::uint64_t unmapped_links = 0;      // NVLinks given up: over kMaxPendingLinks waiting
  std::uint64_t unknown_kinds = 0;       // records skipped because of their kind
  std::uint64_t unmatched_markers = 0;   // marker ends without a start
  std::uint64_t dropped_markers = 0;     // starts dropped: too many ranges open at once
  std::uint32_t last_unknown_kind = 0;   // the CUpti_ActivityKind of the last one skipped
};

class CuptiRecordDecoder {
 public:
  // At most this many marker ranges open at once; more starts are dropped.
  static constexpr std::size_t kMaxOpenMarkers = 65536;

  explicit CuptiRecordDecoder(ApiNameLookup api_names);

  // Decodes one record. On kRecord, `out.record.name` views memory owned
  // by the decoder or by the CUPTI buffer; it is valid until the next call.
  // Never throws.
  DecodeStatus decode(const CUpti_Activity& in, DecodeOutput& out) noexcept;

  [[nodiscard]] const DecoderCounters& counters() const { return counters_; }

  // A directed link ready to append (from an NVLINK or PCIE record, or from
  // an NVLINK record whose GPUs a later DEVICE record named); false when
  // none is. Call it until false after every decode().
  bool take_link(ActivityRecord& out) noexcept;
  // NVLink records still waiting for the DEVICE record of a GPU end: a GPU
  // this process cannot see (CUDA_VISIBLE_DEVICES) is never named, so its
  // links are never written.
  [[nodiscard]] std::size_t pending_links() const { return pending_links_.size(); }

  // At most this many NVLink records wait for DEVICE records; more are
  // counted in unmapped_links.
  static constexpr std::size_t kMaxPendingLinks = 1024;

 private:
  struct OpenMarker {
    std::int64_t start_ns = 0;
    std::uint64_t thread_id = 0;
    std::string name;
    std::string domain;
  };

  DecodeStatus decode_kind(const CUpti_Activity& in, DecodeOutput& out);
  DecodeStatus decode_marker(const CUpti_ActivityMarker2& in, DecodeOutput& out);
  std::int32_t device_of_context(std::uint32_t context_id) const;
  // Queues the directed links of an NVLink whose GPU ends are all known;
  // false (nothing queued) when one is not.
  bool resolve_nvlink(const TopologyLink& link);

  ApiNameLookup api_names_;
  std::string name_;  // the name of the last record, when the decoder made it
  std::unordered_map<std::uint32_t, OpenMarker> open_markers_;
  std::unordered_map<std::uint32_t, std::int32_t> context_devices_;
  std::map<std::array<std::uint8_t, 16>, std::int32_t> uuid_devices_;  // from DEVICE records
  std::vector<TopologyLink> pending_links_;
  std::deque<LinkActivity> ready_links_;
  DecoderCounters counters_;
};

// Peak bandwidth of one direction of a PCIe link, bytes per second:
// lanes x transfer rate x encoding efficiency / 8 bits. Generations 1-2
// run 2.5 and 5 GT/s with 8b/10b encoding, 3-5 run 8, 16 and 32 GT/s with
// 128b/130b, 6 runs 64 GT/s with 242/256 FLIT framing (PCI-SIG base
// specifications). 0 for an unknown generation or width. The record's own
// linkRate is an integer of GT/s (it cannot hold 2.5), so it is not used.
std::int64_t pcie_bandwidth_bytes_per_s(std::uint32_t generation, std::uint32_t lanes);

// The demangled form of a C++ symbol; `mangled` itself when it is not one.
std::string demangle_kernel_name(const char* mangled);

}  // namespace ssgd::tracer
