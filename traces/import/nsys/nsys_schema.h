#pragma once
// Which tables and columns of an Nsight Systems SQLite export the importer
// reads, and the check that the file has them (docs/nsys.md, "Schema").
//
// NVIDIA's export schema changes between nsys versions and its tables are
// created lazily (a run without memsets has no CUPTI_ACTIVITY_KIND_MEMSET),
// so the check goes by name: StringIds and CUPTI_ACTIVITY_KIND_KERNEL must
// be there; every other table may be missing (it then has no rows), but a
// table that is there must have every column the importer needs from it.
// Nothing is guessed: a missing table or column is an InputError naming it.

#include <map>
#include <set>
#include <string>
#include <string_view>

#include "traces/import/nsys/nsys_database.h"

namespace ssgd::trace {

// Table names, as nsys writes them.
inline constexpr std::string_view kNsysStrings = "StringIds";
inline constexpr std::string_view kNsysKernels = "CUPTI_ACTIVITY_KIND_KERNEL";
inline constexpr std::string_view kNsysMemcpys = "CUPTI_ACTIVITY_KIND_MEMCPY";
inline constexpr std::string_view kNsysMemsets = "CUPTI_ACTIVITY_KIND_MEMSET";
inline constexpr std::string_view kNsysRuntime = "CUPTI_ACTIVITY_KIND_RUNTIME";
inline constexpr std::string_view kNsysNvtx = "NVTX_EVENTS";
inline constexpr std::string_view kNsysGpus = "TARGET_INFO_GPU";
inline constexpr std::string_view kNsysCudaDevices = "TARGET_INFO_CUDA_DEVICE";
inline constexpr std::string_view kNsysSystemEnv = "TARGET_INFO_SYSTEM_ENV";
inline constexpr std::string_view kNsysSessionStart = "TARGET_INFO_SESSION_START_TIME";

// The tables the file has, with their columns.
class NsysSchema {
 public:
  [[nodiscard]] bool has(std::string_view table) const {
    return tables_.count(std::string(table)) > 0;
  }
  [[nodiscard]] bool has(std::string_view table, std::string_view column) const;
  void add(std::string_view table, std::set<std::string> columns) {
    tables_[std::string(table)] = std::move(columns);
  }

 private:
  std::map<std::string, std::set<std::string>> tables_;
};

// Reads which tables and columns the importer's tables have. Throws
// ssgd::InputError (exit status 2) naming the table, or the table and the
// column, that is missing.
NsysSchema read_nsys_schema(NsysDatabase& db);

}  // namespace ssgd::trace
