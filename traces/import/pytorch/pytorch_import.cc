#include "traces/import/pytorch/pytorch_import.h"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <set>

#include "common/error.h"
#include "common/logging.h"
#include "common/output_target.h"
#include "common/work_context.h"
#include "traces/event_rules.h"
#include "traces/event_sorter.h"
#include "traces/import/pytorch/kineto_json_reader.h"
#include "traces/imported_trace.h"
#include "traces/marker_names.h"

namespace ssgd::trace {
namespace {

using json = nlohmann::json;

std::optional<std::int64_t> json_int(const json& j) {
  if (j.is_number_integer()) return j.get<std::int64_t>();
  if (j.is_number_unsigned() && j.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX)) {
    return static_cast<std::int64_t>(j.get<std::uint64_t>());
  }
  return std::nullopt;
}

const json* find(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// Picks the layer source (--layers auto: what the file has) and, for
// modules and ops, derives the marks into `sorter`.
void derive_layers(KinetoLayerSource asked, KinetoLayerDeriver& deriver, EventSorter& sorter,
                   PytorchImportSummary& s) {
  const auto& m = s.mapping;
  KinetoLayerSource used = asked;
  if (asked == KinetoLayerSource::kAuto) {
    if (m.layer_annotations > 0) {
      used = KinetoLayerSource::kMarks;
      s.layer_source_reason = "the file has forward/backward annotations";
    } else if (m.module_ranges > 0) {
      used = KinetoLayerSource::kModules;
      s.layer_source_reason = "nn.Module ranges, no forward/backward annotations";
    } else {
      used = KinetoLayerSource::kOps;
      s.layer_source_reason = "no forward/backward annotations or nn.Module ranges";
    }
  }
  s.layer_source = used;
  if (used == KinetoLayerSource::kMarks) {
    s.layers.layers = m.forward_mark_names.size();
  } else {
    s.layers = deriver.derive(used, [&](const v1::Event& e) { sorter.add(e); });
    s.mapping.markers += s.layers.forward_ranges + s.layers.backward_ranges;
  }
  if (s.layers.layers == 0) {
    s.warnings.push_back(fmt::format(
        "no layers found with --layers {}: dag/trace_profile cannot build a profile from this "
        "trace ({})",
        kineto_layer_source_name(used),
        used == KinetoLayerSource::kMarks     ? "no forward/<layer> annotations"
        : used == KinetoLayerSource::kModules ? "no nn.Module ranges (profile with with_stack=True)"
                                              : "no cpu_op with a Sequence number"));
  }
  if (s.layers.backward_unmatched > 0) {
    s.warnings.push_back(fmt::format(
        "{} backward op(s) had a sequence number that no forward op of their iteration had; "
        "they are in no layer",
        s.layers.backward_unmatched));
  }
}

}  // namespace

v1::CaptureMetadata kineto_capture_metadata(const std::map<std::string, json>& top_level,
                                            const std::string& file_name, std::int32_t rank,
                                            std::int32_t world_size,
                                            std::vector<std::string>& warnings) {
  v1::CaptureMetadata m;
  m.set_tool("ssgd import kineto");
  m.set_framework("pytorch");
  m.set_provenance("captured: imported from Kineto " + file_name);
  m.set_rank(rank);
  m.set_world_size(world_size);
  auto* host = m.add_hosts();
  // Kineto's times are Unix-epoch nanoseconds (system_clock) once
  // baseTimeNanoseconds is added back.
  host->mutable_clock()->set_kind(v1::ClockDomain::REALTIME);
  if (auto it = top_level.find("distributedInfo"); it != top_level.end()) {
    if (const json* v = find(it->second, "nccl_version"); v && v->is_string() && *v != "unknown") {
      m.set_nccl_version(v->get<std::string>());
    }
  }
  if (auto it = top_level.find("deviceProperties"); it != top_level.end()) {
    if (!it->second.is_array()) {
      warnings.push_back("deviceProperties is not an array; GPUs not recorded");
    } else {
      std::size_t skipped = 0;
      for (const json& d : it->second) {
        const json* id = find(d, "id");
        if (id == nullptr || !json_int(*id)) {
          ++skipped;
          continue;
        }
        auto* gpu = host->add_gpus();
        gpu->set_device_id(static_cast<std::int32_t>(*json_int(*id)));
        if (const json* v = find(d, "name"); v && v->is_string())
          gpu->set_name(v->get<std::string>());
        auto set_int = [&](const char* key, auto setter) {
          if (const json* v = find(d, key); v) {
            if (auto i = json_int(*v)) setter(*i);
          }
        };
        set_int("totalGlobalMem", [&](std::int64_t v) { gpu->set_memory_bytes(v); });
        set_int("numSms", [&](std::int64_t v) { gpu->set_sm_count(static_cast<std::int32_t>(v)); });
        set_int("computeMajor", [&](std::int64_t v) {
          gpu->set_compute_capability_major(static_cast<std::int32_t>(v));
        });
        set_int("computeMinor", [&](std::int64_t v) {
          gpu->set_compute_capability_minor(static_cast<std::int32_t>(v));
        });
      }
      if (skipped > 0) {
        warnings.push_back(std::to_string(skipped) +
                           " deviceProperties entries without an integer id; left out");
      }
    }
  }
  return m;
}

namespace {

// Which writer the file is from, by content; an error when it is neither.
ProfilerFormat detect_format(const KinetoReadResult& read, const KinetoMappingStats& m,
                             const std::string& file) {
  if (m.kineto_events > 0) return ProfilerFormat::kKineto;
  if (m.legacy_events > 0) return ProfilerFormat::kLegacy;
  if (read.events == 0) {
    throw InputError({file, std::nullopt, std::nullopt, "traceEvents"},
                     std::string("nothing to import: ") +
                         (read.top_level_array ? "the JSON array" : "traceEvents") +
                         " holds no events");
  }
  throw InputError(
      {file, std::nullopt, std::nullopt, "traceEvents"},
      fmt::format("not a PyTorch profiler trace: none of the {} events of its {} is a complete "
                  "event (\"ph\": \"X\") with a Kineto \"cat\" or the legacy profiler's "
                  "\"pid\": \"CPU functions\"",
                  read.events, read.top_level_array ? "JSON array" : "traceEvents"));
}

// Rank, world size and host name: --rank, distributedInfo, ssgd/ marks.
void identify(const KinetoReadResult& read, const PytorchImportOptions& options,
              PytorchImportSummary& s) {
  const MetadataMarks& md = s.mapping.metadata;
  const json* dist = nullptr;
  if (auto it = read.top_level.find("distributedInfo"); it != read.top_level.end()) {
    dist = &it->second;
    if (!dist->is_object()) {
      s.warnings.push_back("distributedInfo is not an object; ignored");
      dist = nullptr;
    }
  }
  // A rank or world size that is there but impossible is an error (unless
  // --rank overrides the rank): guessing would put the events on a rank of
  // another file.
  auto bad = [&](const char* field, const json& v, const std::string& why) {
    return InputError({s.input, std::nullopt, std::nullopt, field},
                      fmt::format("{} {} {}", field, v.dump(), why));
  };
  std::optional<std::int64_t> file_rank, file_world;
  if (dist != nullptr) {
    if (const json* v = find(*dist, "world_size"); v && !v->is_null()) {
      file_world = json_int(*v);
      if (!file_world || *file_world < 1 || *file_world > kMaxRanks) {
        throw bad("distributedInfo.world_size", *v, "is not a world size (1..2^24)");
      }
    }
    if (const json* v = find(*dist, "rank"); v && !v->is_null() && !options.rank) {
      file_rank = json_int(*v);
      if (!file_rank || *file_rank < 0 || *file_rank >= file_world.value_or(kMaxRanks)) {
        throw bad("distributedInfo.rank", *v,
                  file_world ? fmt::format("is not a rank of the world of {} (set the rank "
                                           "with --rank)",
                                           *file_world)
                             : std::string("is not a rank (0..2^24 - 1; set it with --rank)"));
      }
    }
  }
  const bool dist_rank = file_rank.has_value();
  const std::optional<std::int32_t> dist_rank32 =
      file_rank ? std::optional<std::int32_t>(static_cast<std::int32_t>(*file_rank)) : std::nullopt;
  if (const auto chosen = first_rank({{options.rank, "--rank"},
                                      {dist_rank32, "distributedInfo.rank"},
                                      {md.rank, "ssgd/rank mark"},
                                      {options.name_rank, "file name"}})) {
    s.rank = chosen->rank;
    s.rank_source = chosen->source;
  } else if (options.require_rank) {
    throw InputError(
        {s.input, std::nullopt, std::nullopt, "distributedInfo.rank"},
        "the file does not say its rank (no distributedInfo, no ssgd/rank mark) and its "
        "name holds no number: import it alone with --rank");
  } else {
    s.rank = 0;
    s.rank_source = "assumed";
    s.warnings.push_back(
        "the file has no distributedInfo.rank and no ssgd/rank mark: rank 0 assumed (set it with "
        "--rank)");
  }
  if (md.rank && dist_rank && *md.rank != *file_rank) {
    s.warnings.push_back(
        fmt::format("ssgd/rank={} disagrees with distributedInfo.rank {}; distributedInfo wins{}",
                    *md.rank, *file_rank, options.rank ? " (and --rank over both)" : ""));
  }
  if (file_world) {
    s.world_size = static_cast<std::int32_t>(*file_world);
    if (md.world_size && *md.world_size != s.world_size) {
      s.warnings.push_back(fmt::format(
          "ssgd/world_size={} disagrees with distributedInfo.world_size {}; distributedInfo wins",
          *md.world_size, s.world_size));
    }
  } else if (md.world_size) {
    s.world_size = *md.world_size;
  }
  for (const auto& c : md.conflicts) s.warnings.push_back("metadata mark conflict: " + c);
  if (s.world_size > 0 && s.rank >= s.world_size) {
    const bool flag = s.rank_source == "--rank";
    throw InputError(
        {flag ? "--rank" : s.input, std::nullopt, std::nullopt, flag ? "" : s.rank_source},
        fmt::format("rank {} (from {}) is not a rank of the world of {}", s.rank, s.rank_source,
                    s.world_size));
  }
}

std::uint64_t layer_count(const PytorchImportSummary& s) {
  return s.format == ProfilerFormat::kLegacy && s.layer_source == KinetoLayerSource::kOps
             ? s.cpu.layers.layers
             : s.layers.layers;
}

// The error for a file that gives no iteration, no layer and no collective.
InputError nothing_usable(const PytorchImportSummary& s) {
  std::uint64_t skipped = 0;
  for (const auto& [reason, n] : s.mapping.skipped) skipped += n;
  return InputError(
      {s.input, std::nullopt, std::nullopt, ""},
      fmt::format(
          "nothing to import from this {} trace of {} events: no iteration (no iteration/<N> "
          "mark, ProfilerStep#N or Optimizer.step range), no layer (--layers {}: {}) and no "
          "collective (no NCCL kernel, no gloo:<op> range); {} events skipped, {} CPU ranges read",
          profiler_format_name(s.format), s.events_read, kineto_layer_source_name(s.layer_source),
          s.layer_source == KinetoLayerSource::kMarks     ? "no forward/<layer> annotation"
          : s.layer_source == KinetoLayerSource::kModules ? "no nn.Module range"
                                                          : "no operator with a backward node",
          skipped, s.mapping.cpu_ranges));
}

}  // namespace

std::string_view profiler_format_name(ProfilerFormat format) {
  switch (format) {
    case ProfilerFormat::kKineto: return "Kineto";
    case ProfilerFormat::kLegacy: return "legacy profiler";
  }
  return "?";
}

PytorchImportSummary import_pytorch(const std::filesystem::path& input,
                                    const std::filesystem::path& output,
                                    const PytorchImportOptions& options) {
  PytorchImportSummary s;
  s.input = input.string();
  s.output = output.string();
  const std::string file = input.string();
  const WorkContext context("importing", file);
  auto log = logger("traces");

  // Sort runs spill beside the output; beside a FIFO or a device written
  // through (/dev/stdout), into the temporary folder instead.
  const std::filesystem::path spill_folder = output_target(output).kind == OutputKind::kStream
                                                 ? std::filesystem::temp_directory_path()
                                                 : output.parent_path();
  auto hidden = [&](const char* what) {
    return spill_folder /
           ("." + output.filename().string() + "." + what + "." + std::to_string(::getpid()));
  };
  EventSorter sorter(hidden("sort"), options.sort_run_bytes);
  // The layer ranges are a small part of the events: a quarter of the run;
  // so are the CPU ranges of a GPU trace (a CPU trace's are most of it,
  // and still fit a quarter of the run for a file of ~100 MB).
  const std::size_t side_run = std::max<std::size_t>(options.sort_run_bytes / 4, 1);
  KinetoLayerDeriver deriver(hidden("ops"), side_run);
  CpuProfileWalk cpu(hidden("cpu"), side_run);
  KinetoEventMapper mapper({file, options.layers, [&](const KinetoHostOp& op) { deriver.add(op); },
                            [&](const CpuRange& r) { cpu.add(r); }},
                           [&](const v1::Event& e) { sorter.add(e); });
  KinetoReaderOptions reader_options;
  reader_options.on_event = [&](const KinetoEvent& e) { mapper.convert(e); };
  reader_options.progress_seconds = options.progress_seconds;
  reader_options.on_progress = [&](const KinetoReadProgress& p) {
    log->info("{}: {:.0f}% read ({} of {} MB), {} events", file,
              p.file_size > 0 ? 100.0 * static_cast<double>(p.file_bytes_read) /
                                    static_cast<double>(p.file_size)
                              : 0.0,
              p.file_bytes_read >> 20, p.file_size >> 20, p.events);
  };
  const KinetoReadResult read = read_kineto_json(input, reader_options);
  const WorkContext deriving("deriving the layers and writing the events of");
  s.file_bytes = read.file_size;
  s.json_bytes = read.uncompressed_bytes;
  s.compressed = read.compressed;
  s.events_read = read.events;
  s.format = detect_format(read, mapper.stats(), file);
  const bool legacy = s.format == ProfilerFormat::kLegacy;
  s.mapping = mapper.stats();
  identify(read, options, s);

  mapper.finish(s.rank, s.world_size);
  s.mapping = mapper.stats();
  const MetadataMarks& md = s.mapping.metadata;

  // Layers: a legacy file has no sequence numbers or module ranges; its
  // operators' layers come from the CPU walk.
  if (legacy) {
    s.layer_source = options.layers;
    if (options.layers == KinetoLayerSource::kAuto) {
      s.layer_source =
          s.mapping.layer_annotations > 0 ? KinetoLayerSource::kMarks : KinetoLayerSource::kOps;
      s.layer_source_reason = s.mapping.layer_annotations > 0
                                  ? "the file has forward/backward annotations"
                                  : "no forward/backward annotations";
    }
  }
  CpuWalkOptions walk;
  s.cpu_compute = s.mapping.gpu_events == 0;
  walk.compute = s.cpu_compute;
  walk.iterations_from_steps = s.mapping.iteration_marks == 0;
  walk.legacy_layers = legacy && s.layer_source == KinetoLayerSource::kOps;
  walk.domain = legacy ? std::string(kLegacyMarkDomain) : "kineto:cpu";
  walk.collectives.rank = s.rank;
  walk.collectives.world_size = s.world_size;
  // CUPTI's correlation ids are 32-bit: framework calls of a trace that has
  // CUDA calls take ids above them.
  walk.collectives.first_correlation_id = s.mapping.api_calls == 0 ? 1 : (std::uint64_t{1} << 32);
  walk.collectives.size_marks = md.collective_bytes;
  std::set<v1::Collective::Op> counted_groups;  // ops said to be taken as consecutive
  for (const auto& r : md.collective_ranks) {
    if (s.world_size > 0 && r.mark.ranks > s.world_size) {
      throw InputError(r.where, fmt::format("metadata mark '{}': {} ranks, above the world size {}",
                                            r.name, r.mark.ranks, s.world_size));
    }
    const auto& members = r.mark.members;
    if (!members.empty()) {
      const auto beyond = std::find_if(members.begin(), members.end(),
                                       [&](std::int32_t m) { return m >= s.world_size; });
      if (s.world_size > 0 && beyond != members.end()) {
        throw InputError(r.where, fmt::format("metadata mark '{}': rank {} is not below the world "
                                              "size {}",
                                              r.name, *beyond, s.world_size));
      }
      if (std::find(members.begin(), members.end(), s.rank) == members.end()) {
        throw InputError(r.where, fmt::format("metadata mark '{}': the group does not hold this "
                                              "file's rank {} (the mark lists the members of the "
                                              "rank's own group)",
                                              r.name, s.rank));
      }
    } else if (r.mark.ranks > 1 && r.mark.ranks < s.world_size &&
               counted_groups.insert(r.mark.op).second) {
      s.warnings.push_back(fmt::format(
          "metadata mark '{}' gives its group's size only: its ranks are taken as consecutive "
          "(this rank {} of {}: the rank mod {}) and each rank's records get a communicator of "
          "their own; where the group is strided (HSDP's replicas) list its members instead "
          "(ssgd/collective_ranks/<op>=<r0>,<r1>,...)",
          r.name, s.rank % r.mark.ranks, r.mark.ranks, r.mark.ranks));
    }
    walk.collectives.group_marks.push_back(r.mark);
  }
  s.cpu = cpu.walk(walk, [&](const v1::Event& e) { sorter.add(e); });
  s.mapping.markers +=
      s.cpu.step_iterations + s.cpu.layers.forward_ranges + s.cpu.layers.backward_ranges;
  s.mapping.kernels += s.cpu.compute.kernels;
  s.mapping.api_calls += s.cpu.collectives.framework_calls;
  s.mapping.collectives += s.cpu.collectives.collectives;
  if (s.cpu_compute && !legacy) {
    // They became kernels, not skipped events.
    s.mapping.skipped.erase("cat cpu_op (not a mark)");
  }

  if (legacy) {
    if (s.layer_source == KinetoLayerSource::kMarks) {
      s.layers.layers = s.mapping.forward_mark_names.size();
    } else if (s.layer_source == KinetoLayerSource::kModules) {
      s.warnings.push_back("--layers modules: the legacy profiler records no nn.Module ranges");
    }
  } else {
    // Without ProfilerStep#N, the iterations from Optimizer.step are the
    // derivation's steps (each clears its map of sequence numbers).
    for (std::size_t i = 0; i < s.cpu.step_spans.size(); ++i) {
      KinetoHostOp step;
      step.kind = KinetoHostOp::Kind::kStep;
      step.start_ns = s.cpu.step_spans[i].start_ns;
      step.end_ns = s.cpu.step_spans[i].end_ns;
      step.thread_id = s.cpu.step_threads[i];
      step.name = iteration_mark(static_cast<std::int64_t>(i));
      deriver.add(step);
    }
    derive_layers(options.layers, deriver, sorter, s);
  }
  if (legacy && s.layer_source == KinetoLayerSource::kOps && s.cpu.layers.layers == 0) {
    s.warnings.push_back(
        "no layers found with --layers ops: no forward operator owns a backward "
        "(autograd::engine::evaluate_function) op");
  }
  if (legacy && s.cpu.layers.backward_unmatched > 0) {
    s.warnings.push_back(fmt::format(
        "{} backward op(s) matched no forward operator of their iteration by name; they are in "
        "no layer",
        s.cpu.layers.backward_unmatched));
  }

  const std::uint64_t iterations = s.mapping.iteration_marks + s.cpu.step_iterations;
  if (iterations == 0 && layer_count(s) == 0 && s.mapping.collectives == 0) {
    throw nothing_usable(s);
  }
  if (s.cpu.step_iterations > 0) {
    s.warnings.push_back(
        fmt::format("no iteration/<N> marks or ProfilerStep#N ranges: {} iteration(s) end at each "
                    "Optimizer.step range",
                    s.cpu.step_iterations));
  }
  const auto& hc = s.cpu.collectives;
  if (const auto unsized = hc.collectives - hc.sized - hc.sized_from_shapes;
      unsized > 0 && md.collective_bytes.empty()) {
    s.warnings.push_back(fmt::format(
        "{} gloo collective(s) without sizes: no recorded shapes (record_shapes) and no "
        "ssgd/collective_bytes mark",
        unsized));
  }
  if (hc.iterations_without_size_mark > 0) {
    s.warnings.push_back(fmt::format(
        "{} iteration(s) launched collectives before any ssgd/collective_bytes mark: their sizes "
        "are 0",
        hc.iterations_without_size_mark));
  }
  for (const auto& m : hc.size_mismatches) {
    s.warnings.push_back("collective sizes left 0 for " + m);
  }
  if (hc.kind_mismatches > 0) {
    s.warnings.push_back(
        fmt::format("{} c10d call(s) ran as a gloo op of another kind by queue order; not linked",
                    hc.kind_mismatches));
  }
  if (!md.unknown_keys.empty()) {
    std::string keys;
    for (const auto& k : md.unknown_keys) keys += (keys.empty() ? "" : ", ") + k;
    s.warnings.push_back("unknown ssgd/ metadata mark key(s) kept as markers: " + keys);
  }

  // Times: Kineto's ts are relative to baseTimeNanoseconds (recent) or
  // absolute Unix-epoch microseconds (older, no base); the legacy
  // profiler's are relative to its start, put on CLOCK_REALTIME by the
  // ssgd/clock_realtime_ns mark when there is one.
  std::int64_t base_ns = 0;
  s.clock = "REALTIME";
  if (legacy) {
    if (md.clock_realtime_ns) {
      base_ns = *md.clock_realtime_ns - md.clock_mark_ns;
    } else {
      s.clock = "UNSPECIFIED";
      s.warnings.push_back(
          "no ssgd/clock_realtime_ns mark: times are relative to the profiler's start (clock "
          "UNSPECIFIED), so ranks cannot be put on one time line");
    }
  } else if (auto it = read.top_level.find("baseTimeNanoseconds"); it != read.top_level.end()) {
    const auto v = json_int(it->second);
    if (!v || *v < 0 || *v > kMaxTimeNs) {
      throw InputError({file, std::nullopt, std::nullopt, "baseTimeNanoseconds"},
                       fmt::format("baseTimeNanoseconds {} is not a time (an integer in "
                                   "0..2^62 ns)",
                                   it->second.dump()));
    }
    base_ns = *v;
  }

  v1::CaptureMetadata metadata = kineto_capture_metadata(read.top_level, input.filename().string(),
                                                         s.rank, s.world_size, s.warnings);
  if (legacy) {
    metadata.set_tool("ssgd import pytorch");
    metadata.set_provenance("captured: imported from the legacy PyTorch profiler's " +
                            input.filename().string());
    if (!md.clock_realtime_ns) {
      metadata.mutable_hosts(0)->mutable_clock()->set_kind(v1::ClockDomain::UNSPECIFIED);
    }
  }
  if (md.hostname) metadata.mutable_hosts(0)->set_hostname(*md.hostname);
  s.gpus = static_cast<std::size_t>(metadata.hosts(0).gpus_size());
  const std::string base_field = legacy ? "ssgd/clock_realtime_ns" : "baseTimeNanoseconds";
  const ImportedTrace written =
      write_imported_trace(sorter, output, metadata, file, s.rank,
                           {base_ns, base_field, base_field + " + ts overflows 64-bit nanoseconds",
                            fmt::format("with {} {} added", base_field, base_ns)});
  s.events_written = written.events_written;
  s.sort_runs = written.sort_runs;
  for (const auto& [field, n] : s.mapping.ignored_fields) {
    s.warnings.push_back(fmt::format("{} event(s) had {} of the wrong type; ignored", n, field));
  }
  if (s.mapping.collectives_without_metadata > 0) {
    s.warnings.push_back(fmt::format(
        "{} NCCL kernel(s) had no collective metadata (count, dtype, group) on the kernel or a "
        "record_param_comms op: sizes unknown",
        s.mapping.collectives_without_metadata));
  }
  if (s.mapping.collectives_unknown_dtype > 0) {
    s.warnings.push_back(fmt::format(
        "{} NCCL kernel(s) had an element count but a dtype of unknown size (first: {}): sizes "
        "unknown",
        s.mapping.collectives_unknown_dtype, s.mapping.first_unknown_dtype));
  }
  if (s.mapping.sharding_collectives_without_size > 0) {
    s.warnings.push_back(fmt::format(
        "{} all-gather(s) or reduce-scatter(s) had no element count (first: {}): sizes unknown, "
        "so the sharded profile cannot give their units' gradient bytes",
        s.mapping.sharding_collectives_without_size,
        s.mapping.first_sharding_collective_without_size));
  }
  for (const auto& w : s.warnings) log->warn("{}: {}", file, w);
  return s;
}

void print_pytorch_import_summary(const PytorchImportSummary& s, std::ostream& out) {
  const auto& m = s.mapping;
  const bool legacy = s.format == ProfilerFormat::kLegacy;
  out << fmt::format("{} -> {}\n", s.input, s.output);
  out << fmt::format("  input        {} bytes{}, {} events in {}\n", s.file_bytes,
                     s.compressed ? fmt::format(" (gzip, {} bytes of JSON)", s.json_bytes) : "",
                     s.events_read, legacy ? "a JSON array" : "traceEvents");
  out << fmt::format("  format       {}\n",
                     legacy ? "legacy PyTorch profiler (torch <= 1.13 without Kineto, or "
                              "use_kineto=False)"
                            : "Kineto (torch.profiler)");
  out << fmt::format("  rank         {} ({}), world size {}, {} GPU(s)\n", s.rank, s.rank_source,
                     s.world_size > 0 ? std::to_string(s.world_size) : std::string("unknown"),
                     s.gpus);
  if (legacy) {
    out << fmt::format("  clock        {}\n",
                       s.clock == "REALTIME" ? "REALTIME, from the ssgd/clock_realtime_ns mark"
                                             : "UNSPECIFIED: relative to the profiler's start (no "
                                               "ssgd/clock_realtime_ns mark)");
  }
  out << fmt::format(
      "  written      {} events: {} kernels, {} memcpys, {} memsets, {} API calls, "
      "{} collectives, {} marker ranges\n",
      s.events_written, m.kernels, m.memcpys, m.memsets, m.api_calls, m.collectives, m.markers);
  const auto& c = s.cpu;
  if (c.step_iterations > 0) {
    out << fmt::format(
        "  iterations   {} from Optimizer.step ranges (no iteration/<N> marks or "
        "ProfilerStep#N)\n",
        c.step_iterations);
  } else if (m.iteration_marks > 0) {
    out << fmt::format("  iterations   {} from iteration/<N> and ProfilerStep#N marks\n",
                       c.iterations);
  } else {
    out << "  iterations   none (no iteration/<N> mark, ProfilerStep#N or Optimizer.step range)\n";
  }
  if (s.cpu_compute && m.cpu_ranges > 0) {
    out << fmt::format(
        "  CPU compute  {} kernels on device -1, one per outermost operator of a "
        "thread (or its pieces around a wait); not written: {} nested operators, {} inside "
        "communication\n",
        c.compute.kernels, c.compute.nested_operators, c.compute.under_communication);
    if (c.compute.waits > 0) {
      out << fmt::format(
          "               {} wait(s) for a collective inside {} operator(s) cut out, {:.3f} ms "
          "in all (not compute: the thread waited, docs/kineto.md)\n",
          c.compute.waits, c.compute.operators_cut, static_cast<double>(c.compute.wait_ns) / 1e6);
    }
  }
  const std::uint64_t layers =
      legacy && s.layer_source == KinetoLayerSource::kOps ? c.layers.layers : s.layers.layers;
  out << fmt::format(
      "  layers       {} layers from {}{}", layers, kineto_layer_source_name(s.layer_source),
      s.layer_source_reason.empty() ? std::string() : " (auto: " + s.layer_source_reason + ")");
  if (s.layer_source == KinetoLayerSource::kMarks) {
    out << "\n";
  } else if (legacy) {
    const auto& l = c.layers;
    out << fmt::format(
        ": {} forward and {} backward ranges, backward ops matched to forward "
        "operators by name\n",
        l.forward_ranges, l.backward_ranges);
    if (l.backward_unmatched > 0) {
      out << fmt::format("    {:>10}  backward op(s) that matched no forward operator\n",
                         l.backward_unmatched);
    }
    if (l.accumulate_grad > 0) {
      out << fmt::format("    {:>10}  AccumulateGrad op(s), in no layer\n", l.accumulate_grad);
    }
    if (l.forward_ops_without_backward > 0) {
      out << fmt::format("    {:>10}  top-level forward op(s) without a backward op, not layers\n",
                         l.forward_ops_without_backward);
    }
  } else {
    const auto& l = s.layers;
    out << fmt::format(": {} forward and {} backward ranges\n", l.forward_ranges,
                       l.backward_ranges);
    if (l.containers > 0) {
      out << fmt::format("    {:>10}  module(s) holding other modules, not layers\n", l.containers);
    }
    if (l.backward_unmatched > 0) {
      out << fmt::format("    {:>10}  backward op(s) with a sequence number no forward op had\n",
                         l.backward_unmatched);
    }
    if (l.backward_outside_layers > 0) {
      out << fmt::format("    {:>10}  backward op(s) of forward ops outside every layer\n",
                         l.backward_outside_layers);
    }
    if (m.backward_ops_without_sequence > 0) {
      out << fmt::format("    {:>10}  backward op(s) without a sequence number (AccumulateGrad)\n",
                         m.backward_ops_without_sequence);
    }
  }
  if (m.sharding_ranges > 0) {
    out << fmt::format(
        "  sharding     {} {} ranges kept as marker ranges (units, gathers, "
        "reductions)\n",
        m.sharding_ranges, m.fsdp2_ranges > 0 ? "FSDP2 (FSDP::)" : "FSDP1");
  }
  if (m.collectives_numbered > 0) {
    out << fmt::format("  collectives  {} without a Seq arg, numbered by start time\n",
                       m.collectives_numbered);
  }
  const auto& h = c.collectives;
  if (h.collectives + h.framework_calls + h.barriers > 0) {
    std::string sizes;
    if (h.sized_from_shapes > 0)
      sizes = fmt::format("{} from recorded shapes", h.sized_from_shapes);
    if (h.sized > 0 || !m.metadata.collective_bytes.empty()) {
      sizes +=
          fmt::format("{}{} from ssgd/collective_bytes marks", sizes.empty() ? "" : ", ", h.sized);
      std::vector<std::string> per_op;
      for (const auto& [op, n] : h.sized_per_op) per_op.push_back(fmt::format("{} {}", n, op));
      if (!per_op.empty()) {
        sizes += fmt::format(" (of them by op, ssgd/collective_bytes/<op>: {})",
                             fmt::join(per_op, ", "));
      }
    }
    if (sizes.empty()) sizes = "none (no recorded shapes or ssgd/collective_bytes mark)";
    out << fmt::format(
        "  gloo         {} collectives, {} c10d calls (FRAMEWORK API calls), {} "
        "linked by queue order; sizes: {}\n",
        h.collectives, h.framework_calls, h.linked, sizes);
    auto line = [&](std::uint64_t n, const char* what) {
      if (n > 0) out << fmt::format("    {:>10}  {}\n", n, what);
    };
    line(h.barriers, "barrier(s): no collective");
    line(h.kind_mismatches, "call(s) run as a gloo op of another kind: not linked");
    line(h.calls_without_execution, "c10d call(s) without a gloo op (the profile stopped first)");
    line(h.executions_without_call, "gloo op(s) without a c10d call (the profile started later)");
    line(h.unknown_ops, "collective(s) of an op the trace has no name for (gather, scatter)");
    for (const auto& [what, n] : h.grouped) {
      line(n, fmt::format("{} (ssgd/collective_ranks): a communicator of their own", what).c_str());
    }
  }
  if (h.other_backend_calls > 0) {
    out << fmt::format(
        "  c10d         {} call(s) of kinds no gloo range ran (another backend's): "
        "left out\n",
        h.other_backend_calls);
  }
  const auto& md = m.metadata;
  if (md.marks > 0) {
    std::vector<std::string> more;
    const auto per_op = static_cast<std::size_t>(
        std::count_if(md.collective_bytes.begin(), md.collective_bytes.end(),
                      [](const CollectiveSizesMark& b) { return b.op.has_value(); }));
    if (per_op < md.collective_bytes.size()) {
      more.push_back(
          fmt::format("collective_bytes ({} marks)", md.collective_bytes.size() - per_op));
    }
    if (per_op > 0) more.push_back(fmt::format("collective_bytes/<op> ({} marks)", per_op));
    if (!md.collective_ranks.empty()) {
      more.push_back(fmt::format("collective_ranks/<op> ({} marks)", md.collective_ranks.size()));
    }
    if (!md.grad_bytes.empty()) {
      more.push_back(
          fmt::format("grad_bytes of {} layers (kept as markers)", md.grad_bytes.size()));
    }
    out << "  metadata     " << md.summary(more) << "\n";
  }
  std::uint64_t skipped = 0;
  for (const auto& [reason, n] : m.skipped) skipped += n;
  out << fmt::format("  skipped      {} events\n", skipped);
  for (const auto& [reason, n] : m.skipped) out << fmt::format("    {:>10}  {}\n", n, reason);
}

}  // namespace ssgd::trace
