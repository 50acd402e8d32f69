#pragma once
// Turns a neutral activity record into an ssgd.trace.v1 Event: one function,
// so that what each record field becomes in the file is written down once.

#include <cstdint>
#include <array>
#include <string>

#include "tracer/core/activity_record.h"
#include "traces/proto/trace_events.pb.h"

namespace ssgd::tracer {

// Fills `event` (cleared first) from `record` (its name included), as
// recorded by training rank `rank`.
void to_event(const ActivityRecord& record, std::int32_t rank, trace::v1::Event& event);

// The record's op for a trace op (the inverse of what to_event writes), for
// the NCCL plugin, which names ops in the trace's vocabulary
// (traces/collective_names.h).
CollectiveOp collective_op_from_proto(trace::v1::Collective::Op op);

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints UUIDs;
// empty for an all-zero (unknown) uuid.
std::string format_gpu_uuid(const std::array<std::uint8_t, 16>& uuid);

// "0000:3b:00.0"; empty when the domain is negative (unknown).
std::string format_pci_bus_id(std::int32_t domain, std::int32_t bus, std::int32_t device);

}  // namespace ssgd::tracer
