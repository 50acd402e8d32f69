#pragma once
// What an Nsight Systems export says about the machine and the session,
// from its TARGET_INFO_* tables where present: the host's name
// (TARGET_INFO_SYSTEM_ENV, name "Hostname"), the session's start on the
// Unix-epoch clock (TARGET_INFO_SESSION_START_TIME.utcEpochNs), and the
// GPUs (TARGET_INFO_GPU; CUDA ordinals from TARGET_INFO_CUDA_DEVICE).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "traces/import/nsys/nsys_database.h"
#include "traces/import/nsys/nsys_schema.h"
#include "traces/proto/capture_metadata.pb.h"

namespace ssgd::trace {

struct NsysTargetInfo {
  std::optional<std::string> hostname;
  std::optional<std::int64_t> session_start_utc_ns;
  std::vector<v1::Gpu> gpus;  // sorted by device id
};

// Throws ssgd::InputError naming the table, row and column of a bad value.
NsysTargetInfo read_nsys_target_info(NsysDatabase& db, const NsysSchema& schema);

}  // namespace ssgd::trace
