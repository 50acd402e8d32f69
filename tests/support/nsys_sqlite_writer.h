#pragma once
// Writes Nsight Systems SQLite exports in code, for the tests of
// `ssgd import nsys` (traces/import/nsys/) and the fuzz seeds: the tables
// and columns NVIDIA documents for `nsys export --type sqlite` (docs/nsys.md,
// "Schema"), a subset of each table's columns, with StringIds holding the
// names. A test drops a table or a column, or breaks a value, to check the
// importer's errors. Needs SQLite (link SQLite::SQLite3).

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace ssgd::testing {

// One value of a row: NULL, an integer, or text.
using NsysValue = std::variant<std::monostate, std::int64_t, std::string>;

struct NsysTable {
  std::string name;
  std::vector<std::string> columns;
  std::vector<std::vector<NsysValue>> rows;
};

// nsys's serialized thread id: pid in bits 24..47, tid in bits 0..23.
inline std::int64_t nsys_global_tid(std::int64_t pid, std::int64_t tid) {
  return (pid << 24) | tid;
}

struct NsysExportSpec {
  std::vector<std::string> strings;  // StringIds: id = index
  std::vector<NsysTable> tables;
  std::set<std::string> omit_tables;
  std::map<std::string, std::set<std::string>> omit_columns;  // table -> columns

  // The id of `s` in StringIds, added when new.
  std::int64_t id(const std::string& s) {
    for (std::size_t i = 0; i < strings.size(); ++i) {
      if (strings[i] == s) return static_cast<std::int64_t>(i);
    }
    strings.push_back(s);
    return static_cast<std::int64_t>(strings.size() - 1);
  }
  NsysTable& table(const std::string& name, std::vector<std::string> columns) {
    for (auto& t : tables) {
      if (t.name == name) return t;
    }
    tables.push_back({name, std::move(columns), {}});
    return tables.back();
  }
  // The documented tables' columns (a subset), in nsys's order.
  void kernel(std::int64_t start, std::int64_t end, std::int64_t correlation,
              const std::string& name, std::int64_t device = 0, std::int64_t stream = 7,
              std::int64_t pid = 4242) {
    table("CUPTI_ACTIVITY_KIND_KERNEL",
          {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
           "demangledName", "shortName", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
           "registersPerThread"})
        .rows.push_back({start, end, device, std::int64_t{1}, stream, correlation, pid << 24,
                         id(name), id(name.substr(0, name.find('('))), std::int64_t{80},
                         std::int64_t{1}, std::int64_t{1}, std::int64_t{256}, std::int64_t{1},
                         std::int64_t{1}, std::int64_t{32}});
  }
  void runtime(std::int64_t start, std::int64_t end, std::int64_t correlation,
               const std::string& name, std::int64_t global_tid) {
    table("CUPTI_ACTIVITY_KIND_RUNTIME",
          {"start", "end", "eventClass", "globalTid", "correlationId", "nameId", "returnValue"})
        .rows.push_back(
            {start, end, std::int64_t{0}, global_tid, correlation, id(name), std::int64_t{0}});
  }
  void memcpy(std::int64_t start, std::int64_t end, std::int64_t correlation, std::int64_t bytes,
              std::int64_t copy_kind, std::int64_t device = 0, std::int64_t stream = 7) {
    table("CUPTI_ACTIVITY_KIND_MEMCPY",
          {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
           "bytes", "copyKind", "srcKind", "dstKind"})
        .rows.push_back({start, end, device, std::int64_t{1}, stream, correlation,
                         std::int64_t{4242} << 24, bytes, copy_kind, std::int64_t{0},
                         std::int64_t{1}});
  }
  void memset(std::int64_t start, std::int64_t end, std::int64_t correlation, std::int64_t bytes,
              std::int64_t device = 0, std::int64_t stream = 7) {
    table("CUPTI_ACTIVITY_KIND_MEMSET", {"start", "end", "deviceId", "contextId", "streamId",
                                         "correlationId", "globalPid", "value", "bytes"})
        .rows.push_back({start, end, device, std::int64_t{1}, stream, correlation,
                         std::int64_t{4242} << 24, std::int64_t{0}, bytes});
  }
  // An NVTX row: its message inline (text) or, with `by_id`, in StringIds.
  void nvtx(std::int64_t start, std::optional<std::int64_t> end, std::int64_t event_type,
            const std::string& text, std::int64_t global_tid, std::int64_t domain = 0,
            std::optional<std::string> json = std::nullopt, bool by_id = false) {
    table("NVTX_EVENTS", {"start", "end", "eventType", "rangeId", "category", "color", "text",
                          "globalTid", "endGlobalTid", "textId", "domainId", "uint64Value",
                          "int64Value", "doubleValue", "jsonTextId", "jsonText"})
        .rows.push_back({start, end ? NsysValue(*end) : NsysValue(), event_type, NsysValue(),
                         NsysValue(), NsysValue(), by_id ? NsysValue() : NsysValue(text),
                         global_tid, NsysValue(), by_id ? NsysValue(id(text)) : NsysValue(), domain,
                         NsysValue(), NsysValue(), NsysValue(), NsysValue(),
                         json ? NsysValue(*json) : NsysValue()});
  }
  void target_info(const std::string& hostname, std::int64_t session_start_utc_ns) {
    table("TARGET_INFO_SYSTEM_ENV", {"globalVid", "devStateName", "name", "nameEnum", "value"})
        .rows.push_back(
            {std::int64_t{0}, std::string(""), std::string("Hostname"), std::int64_t{0}, hostname});
    table("TARGET_INFO_SESSION_START_TIME", {"utcEpochNs", "utcTime", "localTime"})
        .rows.push_back({session_start_utc_ns, std::string(""), std::string("")});
    table("TARGET_INFO_GPU",
          {"id", "name", "busLocation", "totalMemory", "smCount", "computeMajor", "computeMinor"})
        .rows.push_back({std::int64_t{0}, std::string("NVIDIA H100 80GB HBM3"),
                         std::string("0000:18:00.0"), std::int64_t{85'520'809'984},
                         std::int64_t{132}, std::int64_t{9}, std::int64_t{0}});
    table("TARGET_INFO_CUDA_DEVICE", {"gpuId", "cudaId", "pid", "uuid", "numMultiprocessors"})
        .rows.push_back({std::int64_t{0}, std::int64_t{0}, std::int64_t{4242}, std::string(""),
                         std::int64_t{132}});
  }
};

// Writes `spec` to `path` (replaced), StringIds first.
inline void write_nsys_export(const std::filesystem::path& path, const NsysExportSpec& spec) {
  std::filesystem::remove(path);
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) throw std::runtime_error("sqlite3_open");
  auto exec = [&](const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      const std::string why = err ? err : "?";
      sqlite3_free(err);
      sqlite3_close(db);
      throw std::runtime_error(sql + ": " + why);
    }
  };
  exec("PRAGMA page_size = 512");  // small files (fuzz seeds)
  exec("BEGIN");
  std::vector<NsysTable> tables;
  if (!spec.omit_tables.count("StringIds")) {
    NsysTable strings{"StringIds", {"id", "value"}, {}};
    for (std::size_t i = 0; i < spec.strings.size(); ++i) {
      strings.rows.push_back({static_cast<std::int64_t>(i), spec.strings[i]});
    }
    tables.push_back(std::move(strings));
  }
  for (const auto& t : spec.tables) {
    if (!spec.omit_tables.count(t.name)) tables.push_back(t);
  }
  for (const auto& t : tables) {
    std::set<std::string> omit;
    if (auto it = spec.omit_columns.find(t.name); it != spec.omit_columns.end()) omit = it->second;
    std::vector<std::size_t> keep;
    std::string create = "CREATE TABLE " + t.name + " (", insert = "INSERT INTO " + t.name + " (",
                marks;
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
      if (omit.count(t.columns[c])) continue;
      const bool first = keep.empty();
      keep.push_back(c);
      std::string type = "INTEGER";
      if (t.columns[c] == "text" || t.columns[c] == "value" || t.columns[c] == "name" ||
          t.columns[c] == "jsonText" || t.columns[c].find("Time") != std::string::npos ||
          t.columns[c] == "uuid" || t.columns[c] == "busLocation" ||
          t.columns[c] == "devStateName") {
        type = "TEXT";
      }
      if (t.name == "StringIds" && t.columns[c] == "id") type = "INTEGER PRIMARY KEY";
      create += (first ? "\"" : ", \"") + t.columns[c] + "\" " + type;
      insert += (first ? "\"" : ", \"") + t.columns[c] + "\"";
      marks += first ? "?" : ", ?";
    }
    exec(create + ")");
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db, (insert + ") VALUES (" + marks + ")").c_str(), -1, &stmt, nullptr);
    for (const auto& row : t.rows) {
      sqlite3_reset(stmt);
      for (std::size_t k = 0; k < keep.size(); ++k) {
        const NsysValue& v = row[keep[k]];
        const int at = static_cast<int>(k + 1);
        if (const auto* i = std::get_if<std::int64_t>(&v)) {
          sqlite3_bind_int64(stmt, at, *i);
        } else if (const auto* s = std::get_if<std::string>(&v)) {
          sqlite3_bind_text(stmt, at, s->c_str(), static_cast<int>(s->size()), SQLITE_TRANSIENT);
        } else {
          sqlite3_bind_null(stmt, at);
        }
      }
      sqlite3_step(stmt);
    }
    sqlite3_finalize(stmt);
  }
  exec("COMMIT");
  sqlite3_close(db);
}

struct NsysTrainingOptions {
  std::int32_t rank = 0;
  std::int32_t world_size = 2;
  bool rank_mark = true;
  bool nccl_ranges = true;  // NCCL's NVTX ranges, with a JSON payload
  bool nccl_payload = true;
  bool all_gather = false;  // the collective an all-gather of a 4 MiB share instead
  bool target_info = true;
  std::string hostname = "node0";
  std::int64_t iterations = 2;
};

// Two iterations of a two-layer training step on one GPU, as nsys records
// it with ssgd's NVTX marks: iteration/<i> (start/end ranges), forward/l1,
// forward/l2, backward/l2, backward/l1 (push/pop), a gemm kernel launched in
// each, an HtoD copy and a memset at the iteration's start, an NCCL
// all-reduce of 4 MiB launched inside backward/l1 within NCCL's own
// ncclAllReduce range, and an optimizer kernel after it.
inline NsysExportSpec nsys_two_layer_training(const NsysTrainingOptions& o = {}) {
  NsysExportSpec s;
  const std::int64_t pid = 4242 + o.rank;
  const std::int64_t main_tid = nsys_global_tid(pid, pid);
  std::int64_t corr = 1;
  auto launch = [&](std::int64_t at, const std::string& kernel, std::int64_t start,
                    std::int64_t end, std::int64_t stream = 7,
                    const char* call = "cudaLaunchKernel_v7000") {
    s.runtime(at, at + 5'000, corr, call, main_tid);
    s.kernel(start, end, corr, kernel, 0, stream, pid);
    ++corr;
  };
  s.nvtx(1'000, std::nullopt, 75, "NCCL", main_tid, 1);  // the NCCL domain's creation
  if (o.rank_mark) {
    s.nvtx(2'000, 2'000, 60, "ssgd/rank=" + std::to_string(o.rank), main_tid);
    s.nvtx(2'000, 2'000, 60, "ssgd/world_size=" + std::to_string(o.world_size), main_tid);
  }
  for (std::int64_t i = 0; i < o.iterations; ++i) {
    const std::int64_t t0 = 1'000'000 + i * 10'000'000;
    s.nvtx(t0, t0 + 9'000'000, 60, "iteration/" + std::to_string(i), main_tid);
    s.runtime(t0 + 10'000, t0 + 20'000, corr, "cudaMemcpyAsync_v3020", main_tid);
    s.memcpy(t0 + 30'000, t0 + 60'000, corr++, 1 << 20, 1);
    s.runtime(t0 + 61'000, t0 + 62'000, corr, "cudaMemsetAsync_v3020", main_tid);
    s.memset(t0 + 63'000, t0 + 64'000, corr++, 4096);
    const struct {
      const char* name;
      std::int64_t start, end;
    } layers[] = {{"forward/l1", 100'000, 1'100'000},
                  {"forward/l2", 1'200'000, 2'200'000},
                  {"backward/l2", 3'000'000, 4'000'000},
                  {"backward/l1", 4'100'000, 5'400'000}};
    for (const auto& l : layers) {
      s.nvtx(t0 + l.start, t0 + l.end, 59, l.name, main_tid, 0, std::nullopt, /*by_id=*/true);
      launch(t0 + l.start + 10'000, "void gemm_kernel<float, 128>(float const*, float*)",
             t0 + l.start + 50'000, t0 + l.start + 500'000);
    }
    const std::int64_t n0 = t0 + 5'200'000;
    if (o.nccl_ranges) {
      std::optional<std::string> json;
      if (o.nccl_payload) {
        json = "{\"Message size [bytes]\": 4194304, \"Reduction operation\": \"Sum\"}";
      }
      s.nvtx(n0, n0 + 100'000, 59, o.all_gather ? "ncclAllGather" : "ncclAllReduce", main_tid, 1,
             json);
    }
    launch(n0 + 50'000,
           o.all_gather
               ? "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
               : "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
           n0 + 100'000, n0 + 1'800'000, 13, "cuLaunchKernelEx");
    launch(t0 + 7'500'000, "void multi_tensor_apply_kernel<float>(float*)", t0 + 7'600'000,
           t0 + 8'000'000);
  }
  if (o.target_info) s.target_info(o.hostname, 1'700'000'000'000'000'000);
  return s;
}

}  // namespace ssgd::testing
