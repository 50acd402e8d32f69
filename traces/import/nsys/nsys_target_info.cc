#include "traces/import/nsys/nsys_target_info.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "traces/event_rules.h"

namespace ssgd::trace {
namespace {

std::string column_or_null(const NsysSchema& schema, std::string_view table,
                           std::string_view column) {
  return schema.has(table, column) ? nsys_quoted(column) : std::string("NULL");
}

std::int32_t small(const NsysStatement& r, int index, const char* column) {
  const auto v = r.optional_integer(index, column);
  if (!v) return 0;
  if (*v < 0 || *v > std::numeric_limits<std::int32_t>::max()) {
    r.fail(column, fmt::format("{} is out of range", *v));
  }
  return static_cast<std::int32_t>(*v);
}

// CUDA ordinals of the GPUs by TARGET_INFO_GPU id; the first row of each.
std::map<std::int64_t, std::int32_t> cuda_ordinals(NsysDatabase& db, const NsysSchema& schema) {
  std::map<std::int64_t, std::int32_t> ordinals;
  if (!schema.has(kNsysCudaDevices)) return ordinals;
  NsysStatement rows =
      db.prepare(fmt::format("SELECT rowid, \"gpuId\", \"cudaId\" FROM {} ORDER BY rowid",
                             nsys_quoted(kNsysCudaDevices)),
                 kNsysCudaDevices);
  while (rows.step()) {
    const auto gpu = rows.optional_integer(1, "gpuId");
    const std::int32_t cuda = small(rows, 2, "cudaId");
    if (gpu && ordinals.size() < 4096) ordinals.emplace(*gpu, cuda);
  }
  return ordinals;
}

}  // namespace

NsysTargetInfo read_nsys_target_info(NsysDatabase& db, const NsysSchema& schema) {
  NsysTargetInfo info;
  if (schema.has(kNsysSystemEnv)) {
    NsysStatement rows = db.prepare(
        fmt::format("SELECT rowid, \"value\" FROM {} WHERE \"name\" = 'Hostname' ORDER BY rowid",
                    nsys_quoted(kNsysSystemEnv)),
        kNsysSystemEnv);
    while (rows.step() && !info.hostname) {
      if (auto v = rows.optional_text(1, "value"); v && !v->empty()) info.hostname = *v;
    }
  }
  if (schema.has(kNsysSessionStart)) {
    NsysStatement rows =
        db.prepare(fmt::format("SELECT rowid, \"utcEpochNs\" FROM {} ORDER BY rowid LIMIT 1",
                               nsys_quoted(kNsysSessionStart)),
                   kNsysSessionStart);
    if (rows.step()) {
      const std::int64_t v = rows.integer(1, "utcEpochNs");
      if (v < 0 || v > kMaxTimeNs)
        rows.fail("utcEpochNs", fmt::format("{} is not a time in ns", v));
      info.session_start_utc_ns = v;
    }
  }
  if (schema.has(kNsysGpus)) {
    const auto ordinals = cuda_ordinals(db, schema);
    const auto t = kNsysGpus;
    NsysStatement rows = db.prepare(
        fmt::format("SELECT rowid, \"id\", \"name\", {}, {}, {}, {} FROM {} ORDER BY rowid",
                    column_or_null(schema, t, "totalMemory"), column_or_null(schema, t, "smCount"),
                    column_or_null(schema, t, "computeMajor"),
                    column_or_null(schema, t, "computeMinor"), nsys_quoted(t)),
        t);
    std::map<std::int32_t, v1::Gpu> by_device;
    while (rows.step()) {
      const std::int64_t id = rows.integer(1, "id");
      v1::Gpu gpu;
      auto it = ordinals.find(id);
      if (it == ordinals.end() && (id < 0 || id > std::numeric_limits<std::int32_t>::max())) {
        rows.fail("id", fmt::format("{} is not a GPU id", id));
      }
      gpu.set_device_id(it != ordinals.end() ? it->second : static_cast<std::int32_t>(id));
      gpu.set_name(rows.optional_text(2, "name").value_or(""));
      if (auto mem = rows.optional_integer(3, "totalMemory")) {
        if (*mem < 0) rows.fail("totalMemory", fmt::format("{} is negative", *mem));
        gpu.set_memory_bytes(*mem);
      }
      gpu.set_sm_count(small(rows, 4, "smCount"));
      gpu.set_compute_capability_major(small(rows, 5, "computeMajor"));
      gpu.set_compute_capability_minor(small(rows, 6, "computeMinor"));
      // A GPU seen by several processes has a row for each: the first is kept.
      if (by_device.size() < 4096) by_device.emplace(gpu.device_id(), std::move(gpu));
    }
    for (auto& [id, gpu] : by_device) info.gpus.push_back(std::move(gpu));
  }
  return info;
}

}  // namespace ssgd::trace
