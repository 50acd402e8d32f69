#include "traces/import/nsys/nsys_activity.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <tuple>

#include "common/checked_math.h"
#include "common/error.h"
#include "traces/collective_records.h"
#include "traces/datatype_names.h"
#include "traces/event_rules.h"
#include "traces/kernel_names.h"

namespace ssgd::trace {
namespace {

// FNV-1a (64-bit) of "world": the communicator of a collective whose group
// nothing names, the value the PyTorch importer gives such a collective too
// (docs/kineto.md, "Communicator id"), so that every rank computes it.
constexpr std::uint64_t world_communicator() {
  std::uint64_t h = 14695981039346656037ull;
  for (char c : std::string_view("world")) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

std::string column_or_null(const NsysSchema& schema, std::string_view table,
                           std::string_view column) {
  return schema.has(table, column) ? nsys_quoted(column) : std::string("NULL");
}

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": nsys names each call
// after the CUDA version that introduced it.
std::string without_version(std::string name) {
  const auto at = name.rfind("_v");
  if (at == std::string::npos || at + 2 == name.size()) return name;
  if (std::all_of(name.begin() + static_cast<std::ptrdiff_t>(at) + 2, name.end(),
                  [](char c) { return c >= '0' && c <= '9'; })) {
    name.resize(at);
  }
  return name;
}

// CUPTI's CUpti_ActivityMemcpyKind, which nsys's copyKind holds.
v1::Memcpy::Kind memcpy_kind(std::int64_t kind) {
  switch (kind) {
    case 1: return v1::Memcpy::HTOD;
    case 2: return v1::Memcpy::DTOH;
    case 8: return v1::Memcpy::DTOD;
    case 9: return v1::Memcpy::HTOH;
    case 10: return v1::Memcpy::PTOP;
    default: return v1::Memcpy::UNKNOWN;
  }
}

}  // namespace

NsysActivityReader::NsysActivityReader(NsysDatabase& db, const NsysSchema& schema,
                                       NsysStrings& strings, const NsysNcclRanges& nccl, Emit emit)
    : db_(db), schema_(schema), strings_(strings), nccl_(nccl), emit_(std::move(emit)) {}

NsysActivityReader::Times NsysActivityReader::times(const NsysStatement& r) const {
  const std::int64_t start = r.integer(1, "start");
  const std::int64_t end = r.integer(2, "end");
  if (start < 0 || start > kMaxTimeNs)
    r.fail("start", fmt::format("{} is not a time in ns", start));
  if (end < start) r.fail("end", fmt::format("ends ({}) before it starts ({})", end, start));
  if (end > kMaxTimeNs) r.fail("end", fmt::format("{} is not a time in ns", end));
  return {start, end};
}

std::int32_t NsysActivityReader::device(const NsysStatement& r, int index,
                                        std::string_view column) const {
  const std::int64_t v = r.integer(index, column);
  if (v < 0 || v > std::numeric_limits<std::int32_t>::max()) {
    r.fail(column, fmt::format("{} is not a device id", v));
  }
  return static_cast<std::int32_t>(v);
}

std::uint32_t NsysActivityReader::stream(const NsysStatement& r, int index) const {
  const std::int64_t v = r.integer(index, "streamId");
  if (v < 0 || v > std::numeric_limits<std::uint32_t>::max()) {
    r.fail("streamId", fmt::format("{} is not a stream id", v));
  }
  return static_cast<std::uint32_t>(v);
}

std::uint64_t NsysActivityReader::correlation(const NsysStatement& r, int index) const {
  const std::int64_t v = r.integer(index, "correlationId");
  if (v < 0) r.fail("correlationId", fmt::format("{} is negative", v));
  return static_cast<std::uint64_t>(v);
}

std::int64_t NsysActivityReader::bytes(const NsysStatement& r, int index) const {
  const std::int64_t v = r.integer(index, "bytes");
  if (v < 0 || v > kMaxSizeBytes) r.fail("bytes", fmt::format("{} is not a size (0..2^50)", v));
  return v;
}

void NsysActivityReader::emit(const NsysStatement& r, std::string_view column) {
  if (auto broken = check_event(event_, 0, /*check_times=*/false)) {
    r.fail(column, "as " + broken->field + ": " + broken->what);
  }
  emit_(event_);
}

void NsysActivityReader::read_runtime() {
  if (!schema_.has(kNsysRuntime)) return;
  NsysStatement rows = db_.prepare(
      fmt::format("SELECT rowid, \"start\", \"end\", \"nameId\", \"correlationId\", \"globalTid\" "
                  "FROM {} ORDER BY rowid",
                  nsys_quoted(kNsysRuntime)),
      kNsysRuntime);
  while (rows.step()) {
    const Times t = times(rows);
    const std::string name =
        without_version(strings_.at(rows.integer(3, "nameId"), rows, "nameId"));
    const std::uint64_t corr = correlation(rows, 4);
    const std::int64_t tid = rows.integer(5, "globalTid");
    event_.Clear();
    auto* a = event_.mutable_api_call();
    a->set_api(name.starts_with("cuda") ? v1::ApiCall::RUNTIME
               : name.starts_with("cu") ? v1::ApiCall::DRIVER
                                        : v1::ApiCall::UNKNOWN);
    a->set_name(name);
    a->set_thread_id(nsys_thread_id(tid));
    a->set_start_ns(t.start_ns);
    a->set_end_ns(t.end_ns);
    a->set_correlation_id(corr);
    // Only launches are kept (cudaLaunchKernel, cuLaunchKernelEx, ...), so
    // that a range holding every call keeps no more than its kernels.
    if (corr != 0 && name.find("Launch") != std::string::npos) {
      if (const NsysNcclRange* range = nccl_.find(tid, t.start_ns)) launches_[corr] = range;
    }
    ++stats_.api_calls;
    emit(rows, "nameId");
  }
}

void NsysActivityReader::read_kernels() {
  const auto t = kNsysKernels;
  const char* name_column = schema_.has(t, "demangledName") ? "demangledName" : "shortName";
  std::string dims;
  for (const char* c : {"gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ"}) {
    dims += ", " + column_or_null(schema_, t, c);
  }
  NsysStatement rows =
      db_.prepare(fmt::format("SELECT rowid, \"start\", \"end\", \"deviceId\", \"streamId\", "
                              "\"correlationId\", {}, {}{} FROM {} ORDER BY rowid",
                              nsys_quoted(name_column), column_or_null(schema_, t, "globalPid"),
                              dims, nsys_quoted(t)),
                  t);
  while (rows.step()) {
    const Times times_ns = times(rows);
    const std::int32_t dev = device(rows, 3, "deviceId");
    const std::uint32_t str = stream(rows, 4);
    const std::uint64_t corr = correlation(rows, 5);
    std::string name = strings_.at(rows.integer(6, name_column), rows, name_column);
    if (auto pid = rows.optional_integer(7, "globalPid")) stats_.processes.insert(*pid);
    stats_.devices.insert(dev);
    if (is_nccl_kernel(name)) {
      nccl_kernel(rows, name, times_ns, dev, str, corr);
      continue;
    }
    event_.Clear();
    auto* k = event_.mutable_kernel();
    k->set_name(std::move(name));
    k->set_device(dev);
    k->set_stream(str);
    k->set_start_ns(times_ns.start_ns);
    k->set_end_ns(times_ns.end_ns);
    k->set_correlation_id(corr);
    const char* dim_names[] = {"gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ"};
    std::int32_t d[6] = {};
    for (int i = 0; i < 6; ++i) {
      const auto v = rows.optional_integer(8 + i, dim_names[i]);
      if (v && (*v < 0 || *v > std::numeric_limits<std::int32_t>::max())) {
        rows.fail(dim_names[i], fmt::format("{} is not a grid or block size", *v));
      }
      d[i] = static_cast<std::int32_t>(v.value_or(0));
    }
    k->set_grid_x(d[0]);
    k->set_grid_y(d[1]);
    k->set_grid_z(d[2]);
    k->set_block_x(d[3]);
    k->set_block_y(d[4]);
    k->set_block_z(d[5]);
    ++stats_.kernels;
    emit(rows, name_column);
  }
}

void NsysActivityReader::nccl_kernel(const NsysStatement& r, const std::string& name, Times t,
                                     std::int32_t dev, std::uint32_t str, std::uint64_t corr) {
  ++stats_.nccl_kernels;
  PendingCollective p;
  p.rowid = r.rowid();
  auto& c = p.collective;
  const NcclKernelName parsed = parse_nccl_kernel_name(name);
  c.set_start_ns(t.start_ns);
  c.set_end_ns(t.end_ns);
  c.set_device(dev);
  c.set_stream(str);
  c.set_correlation_id(corr);
  c.set_op(parsed.op);
  c.set_algorithm(parsed.algorithm);
  c.set_protocol(parsed.protocol);
  c.set_datatype(parsed.datatype);
  const NsysNcclRange* range = nullptr;
  if (auto it = launches_.find(corr); corr != 0 && it != launches_.end()) range = it->second;
  const char* why = nullptr;
  if (range == nullptr) {
    why = "launched outside every NCCL NVTX range (ncclGroupEnd, or no NCCL ranges)";
  } else {
    ++stats_.collectives_linked;
    if (c.op() == v1::Collective::UNKNOWN) c.set_op(range->op);
    if (range->size_bytes) {
      ++stats_.collectives_sized;
      c.set_size_bytes(*range->size_bytes);
      const std::int64_t element = datatype_size_bytes(c.datatype());
      if (element > 0 && *range->size_bytes % element == 0)
        c.set_count(*range->size_bytes / element);
    } else {
      why = "its NCCL range carries no \"Message size [bytes]\" payload";
    }
  }
  if (why != nullptr && stats_.collectives_unsized++ == 0) {
    stats_.first_unsized = fmt::format("{} row {}: {}", kNsysKernels, r.rowid(), why);
  }
  pending_.push_back(std::move(p));
}

void NsysActivityReader::read_memcpys() {
  if (!schema_.has(kNsysMemcpys)) return;
  NsysStatement rows =
      db_.prepare(fmt::format("SELECT rowid, \"start\", \"end\", \"deviceId\", \"streamId\", "
                              "\"correlationId\", \"bytes\", \"copyKind\" FROM {} ORDER BY rowid",
                              nsys_quoted(kNsysMemcpys)),
                  kNsysMemcpys);
  while (rows.step()) {
    const Times t = times(rows);
    const std::int32_t dev = device(rows, 3, "deviceId");
    event_.Clear();
    auto* m = event_.mutable_memcpy();
    const std::int64_t kind_value = rows.integer(7, "copyKind");
    const v1::Memcpy::Kind kind = memcpy_kind(kind_value);
    m->set_kind(kind);
    m->set_device(dev);
    m->set_src_device(kind == v1::Memcpy::HTOD || kind == v1::Memcpy::HTOH ? -1 : dev);
    m->set_dst_device(kind == v1::Memcpy::DTOH || kind == v1::Memcpy::HTOH ? -1 : dev);
    if (kind == v1::Memcpy::UNKNOWN) {
      ++stats_.skipped[fmt::format("memcpy copyKind {} recorded as UNKNOWN", kind_value)];
    }
    m->set_stream(stream(rows, 4));
    m->set_correlation_id(correlation(rows, 5));
    m->set_size_bytes(bytes(rows, 6));
    m->set_start_ns(t.start_ns);
    m->set_end_ns(t.end_ns);
    ++stats_.memcpys;
    emit(rows, "copyKind");
  }
}

void NsysActivityReader::read_memsets() {
  if (!schema_.has(kNsysMemsets)) return;
  NsysStatement rows =
      db_.prepare(fmt::format("SELECT rowid, \"start\", \"end\", \"deviceId\", \"streamId\", "
                              "\"correlationId\", \"bytes\" FROM {} ORDER BY rowid",
                              nsys_quoted(kNsysMemsets)),
                  kNsysMemsets);
  while (rows.step()) {
    const Times t = times(rows);
    event_.Clear();
    auto* m = event_.mutable_memset();
    m->set_device(device(rows, 3, "deviceId"));
    m->set_stream(stream(rows, 4));
    m->set_correlation_id(correlation(rows, 5));
    m->set_size_bytes(bytes(rows, 6));
    m->set_start_ns(t.start_ns);
    m->set_end_ns(t.end_ns);
    ++stats_.memsets;
    emit(rows, "bytes");
  }
}

void NsysActivityReader::finish(std::int32_t rank, std::int32_t world_size) {
  // One communicator (NCCL's ranges do not say which), its collectives
  // numbered by start time, the order NCCL runs them on one stream.
  std::sort(
      pending_.begin(), pending_.end(), [](const PendingCollective& a, const PendingCollective& b) {
        const auto& x = a.collective;
        const auto& y = b.collective;
        return std::make_tuple(x.start_ns(), x.end_ns(), x.stream(), x.correlation_id(), a.rowid) <
               std::make_tuple(y.start_ns(), y.end_ns(), y.stream(), y.correlation_id(), b.rowid);
      });
  CollectiveRecordSet numbered;
  std::uint64_t n = 0;
  for (auto& p : pending_) {
    auto& c = p.collective;
    c.set_communicator_id(world_communicator());
    c.set_sequence_number(n++);
    c.set_rank(rank);
    c.set_nranks(world_size);
    // NCCL's range gives an all-gather's and a reduce-scatter's size as one
    // rank's share (sendcount, recvcount); a trace holds the whole buffer:
    // the share times the communicator's ranks, taken as the world's (the
    // only communicator the ranges let this tell apart).
    if ((c.op() == v1::Collective::ALL_GATHER || c.op() == v1::Collective::REDUCE_SCATTER) &&
        c.size_bytes() > 0) {
      if (world_size <= 0) {
        ++stats_.shares_unscaled;
      } else {
        const auto bytes = checked_mul(c.size_bytes(), std::int64_t{world_size});
        if (!bytes || *bytes > kMaxSizeBytes) {
          throw InputError(
              {db_.file(), std::nullopt, p.rowid, std::string(kNsysKernels)},
              fmt::format("table {}, row (rowid) {}: the NCCL range's \"Message size [bytes]\" {} "
                          "times the world size {} (the {}'s whole buffer) passes 2^50 bytes",
                          kNsysKernels, p.rowid, c.size_bytes(), world_size,
                          c.op() == v1::Collective::ALL_GATHER ? "all-gather" : "reduce-scatter"));
        }
        c.set_size_bytes(*bytes);
        c.set_count(c.count() * world_size);  // count <= size: within bounds too
      }
    }
    numbered.add(c, {db_.file(), std::nullopt, p.rowid, std::string(kNsysKernels)});
    event_.Clear();
    *event_.mutable_collective() = std::move(c);
    if (auto broken = check_event(event_, 0, /*check_times=*/false)) {
      throw InputError({db_.file(), std::nullopt, p.rowid, std::string(kNsysKernels)},
                       fmt::format("table {}, row (rowid) {}: the NCCL kernel's collective: {}: {}",
                                   kNsysKernels, p.rowid, broken->field, broken->what));
    }
    ++stats_.collectives;
    emit_(event_);
  }
  pending_.clear();
  launches_.clear();
}

}  // namespace ssgd::trace
