#include "traces/import/nsys/nsys_schema.h"

#include <fmt/format.h>

#include <vector>

#include "common/error.h"

namespace ssgd::trace {
namespace {

// A table the importer reads: the columns it cannot do without, and sets
// of columns of which one at least must be there (a name as an id into
// StringIds or as text, depending on the nsys version).
struct TableSpec {
  std::string_view table;
  bool required;
  std::vector<std::string_view> columns;
  std::vector<std::vector<std::string_view>> one_of;
  std::string_view why;  // what the table gives, for the error of a required one
};

const std::vector<TableSpec>& table_specs() {
  static const std::vector<TableSpec> specs = {
      {kNsysStrings, true, {"id", "value"}, {}, "the names of kernels, calls and ranges"},
      {kNsysKernels,
       true,
       {"start", "end", "deviceId", "streamId", "correlationId"},
       {{"demangledName", "shortName"}},
       "the kernels (a report captured without CUDA tracing, `nsys profile -t cuda`, has none)"},
      {kNsysRuntime, false, {"start", "end", "nameId", "correlationId", "globalTid"}, {}, ""},
      {kNsysMemcpys,
       false,
       {"start", "end", "deviceId", "streamId", "correlationId", "bytes", "copyKind"},
       {},
       ""},
      {kNsysMemsets,
       false,
       {"start", "end", "deviceId", "streamId", "correlationId", "bytes"},
       {},
       ""},
      {kNsysNvtx, false, {"start", "end", "eventType", "globalTid"}, {{"text", "textId"}}, ""},
      {kNsysGpus, false, {"id", "name"}, {}, ""},
      {kNsysCudaDevices, false, {"gpuId", "cudaId"}, {}, ""},
      {kNsysSystemEnv, false, {"name", "value"}, {}, ""},
      {kNsysSessionStart, false, {"utcEpochNs"}, {}, ""},
  };
  return specs;
}

}  // namespace

bool NsysSchema::has(std::string_view table, std::string_view column) const {
  auto it = tables_.find(std::string(table));
  return it != tables_.end() && it->second.count(std::string(column)) > 0;
}

NsysSchema read_nsys_schema(NsysDatabase& db) {
  NsysSchema schema;
  for (const TableSpec& spec : table_specs()) {
    auto columns = db.table_columns(spec.table);
    if (!columns) {
      if (spec.required) {
        throw InputError(
            {db.file(), std::nullopt, std::nullopt, std::string(spec.table)},
            fmt::format("not an Nsight Systems export this importer can read: no table {} ({}; "
                        "the SQLite file of `nsys export --type sqlite`)",
                        spec.table, spec.why));
      }
      continue;
    }
    for (std::string_view column : spec.columns) {
      if (columns->count(std::string(column)) == 0) {
        throw InputError(
            {db.file(), std::nullopt, std::nullopt, fmt::format("{}.{}", spec.table, column)},
            fmt::format("table {} has no column {} (an nsys version whose export "
                        "schema this importer does not know)",
                        spec.table, column));
      }
    }
    for (const auto& alternatives : spec.one_of) {
      bool any = false;
      std::string names;
      for (std::string_view column : alternatives) {
        any = any || columns->count(std::string(column)) > 0;
        names += (names.empty() ? "" : " or ") + std::string(column);
      }
      if (!any) {
        throw InputError(
            {db.file(), std::nullopt, std::nullopt,
             fmt::format("{}.{}", spec.table, alternatives.front())},
            fmt::format("table {} has no column {} (an nsys version whose export schema this "
                        "importer does not know)",
                        spec.table, names));
      }
    }
    schema.add(spec.table, std::move(*columns));
  }
  return schema;
}

}  // namespace ssgd::trace
