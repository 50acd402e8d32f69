#include "traces/import/nsys/nsys_nvtx.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <variant>

#include "common/error.h"
#include "traces/collective_names.h"
#include "traces/event_rules.h"
#include "traces/marker_names.h"

namespace ssgd::trace {
namespace {

// `column` of `table` when the file has it, else NULL, for a SELECT list.
std::string column_or_null(const NsysSchema& schema, std::string_view table,
                           std::string_view column) {
  return schema.has(table, column) ? nsys_quoted(column) : std::string("NULL");
}

// NCCL's payload schema names the message size "Message size [bytes]"; nsys
// writes an extended payload as JSON. The number after that key, if any.
std::optional<std::int64_t> payload_message_bytes(std::string_view json) {
  constexpr std::string_view kKey = "\"Message size [bytes]\"";
  const auto at = json.find(kKey);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t i = at + kKey.size();
  while (i < json.size() && (json[i] == ' ' || json[i] == ':' || json[i] == '\t')) ++i;
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(json.data() + i, json.data() + json.size(), v);
  if (ec != std::errc() || end == json.data() + i || v < 0 || v > kMaxSizeBytes) {
    return std::nullopt;
  }
  return v;
}

// "ncclAllReduce" -> ALL_REDUCE; UNKNOWN for any other name.
v1::Collective::Op nccl_api_op(std::string_view name) {
  if (!name.starts_with("nccl")) return v1::Collective::UNKNOWN;
  return collective_op_from_nccl(name.substr(4));
}

class NvtxReader {
 public:
  NvtxReader(NsysDatabase& db, const NsysSchema& schema, NsysStrings& strings, NsysNcclRanges& nccl,
             const std::function<void(const v1::Event&)>& emit)
      : db_(db), schema_(schema), strings_(strings), nccl_(nccl), emit_(emit) {}

  NsysNvtxStats read() {
    read_domains();
    const auto t = kNsysNvtx;
    NsysStatement rows = db_.prepare(
        fmt::format("SELECT rowid, \"start\", \"end\", \"eventType\", \"globalTid\", {}, {}, {}, "
                    "{}, {} FROM {} ORDER BY rowid",
                    column_or_null(schema_, t, "text"), column_or_null(schema_, t, "textId"),
                    column_or_null(schema_, t, "domainId"), column_or_null(schema_, t, "jsonText"),
                    column_or_null(schema_, t, "jsonTextId"), nsys_quoted(t)),
        t);
    while (rows.step()) row(rows);
    nccl_.finish();
    return std::move(stats_);
  }

 private:
  void read_domains() {
    if (!schema_.has(kNsysNvtx, "domainId")) return;
    NsysStatement rows = db_.prepare(
        fmt::format("SELECT rowid, \"domainId\", {}, {} FROM {} WHERE \"eventType\" = {}",
                    column_or_null(schema_, kNsysNvtx, "text"),
                    column_or_null(schema_, kNsysNvtx, "textId"), nsys_quoted(kNsysNvtx),
                    kNvtxDomainCreate),
        kNsysNvtx);
    while (rows.step()) {
      const auto id = rows.optional_integer(1, "domainId");
      if (!id) continue;
      if (auto name = text(rows, 2, 3)) domains_[*id] = *name;
    }
  }

  // The row's message: `text`, else the StringIds string of `textId`.
  std::optional<std::string> text(const NsysStatement& r, int text_col, int id_col) {
    if (auto s = r.optional_text(text_col, "text")) return s;
    if (auto id = r.optional_integer(id_col, "textId")) return strings_.at(*id, r, "textId");
    return std::nullopt;
  }

  void row(const NsysStatement& r) {
    ++stats_.rows;
    const std::int64_t type = r.integer(3, "eventType");
    if (type != kNvtxPushPopRange && type != kNvtxStartEndRange && type != kNvtxMark) {
      if (type != kNvtxDomainCreate)
        skip(fmt::format("eventType {} (not a range or a mark)", type));
      return;
    }
    const std::int64_t start = r.integer(1, "start");
    if (start < 0 || start > kMaxTimeNs)
      r.fail("start", fmt::format("{} is not a time in ns", start));
    std::int64_t end = start;
    if (type != kNvtxMark) {
      const auto e = r.optional_integer(2, "end");
      if (!e) {
        skip("range not ended within the capture (end is NULL)");
        return;
      }
      end = *e;
      if (end < start) {
        r.fail("end", fmt::format("the range ends ({}) before it starts ({})", end, start));
      }
    }
    const std::int64_t tid = r.integer(4, "globalTid");
    const auto name = text(r, 5, 6);
    if (!name) {
      skip("range without a message");
      return;
    }
    if (is_metadata_mark(*name)) {
      metadata(r, *name, start, end, tid);
    } else if (const auto step = profiler_step_number(*name)) {
      ++stats_.iteration_marks;
      marker(r, iteration_mark(*step), start, end, tid);
    } else if (name->starts_with(kIterationMarkPrefix)) {
      ++stats_.iteration_marks;
      marker(r, *name, start, end, tid);
    } else if (name->starts_with(kForwardMarkPrefix) || name->starts_with(kBackwardMarkPrefix)) {
      ++stats_.layer_marks;
      if (name->starts_with(kForwardMarkPrefix)) {
        stats_.layers.insert(name->substr(kForwardMarkPrefix.size()));
      }
      marker(r, *name, start, end, tid);
    } else if (const auto op = nccl_api_op(*name);
               op != v1::Collective::UNKNOWN && type != kNvtxMark) {
      nccl_range(r, op, start, end, tid);
    } else {
      skip("NVTX range not a mark (iteration/, forward/, backward/, ssgd/, ProfilerStep#)");
    }
  }

  void nccl_range(const NsysStatement& r, v1::Collective::Op op, std::int64_t start,
                  std::int64_t end, std::int64_t tid) {
    NsysNcclRange range{start, end, op, std::nullopt, r.rowid()};
    std::optional<std::string> json = r.optional_text(8, "jsonText");
    if (!json) {
      if (auto id = r.optional_integer(9, "jsonTextId")) json = strings_.at(*id, r, "jsonTextId");
    }
    if (json) range.size_bytes = payload_message_bytes(*json);
    ++stats_.nccl_ranges;
    if (range.size_bytes) ++stats_.nccl_ranges_sized;
    nccl_.add(tid, range);
  }

  std::string domain(const NsysStatement& r) {
    const auto id = r.optional_integer(7, "domainId");
    if (!id || *id == 0) return "";
    auto it = domains_.find(*id);
    return it != domains_.end() ? it->second : fmt::format("nvtx domain {}", *id);
  }

  void marker(const NsysStatement& r, const std::string& name, std::int64_t start, std::int64_t end,
              std::int64_t tid) {
    v1::MarkerRange m;
    m.set_name(name);
    m.set_domain(domain(r));
    m.set_thread_id(nsys_thread_id(tid));
    m.set_start_ns(start);
    m.set_end_ns(end);
    // iteration/<N> with a number that is not one, forward/ without a layer.
    parse_marker_name(m, db_.file(), r.rowid());
    event_.Clear();
    *event_.mutable_marker() = std::move(m);
    if (auto broken = check_event(event_, 0, /*check_times=*/false)) {
      r.fail("text", "as " + broken->field + ": " + broken->what);
    }
    ++stats_.markers;
    emit_(event_);
  }

  void metadata(const NsysStatement& r, const std::string& name, std::int64_t start,
                std::int64_t end, std::int64_t tid) {
    const MetadataMark parsed = parse_metadata_mark(
        name, {db_.file(), std::nullopt, r.rowid(), std::string(kNsysNvtx) + ".text"});
    NsysMetadata& md = stats_.metadata;
    if (md.take(parsed, name, fmt::format("row {}", r.rowid()), [start] { return start; })) return;
    if (std::holds_alternative<CollectiveBytesMark>(parsed) ||
        std::holds_alternative<CollectiveRanksMark>(parsed)) {
      ++md.collective_bytes_marks;
      if (std::holds_alternative<CollectiveRanksMark>(parsed)) ++md.collective_ranks_marks;
    } else {
      marker(r, name, start, end, tid);  // grad_bytes, activation_bytes, unknown keys
    }
  }

  void skip(const std::string& reason) { ++stats_.skipped[reason]; }

  NsysDatabase& db_;
  const NsysSchema& schema_;
  NsysStrings& strings_;
  NsysNcclRanges& nccl_;
  const std::function<void(const v1::Event&)>& emit_;
  std::map<std::int64_t, std::string> domains_;
  NsysNvtxStats stats_;
  v1::Event event_;
};

}  // namespace

std::uint64_t nsys_thread_id(std::int64_t global_tid) {
  return static_cast<std::uint64_t>(global_tid) & 0xFFFFFFu;
}

void NsysNcclRanges::add(std::int64_t global_tid, const NsysNcclRange& range) {
  by_thread_[global_tid].push_back(range);
  ++count_;
}

void NsysNcclRanges::finish() {
  for (auto& [tid, ranges] : by_thread_) {
    std::sort(ranges.begin(), ranges.end(), [](const NsysNcclRange& a, const NsysNcclRange& b) {
      return std::tie(a.start_ns, a.end_ns, a.rowid) < std::tie(b.start_ns, b.end_ns, b.rowid);
    });
  }
}

const NsysNcclRange* NsysNcclRanges::find(std::int64_t global_tid, std::int64_t t) const {
  auto it = by_thread_.find(global_tid);
  if (it == by_thread_.end()) return nullptr;
  const auto& ranges = it->second;
  // The last range starting at or before t; NCCL's calls on one thread do
  // not nest, so it is the only one that can hold t.
  auto after =
      std::upper_bound(ranges.begin(), ranges.end(), t,
                       [](std::int64_t v, const NsysNcclRange& r) { return v < r.start_ns; });
  if (after == ranges.begin()) return nullptr;
  const NsysNcclRange& r = *std::prev(after);
  return t <= r.end_ns ? &r : nullptr;
}

NsysNvtxStats read_nsys_nvtx(NsysDatabase& db, const NsysSchema& schema, NsysStrings& strings,
                             NsysNcclRanges& nccl,
                             const std::function<void(const v1::Event&)>& emit) {
  if (!schema.has(kNsysNvtx)) return {};
  return NvtxReader(db, schema, strings, nccl, emit).read();
}

}  // namespace ssgd::trace
