#pragma once
// NCCL's names for operations and datatypes (the strings its profiler
// descriptors carry: "AllReduce", "ncclFloat32") turned into the trace's
// vocabulary (CollectiveOp, "float32").

#include <cstdint>
#include <string_view>

#include "tracer/core/activity_record.h"

namespace ssgd::tracer {

// "AllReduce" -> kAllReduce, "Send" -> kSend, ...; kUnknown for anything
// else (Gather, Scatter, SendRecv, null).
CollectiveOp collective_op_from_nccl(const char* func) noexcept;

// "ncclFloat32" -> "float32", "ncclBfloat16" -> "bfloat16"; an unknown name
// is returned as given; null gives "".
std::string_view datatype_from_nccl(const char* datatype) noexcept;

// Bytes per element of a name datatype_from_nccl returns; 0 when unknown.
std::int64_t datatype_size_bytes(std::string_view datatype) noexcept;

}  // namespace ssgd::tracer
