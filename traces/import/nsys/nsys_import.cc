#include "traces/import/nsys/nsys_import.h"

#include <unistd.h>

#include <fmt/format.h>

#include <ostream>

#include "common/error.h"
#include "common/logging.h"
#include "common/output_target.h"
#include "common/work_context.h"
#include "traces/event_rules.h"
#include "traces/event_sorter.h"
#include "traces/import/nsys/nsys_database.h"
#include "traces/import/nsys/nsys_schema.h"
#include "traces/import/nsys/nsys_strings.h"
#include "traces/import/nsys/nsys_target_info.h"
#include "traces/imported_trace.h"

namespace ssgd::trace {
namespace {

// Rank and world size: --rank, the ssgd/ marks, the file's name.
void identify(const NsysImportOptions& options, NsysImportSummary& s) {
  const NsysMetadata& md = s.nvtx.metadata;
  if (const auto chosen = first_rank({{options.rank, "--rank"},
                                      {md.rank, "ssgd/rank mark"},
                                      {options.name_rank, "file name"}})) {
    s.rank = chosen->rank;
    s.rank_source = chosen->source;
  } else if (options.require_rank) {
    throw InputError({s.input, std::nullopt, std::nullopt, "rank"},
                     "no rank: the file has no ssgd/rank NVTX mark and its name has no number");
  } else {
    s.rank = 0;
    s.rank_source = "assumed";
    s.warnings.push_back("rank 0 assumed: no ssgd/rank NVTX mark (set it with --rank)");
  }
  s.world_size = md.world_size.value_or(0);
  if (s.world_size > 0 && s.rank >= s.world_size) {
    throw InputError({s.input, std::nullopt, std::nullopt, "rank"},
                     fmt::format("rank {} ({}) is not a rank of the world of {} (ssgd/world_size)",
                                 s.rank, s.rank_source, s.world_size));
  }
}

}  // namespace

NsysImportSummary import_nsys(const std::filesystem::path& input,
                              const std::filesystem::path& output,
                              const NsysImportOptions& options) {
  NsysImportSummary s;
  s.input = input.string();
  s.output = output.string();
  const std::string file = input.string();
  const WorkContext context("importing", file);
  std::error_code ec;
  s.file_bytes = std::filesystem::file_size(input, ec);
  if (ec) s.file_bytes = 0;

  NsysDatabase db(input);
  const NsysSchema schema = read_nsys_schema(db);
  NsysStrings strings(db);

  // Sorted runs spill beside the output (a stream: the temporary folder).
  const std::filesystem::path spill_folder = output_target(output).kind == OutputKind::kStream
                                                 ? std::filesystem::temp_directory_path()
                                                 : output.parent_path();
  EventSorter sorter(
      spill_folder / ("." + output.filename().string() + ".sort." + std::to_string(::getpid())),
      options.sort_run_bytes);
  auto add = [&](const v1::Event& e) { sorter.add(e); };

  NsysNcclRanges nccl;
  s.nvtx = read_nsys_nvtx(db, schema, strings, nccl, add);
  NsysActivityReader activity(db, schema, strings, nccl, add);
  activity.read_runtime();
  activity.read_kernels();
  activity.read_memcpys();
  activity.read_memsets();
  const NsysActivityStats& a = activity.stats();
  if (a.kernels + a.nccl_kernels == 0) {
    throw InputError({file, std::nullopt, std::nullopt, std::string(kNsysKernels)},
                     fmt::format("nothing to import: table {} has no kernels (was the report "
                                 "captured with CUDA tracing, `nsys profile -t cuda`?)",
                                 kNsysKernels));
  }
  if (a.processes.size() > 1) {
    throw InputError(
        {file, std::nullopt, std::nullopt, std::string(kNsysKernels) + ".globalPid"},
        fmt::format("the kernels are from {} processes: a file is one rank (profile "
                    "each rank to its own report, e.g. nsys profile -o rank%q{{RANK}})",
                    a.processes.size()));
  }
  identify(options, s);
  activity.finish(s.rank, s.world_size);
  s.activity = activity.stats();
  const NsysNvtxStats& n = s.nvtx;
  if (n.iteration_marks == 0 && n.layers.empty() && s.activity.collectives == 0) {
    throw InputError(
        {file, std::nullopt, std::nullopt, std::string(kNsysNvtx)},
        fmt::format("nothing to import from this export of {} kernels: no iteration (no "
                    "iteration/<N> or ProfilerStep#N NVTX range), no layer (no forward/<layer> "
                    "NVTX range) and no collective (no NCCL kernel); {} NVTX rows read",
                    s.activity.kernels, n.rows));
  }

  // Times: nsys counts from the session's start; TARGET_INFO_SESSION_START_TIME
  // puts that on the Unix epoch (CLOCK_REALTIME), else the ssgd clock mark.
  const NsysTargetInfo target = read_nsys_target_info(db, schema);
  std::int64_t base_ns = 0;
  s.clock = "REALTIME";
  if (target.session_start_utc_ns) {
    base_ns = *target.session_start_utc_ns;
    s.clock_source = std::string(kNsysSessionStart) + ".utcEpochNs";
  } else if (n.metadata.clock_realtime_ns) {
    base_ns = *n.metadata.clock_realtime_ns - n.metadata.clock_mark_ns;
    s.clock_source = "the ssgd/clock_realtime_ns mark";
  } else {
    s.clock = "UNSPECIFIED";
    s.clock_source = "no session start time or ssgd/clock_realtime_ns mark";
    s.warnings.push_back(fmt::format(
        "no {} table or ssgd/clock_realtime_ns mark: times are relative to the session's start "
        "(clock UNSPECIFIED), so ranks cannot be put on one time line",
        kNsysSessionStart));
  }
  s.hostname = n.metadata.hostname.value_or(target.hostname.value_or(""));
  s.gpus = target.gpus.size();

  v1::CaptureMetadata metadata;
  metadata.set_tool("ssgd import nsys");
  metadata.set_provenance("captured: imported from Nsight Systems " + input.filename().string());
  metadata.set_rank(s.rank);
  metadata.set_world_size(s.world_size);
  auto* host = metadata.add_hosts();
  host->set_hostname(s.hostname);
  host->mutable_clock()->set_kind(s.clock == "REALTIME" ? v1::ClockDomain::REALTIME
                                                        : v1::ClockDomain::UNSPECIFIED);
  for (const auto& gpu : target.gpus) *host->add_gpus() = gpu;

  const ImportedTrace written = write_imported_trace(
      sorter, output, metadata, file, s.rank,
      {base_ns, s.clock_source, "the session start + an event's time overflows 64-bit nanoseconds",
       fmt::format("with {} ns added from {}", base_ns, s.clock_source)});
  s.events_written = written.events_written;
  s.sort_runs = written.sort_runs;

  const auto& act = s.activity;
  if (act.collectives_unsized > 0) {
    s.warnings.push_back(fmt::format(
        "{} NCCL collective(s) without a size, replayed at their measured durations (first: {})",
        act.collectives_unsized, act.first_unsized));
  }
  if (n.metadata.collective_bytes_marks > 0) {
    s.warnings.push_back(fmt::format(
        "{} ssgd/collective_bytes mark(s) not applied: the NCCL kernels' sizes come from NCCL's "
        "NVTX ranges only",
        n.metadata.collective_bytes_marks));
  }
  if (n.metadata.collective_ranks_marks > 0) {
    s.warnings.push_back(fmt::format(
        "{} ssgd/collective_ranks mark(s) not applied: every collective is taken as the world's "
        "(nranks {}; an all-gather's or reduce-scatter's size NCCL's share times that), which a "
        "subgroup's is not",
        n.metadata.collective_ranks_marks, s.world_size));
  }
  if (act.shares_unscaled > 0) {
    s.warnings.push_back(fmt::format(
        "{} all-gather(s) and reduce-scatter(s) keep one rank's share as their size (NCCL's NVTX "
        "range gives that; a trace holds the whole buffer, the share times the ranks): the world "
        "size is unknown (no ssgd/world_size mark)",
        act.shares_unscaled));
  }
  for (const auto& c : n.metadata.conflicts) s.warnings.push_back(c);
  if (n.iteration_marks == 0) {
    s.warnings.push_back("no iteration/<N> or ProfilerStep#N NVTX ranges: no iterations");
  }
  if (n.layers.empty()) {
    s.warnings.push_back(
        "no forward/<layer> NVTX ranges: dag/trace_profile cannot build a layer profile from this "
        "trace (mark layers with tracer/python/ssgd_marks.py's NVTX backend)");
  }
  auto log = logger("traces");
  for (const auto& w : s.warnings) log->warn("{}: {}", file, w);
  return s;
}

void print_nsys_import_summary(const NsysImportSummary& s, std::ostream& out) {
  const auto& a = s.activity;
  const auto& n = s.nvtx;
  out << fmt::format("{} -> {}\n", s.input, s.output);
  out << fmt::format("  input        {} bytes, Nsight Systems SQLite export, {} NVTX rows\n",
                     s.file_bytes, n.rows);
  out << fmt::format("  rank         {} ({}), world size {}, host {}, {} GPU(s)\n", s.rank,
                     s.rank_source,
                     s.world_size > 0 ? std::to_string(s.world_size) : std::string("unknown"),
                     s.hostname.empty() ? std::string("unknown") : s.hostname, s.gpus);
  out << fmt::format("  clock        {} ({})\n", s.clock, s.clock_source);
  out << fmt::format(
      "  written      {} events: {} kernels, {} memcpys, {} memsets, {} API calls, "
      "{} collectives, {} marker ranges\n",
      s.events_written, a.kernels, a.memcpys, a.memsets, a.api_calls, a.collectives, n.markers);
  if (n.iteration_marks > 0) {
    out << fmt::format("  iterations   {} from iteration/<N> and ProfilerStep#N NVTX ranges\n",
                       n.iteration_marks);
  } else {
    out << "  iterations   none (no iteration/<N> or ProfilerStep#N NVTX range)\n";
  }
  out << fmt::format("  layers       {} layers from NVTX marks: {} forward/backward ranges\n",
                     n.layers.size(), n.layer_marks);
  out << fmt::format(
      "  collectives  {} from NCCL kernels: {} launched inside an NCCL NVTX range, {} sized "
      "from its payload, {} of unknown size\n",
      a.collectives, a.collectives_linked, a.collectives_sized, a.collectives_unsized);
  if (n.nccl_ranges > 0) {
    out << fmt::format("  NCCL ranges  {} read, {} with a message size\n", n.nccl_ranges,
                       n.nccl_ranges_sized);
  }
  const auto& md = n.metadata;
  if (md.marks > 0) {
    std::vector<std::string> more;
    if (md.collective_bytes_marks > 0) {
      more.push_back(
          fmt::format("collective_bytes ({} marks, not applied)", md.collective_bytes_marks));
    }
    out << "  metadata     " << md.summary(more) << "\n";
  }
  std::map<std::string, std::uint64_t> skipped = n.skipped;
  for (const auto& [reason, count] : a.skipped) skipped[reason] += count;
  std::uint64_t total = 0;
  for (const auto& [reason, count] : skipped) total += count;
  out << fmt::format("  skipped      {} rows\n", total);
  for (const auto& [reason, count] : skipped) out << fmt::format("    {:>10}  {}\n", count, reason);
}

}  // namespace ssgd::trace
