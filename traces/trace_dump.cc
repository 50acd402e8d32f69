#include "traces/trace_dump.h"

#include <fmt/format.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <ostream>
#include <sstream>
#include <unordered_map>

#include "common/checked_math.h"
#include "common/error.h"
#include "common/work_context.h"
#include "traces/clock_calibration.h"
#include "traces/collective_records.h"
#include "traces/event_rules.h"
#include "traces/kernel_names.h"
#include "traces/marker_names.h"

namespace ssgd::trace {
namespace {

// The name of a proto3 enum value, or "<enum>_<number>" for a number the
// schema does not know (proto3 enums are open).
template <typename NameFn>
std::string enum_name(NameFn name_of, int value, const char* prefix) {
  std::string name = name_of(value);
  return name.empty() ? fmt::format("{}_{}", prefix, value) : name;
}

// Adds one event to `stats`; false (and `stats` unchanged) when a total
// would overflow int64.
bool add(EventStats& stats, std::int64_t size_bytes, std::int64_t duration_ns) {
  const auto bytes = checked_add(stats.size_bytes, size_bytes);
  const auto busy = checked_add(stats.total_ns, duration_ns);
  if (!bytes || !busy) return false;
  ++stats.count;
  stats.size_bytes = *bytes;
  stats.total_ns = *busy;
  return true;
}

// The error for a total that no longer fits in int64, at the event that
// made it overflow.
[[noreturn]] void total_overflows(const TraceReader& reader, const std::string& field,
                                  const std::string& what) {
  throw InputError({reader.file_name(), std::nullopt,
                    static_cast<std::int64_t>(reader.chunks_read()) - 1, field},
                   fmt::format("event {} of the file: the total {} of the trace exceeds 2^63 - 1",
                               reader.events_read() - 1, what));
}

std::string format_duration(std::int64_t ns) {
  const double v = static_cast<double>(ns);
  const std::int64_t magnitude = ns < 0 ? -ns : ns;
  if (magnitude < 1000) return fmt::format("{} ns", ns);
  if (magnitude < 1000000) return fmt::format("{:.3f} us", v / 1e3);
  if (magnitude < 1000000000) return fmt::format("{:.3f} ms", v / 1e6);
  return fmt::format("{:.3f} s", v / 1e9);
}

std::string format_bytes(std::int64_t bytes) {
  const double v = static_cast<double>(bytes);
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < (std::int64_t{1} << 20)) return fmt::format("{:.1f} KiB", v / 1024.0);
  if (bytes < (std::int64_t{1} << 30)) return fmt::format("{:.1f} MiB", v / 1048576.0);
  return fmt::format("{:.2f} GiB", v / 1073741824.0);
}

void print_stats_table(std::ostream& out, const std::string& title,
                       const std::map<std::string, EventStats>& groups) {
  if (groups.empty()) return;
  out << title << ":\n";
  out << fmt::format("  {:<16} {:>8} {:>12} {:>12}\n", "", "count", "bytes", "busy");
  for (const auto& [name, s] : groups) {
    out << fmt::format("  {:<16} {:>8} {:>12} {:>12}\n", name, s.count, format_bytes(s.size_bytes),
                       format_duration(s.total_ns));
  }
}

// Removes trailing blanks: single-line text format ends in a space.
std::string rstrip(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n')) s.pop_back();
  return s;
}

// Writes each line of `text` after `prefix`.
void print_prefixed(std::ostream& out, const std::string& text, const std::string& prefix) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) out << rstrip(prefix + line) << "\n";
}

// Keeps the first parse error with its 0-based line and column.
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int at_line, google::protobuf::io::ColumnNumber at_column,
                const std::string& what) override {
    if (has_error) return;
    has_error = true;
    line = at_line;
    column = at_column;
    message = what;
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}

  bool has_error = false;
  int line = 0;
  int column = 0;
  std::string message;
};

}  // namespace

TraceSummary summarize_trace(TraceReader& reader, std::size_t top_kernels) {
  TraceSummary s;
  s.file = reader.file_name();
  s.metadata = reader.metadata();
  std::unordered_map<std::string, EventStats> kernels;
  v1::Event e;
  while (reader.next(e)) {
    ++s.events;
    ++s.events_per_rank[e.rank()];
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    if (event_time_span(e, start_ns, end_ns)) {
      s.first_ns = s.has_time ? std::min(s.first_ns, start_ns) : start_ns;
      s.last_ns = s.has_time ? std::max(s.last_ns, end_ns) : end_ns;
      s.has_time = true;
    }
    // The reader's rules (event_rules.h) keep 0 <= start_ns <= end_ns.
    const std::int64_t duration_ns = end_ns - start_ns;
    switch (e.payload_case()) {
      case v1::Event::kKernel: {
        ++s.kernels;
        const auto total = checked_add(s.kernel_total_ns, duration_ns);
        if (!total || !add(kernels[e.kernel().name()], 0, duration_ns)) {
          total_overflows(reader, "kernel.end_ns", "busy time of kernels");
        }
        s.kernel_total_ns = *total;
        break;
      }
      case v1::Event::kMemcpy:
        ++s.memcpys;
        if (!add(s.memcpys_by_kind[enum_name(v1::Memcpy::Kind_Name<int>, e.memcpy().kind(), "KIND")],
                 e.memcpy().size_bytes(), duration_ns)) {
          total_overflows(reader, "memcpy.size_bytes", "bytes or busy time of memcpys");
        }
        break;
      case v1::Event::kMemset:
        ++s.memsets;
        if (!add(s.memset_stats, e.memset().size_bytes(), duration_ns)) {
          total_overflows(reader, "memset.size_bytes", "bytes or busy time of memsets");
        }
        break;
      case v1::Event::kCollective:
        ++s.collectives;
        if (!add(s.collectives_by_op[enum_name(v1::Collective::Op_Name<int>, e.collective().op(),
                                               "OP")],
                 e.collective().size_bytes(), duration_ns)) {
          total_overflows(reader, "collective.size_bytes", "bytes or busy time of collectives");
        }
        break;
      case v1::Event::kMarker:
        ++s.markers;
        if (e.marker().domain() == kWindowMarkDomain) {
          const std::string& name = e.marker().name();
          if (name.rfind("step/", 0) == 0) ++s.window_steps;
          if (name == "window/open") ++s.window_opens;
        }
        break;
      case v1::Event::kApiCall: ++s.api_calls; break;
      case v1::Event::kSynchronization: ++s.synchronizations; break;
      case v1::Event::kCudaEvent: ++s.cuda_events; break;
      case v1::Event::kExternalCorrelation: ++s.external_correlations; break;
      case v1::Event::kDevice: ++s.devices; break;
      case v1::Event::kLink: ++s.links; break;
      case v1::Event::kGraphNode: ++s.graph_nodes; break;
      case v1::Event::PAYLOAD_NOT_SET: ++s.empty; break;
    }
  }
  s.chunks = reader.chunks_read();
  if (const v1::Footer* footer = reader.footer()) {
    s.has_footer = true;
    s.dropped_records = footer->dropped_records();
    s.invalid_timestamps = footer->invalid_timestamps();
    s.nccl_events_dropped = footer->nccl_events_dropped();
    s.nccl_incomplete_collectives = footer->nccl_incomplete_collectives();
    s.nccl_orphan_events = footer->nccl_orphan_events();
  }
  s.truncated = reader.truncated();
  s.truncation_warning = reader.truncation_warning();
  if (const v1::ClockCalibration* c = stored_calibration(s.metadata, reader.footer())) {
    s.clock_calibration = *c;
  }

  s.distinct_kernels = kernels.size();
  for (auto& [name, stats] : kernels) s.top_kernels.push_back({name, stats});
  const auto by_time = [](const KernelStats& a, const KernelStats& b) {
    return a.stats.total_ns != b.stats.total_ns ? a.stats.total_ns > b.stats.total_ns
                                                : a.name < b.name;
  };
  const std::size_t keep = std::min(top_kernels, s.top_kernels.size());
  std::partial_sort(s.top_kernels.begin(),
                    s.top_kernels.begin() + static_cast<std::ptrdiff_t>(keep), s.top_kernels.end(),
                    by_time);
  s.top_kernels.resize(keep);
  return s;
}

void print_summary(const TraceSummary& s, std::ostream& out) {
  const auto& m = s.metadata;
  const auto row = [&out](const std::string& key, const std::string& value) {
    out << fmt::format("{:<17}{}\n", key, value);
  };
  const auto or_unknown = [](const std::string& v) { return v.empty() ? std::string("?") : v; };
  row("trace", s.file);
  row("provenance", or_unknown(m.provenance()));
  row("tool", rstrip(or_unknown(m.tool()) + " " + m.tool_version()));
  if (!m.framework().empty()) row("framework", m.framework());
  if (!m.command_line().empty()) row("command line", m.command_line());
  // 0 is the format's "not recorded" (the tracer without WORLD_SIZE or a
  // communicator of more than one rank; importers that cannot tell).
  row("rank", m.world_size() > 0 ? fmt::format("{} of world size {}", m.rank(), m.world_size())
                                 : fmt::format("{} (world size not recorded)", m.rank()));
  if (m.driver_version().empty() && m.cuda_version().empty() && m.nccl_version().empty()) {
    row("versions", "not recorded (driver, CUDA, NCCL)");
  } else {
    row("versions", fmt::format("driver {}, CUDA {}, NCCL {}", or_unknown(m.driver_version()),
                                or_unknown(m.cuda_version()), or_unknown(m.nccl_version())));
  }
  if (m.capture_start_ns() != 0)
    row("capture start", fmt::format("{} ns since the Unix epoch", m.capture_start_ns()));
  for (int h = 0; h < m.hosts_size(); ++h) {
    const auto& host = m.hosts(h);
    std::string gpus;
    for (const auto& gpu : host.gpus()) {
      gpus += fmt::format("{}{}: {}", gpus.empty() ? "" : ", ", gpu.device_id(),
                          or_unknown(gpu.name()));
    }
    row(h == 0 ? "hosts" : "",
        fmt::format("{} ({} GPU{}{}{}; clock {}, offset {} ns)", or_unknown(host.hostname()),
                    host.gpus_size(), host.gpus_size() == 1 ? "" : "s", gpus.empty() ? "" : ": ",
                    gpus, enum_name(v1::ClockDomain::Kind_Name<int>, host.clock().kind(), "KIND"),
                    host.clock().offset_ns()));
  }
  if (s.clock_calibration) row("clock sync", describe_calibration(*s.clock_calibration));
  if (m.topology().links_size() > 0) row("links", std::to_string(m.topology().links_size()));

  row("chunks", fmt::format("{} ({})", s.chunks,
                            s.has_footer  ? "complete, footer checked"
                            : s.truncated ? "CUT SHORT, no footer"
                                          : "not read to the end"));
  row("events", std::to_string(s.events));
  const std::pair<const char*, std::uint64_t> kinds[] = {
      {"kernels", s.kernels},         {"memcpys", s.memcpys}, {"memsets", s.memsets},
      {"collectives", s.collectives}, {"markers", s.markers}, {"api calls", s.api_calls},
      {"syncs", s.synchronizations}, {"cuda events", s.cuda_events},
      {"external ids", s.external_correlations}, {"devices", s.devices}, {"links", s.links},
      {"graph nodes", s.graph_nodes},
      {"no payload", s.empty}};
  for (const auto& [name, count] : kinds) {
    if (count != 0) row(std::string("  ") + name, std::to_string(count));
  }
  if (s.has_time) {
    row("time span", fmt::format("{} .. {} ns ({})", s.first_ns, s.last_ns,
                                 format_duration(s.last_ns - s.first_ns)));
  }
  std::string ranks;
  for (const auto& [rank, count] : s.events_per_rank) {
    ranks += fmt::format("{}{}: {}", ranks.empty() ? "" : ", ", rank, count);
  }
  if (!ranks.empty()) row("events per rank", ranks);
  if (s.has_footer) {
    row("lost by tracer", fmt::format("{} dropped records, {} invalid timestamps",
                                      s.dropped_records, s.invalid_timestamps));
    if (s.nccl_events_dropped + s.nccl_incomplete_collectives + s.nccl_orphan_events > 0) {
      row("NCCL plugin", fmt::format("{} events dropped, {} collectives incomplete, {} orphan "
                                     "events",
                                     s.nccl_events_dropped, s.nccl_incomplete_collectives,
                                     s.nccl_orphan_events));
    }
  }
  if (!s.top_kernels.empty()) {
    out << fmt::format("top kernels by total time ({} distinct, {} in all):\n", s.distinct_kernels,
                       format_duration(s.kernel_total_ns));
    out << fmt::format("  {:>12} {:>8}  {}\n", "busy", "count", "name");
    for (const auto& k : s.top_kernels) {
      out << fmt::format("  {:>12} {:>8}  {}\n", format_duration(k.stats.total_ns), k.stats.count,
                         short_kernel_name(k.name));
    }
  }
  print_stats_table(out, "collectives", s.collectives_by_op);
  print_stats_table(out, "memcpys", s.memcpys_by_kind);
  if (s.memset_stats.count != 0) print_stats_table(out, "memsets", {{"MEMSET", s.memset_stats}});
  if (s.truncated) row("warning", s.truncation_warning);
}

void dump_trace_text(TraceReader& reader, std::ostream& out) {
  google::protobuf::TextFormat::Printer block;
  google::protobuf::TextFormat::Printer line;
  line.SetSingleLineMode(true);
  std::string text;

  out << "# ssgd trace, container format version " << reader.format_version() << "\n";
  block.PrintToString(reader.metadata(), &text);
  out << "metadata {\n";
  print_prefixed(out, text, "  ");
  out << "}\n";
  v1::Event e;
  while (reader.next(e)) {
    line.PrintToString(e, &text);
    text = rstrip(std::move(text));
    out << "events { " << text << (text.empty() ? "" : " ") << "}\n";
  }
  if (const v1::Footer* footer = reader.footer()) {
    block.PrintToString(*footer, &text);
    out << "# footer {\n";
    print_prefixed(out, text, "#   ");
    out << "# }\n";
  } else if (reader.truncated()) {
    // Without the file name, so a dump does not depend on where the file is.
    std::string warning = reader.truncation_warning();
    const std::string prefix = reader.file_name() + ": ";
    if (warning.starts_with(prefix)) warning.erase(0, prefix.size());
    out << "# truncated: " << warning << "\n";
  }
}

v1::Footer pack_text_trace(const std::filesystem::path& text_path,
                           const std::filesystem::path& out_path, TraceWriterOptions options) {
  const std::string file = text_path.string();
  WorkContext context("reading", file, "text trace", "event");
  std::ifstream in(text_path, std::ios::in | std::ios::binary);
  if (!in) {
    throw InputError({file, std::nullopt, std::nullopt, ""},
                     std::string("cannot open the text trace: ") + std::strerror(errno));
  }
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) throw InputError({file, std::nullopt, std::nullopt, ""}, "read error");
  if (looks_like_trace(content.view())) {
    throw InputError({file, std::nullopt, std::nullopt, ""},
                     "is already a .ssgdt trace, not a text trace");
  }

  v1::TextTrace trace;
  FirstErrorCollector errors;
  google::protobuf::TextFormat::ParseInfoTree locations;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(&locations);
  if (!parser.ParseFromString(content.str(), &trace)) {
    if (!errors.has_error) {
      throw InputError({file, std::nullopt, std::nullopt, ""}, "not a valid TextTrace");
    }
    throw InputError({file, errors.line + 1, std::nullopt, ""},
                     fmt::format("column {}: {}", errors.column + 1, errors.message));
  }

  if (trace.ByteSizeLong() == 0) {
    throw InputError({file, std::nullopt, std::nullopt, ""},
                     "the text trace is empty: no metadata and no events (a TextTrace holds "
                     "metadata { ... } and events { ... }, as `ssgd info --dump` writes them)");
  }
  if (auto broken = check_metadata(trace.metadata())) {
    const auto* metadata_field = v1::TextTrace::descriptor()->FindFieldByName("metadata");
    throw InputError({file, locations.GetLocation(metadata_field, -1).line + 1, std::nullopt,
                      "metadata." + broken->field},
                     broken->what);
  }
  const auto* events_field = v1::TextTrace::descriptor()->FindFieldByName("events");
  CollectiveRecordSet collectives;  // none twice (traces/collective_records.h)
  for (int i = 0; i < trace.events_size(); ++i) {
    const v1::Event& e = trace.events(i);
    context.set_position(i);
    const auto where = [&](const std::string& field) {
      return InputLocation{file, locations.GetLocation(events_field, i).line + 1, i,
                           fmt::format("events[{}]{}", i, field)};
    };
    if (e.payload_case() == v1::Event::PAYLOAD_NOT_SET) {
      throw InputError(where(""),
                       "the event has no payload: set one of kernel, memcpy, memset, "
                       "collective, marker, api_call, synchronization, cuda_event, "
                       "external_correlation, device or link");
    }
    if (auto broken = check_event(e, trace.metadata().world_size())) {
      throw InputError(where("." + broken->field), broken->what);
    }
    if (e.has_collective()) {
      try {
        collectives.add(e.collective(), where(""));
      } catch (const InputError& twice) {
        throw InputError(where(".collective.sequence_number"), twice.reason());
      }
    }
  }

  context.set_position(-1);
  const WorkContext writing("writing", out_path.string(), "ssgd trace");
  TraceWriter writer(out_path, trace.metadata(), options);
  for (const auto& e : trace.events()) writer.append(e);
  writer.close();
  return writer.footer();
}

}  // namespace ssgd::trace
