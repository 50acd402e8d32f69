#include "traces/kineto_import.h"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "common/error.h"
#include "common/logging.h"
#include "traces/event_sorter.h"
#include "traces/kineto_json_reader.h"
#include "traces/trace_writer.h"

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

// Adds `base_ns` to every time of an event the mapper makes.
bool shift(v1::Event& e, std::int64_t base_ns) {
  auto add = [&](auto* m) {
    std::int64_t s = 0, t = 0;
    if (__builtin_add_overflow(m->start_ns(), base_ns, &s) ||
        __builtin_add_overflow(m->end_ns(), base_ns, &t)) {
      return false;
    }
    m->set_start_ns(s);
    m->set_end_ns(t);
    return true;
  };
  switch (e.payload_case()) {
    case v1::Event::kKernel: return add(e.mutable_kernel());
    case v1::Event::kMemcpy: return add(e.mutable_memcpy());
    case v1::Event::kMemset: return add(e.mutable_memset());
    case v1::Event::kCollective: return add(e.mutable_collective());
    case v1::Event::kMarker: return add(e.mutable_marker());
    case v1::Event::kApiCall: return add(e.mutable_api_call());
    default: return true;
  }
}

// Picks the layer source (--layers auto: what the file has) and, for
// modules and ops, derives the marks into `sorter`.
void derive_layers(KinetoLayerSource asked, KinetoLayerDeriver& deriver, EventSorter& sorter,
                   KinetoImportSummary& s) {
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
        if (const json* v = find(d, "name"); v && v->is_string()) gpu->set_name(v->get<std::string>());
        auto set_int = [&](const char* key, auto setter) {
          if (const json* v = find(d, key); v) {
            if (auto i = json_int(*v)) setter(*i);
          }
        };
        set_int("totalGlobalMem", [&](std::int64_t v) { gpu->set_memory_bytes(v); });
        set_int("numSms", [&](std::int64_t v) { gpu->set_sm_count(static_cast<std::int32_t>(v)); });
        set_int("computeMajor",
                [&](std::int64_t v) { gpu->set_compute_capability_major(static_cast<std::int32_t>(v)); });
        set_int("computeMinor",
                [&](std::int64_t v) { gpu->set_compute_capability_minor(static_cast<std::int32_t>(v)); });
      }
      if (skipped > 0) {
        warnings.push_back(std::to_string(skipped) + " deviceProperties entries without an integer id; left out");
      }
    }
  }
  return m;
}

KinetoImportSummary import_kineto(const std::filesystem::path& input,
                                  const std::filesystem::path& output,
                                  const KinetoImportOptions& options) {
  KinetoImportSummary s;
  s.input = input.string();
  s.output = output.string();
  const std::string file = input.string();
  auto log = logger("traces");

  const auto spill_dir = output.parent_path() / ("." + output.filename().string() + ".sort." +
                                                 std::to_string(::getpid()));
  EventSorter sorter(spill_dir, options.sort_run_bytes);
  // The layer ranges are a small part of the events: a quarter of the run.
  KinetoLayerDeriver deriver(output.parent_path() / ("." + output.filename().string() + ".ops." +
                                                     std::to_string(::getpid())),
                             std::max<std::size_t>(options.sort_run_bytes / 4, 1));
  KinetoEventMapper mapper({file, options.layers, [&](const KinetoHostOp& op) { deriver.add(op); }},
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
  s.file_bytes = read.file_size;
  s.json_bytes = read.uncompressed_bytes;
  s.compressed = read.compressed;
  s.events_read = read.events;

  // Who this file is: distributedInfo, wherever it was in the file.
  const json* dist = nullptr;
  if (auto it = read.top_level.find("distributedInfo"); it != read.top_level.end()) {
    dist = &it->second;
    if (!dist->is_object()) {
      s.warnings.push_back("distributedInfo is not an object; ignored");
      dist = nullptr;
    }
  }
  std::optional<std::int64_t> file_rank, file_world;
  if (dist != nullptr) {
    if (const json* v = find(*dist, "rank"); v) file_rank = json_int(*v);
    if (const json* v = find(*dist, "world_size"); v) file_world = json_int(*v);
  }
  if (options.rank) {
    s.rank = *options.rank;
    s.rank_source = "--rank";
  } else if (file_rank && *file_rank >= 0 && *file_rank <= INT32_MAX) {
    s.rank = static_cast<std::int32_t>(*file_rank);
    s.rank_source = "distributedInfo.rank";
  } else {
    s.rank = 0;
    s.rank_source = "assumed";
    s.warnings.push_back("the file has no distributedInfo.rank: rank 0 assumed (set it with --rank)");
  }
  if (file_world && *file_world > 0 && *file_world <= INT32_MAX) {
    s.world_size = static_cast<std::int32_t>(*file_world);
  }
  mapper.finish(s.rank, s.world_size);
  s.mapping = mapper.stats();
  derive_layers(options.layers, deriver, sorter, s);

  // Recent Kineto writes ts relative to baseTimeNanoseconds; older Kineto
  // writes absolute Unix-epoch microseconds and no base.
  std::int64_t base_ns = 0;
  if (auto it = read.top_level.find("baseTimeNanoseconds"); it != read.top_level.end()) {
    if (auto v = json_int(it->second)) {
      base_ns = *v;
    } else {
      throw InputError({file, std::nullopt, std::nullopt, "baseTimeNanoseconds"},
                       "baseTimeNanoseconds is not an integer");
    }
  }

  v1::CaptureMetadata metadata = kineto_capture_metadata(
      read.top_level, input.filename().string(), s.rank, s.world_size, s.warnings);
  s.gpus = static_cast<std::size_t>(metadata.hosts(0).gpus_size());
  TraceWriter writer(output, metadata);
  sorter.write_to(writer, [&](v1::Event& e) {
    e.set_rank(s.rank);
    if (!shift(e, base_ns)) {
      throw InputError({file, std::nullopt, std::nullopt, "baseTimeNanoseconds"},
                       "baseTimeNanoseconds + ts overflows 64-bit nanoseconds");
    }
  });
  writer.close();
  s.events_written = writer.footer().event_count();
  s.sort_runs = sorter.runs_spilled();
  for (const auto& [field, n] : s.mapping.ignored_fields) {
    s.warnings.push_back(fmt::format("{} event(s) had {} of the wrong type; ignored", n, field));
  }
  if (s.mapping.collectives_without_metadata > 0) {
    s.warnings.push_back(fmt::format(
        "{} NCCL kernel(s) had no collective metadata (count, dtype, group) on the kernel or a "
        "record_param_comms op: sizes unknown",
        s.mapping.collectives_without_metadata));
  }
  for (const auto& w : s.warnings) log->warn("{}: {}", file, w);
  return s;
}

void print_kineto_import_summary(const KinetoImportSummary& s, std::ostream& out) {
  const auto& m = s.mapping;
  out << fmt::format("{} -> {}\n", s.input, s.output);
  out << fmt::format("  input        {} bytes{}, {} events in traceEvents\n", s.file_bytes,
                     s.compressed ? fmt::format(" (gzip, {} bytes of JSON)", s.json_bytes) : "",
                     s.events_read);
  out << fmt::format("  rank         {} ({}), world size {}, {} GPU(s)\n", s.rank, s.rank_source,
                     s.world_size > 0 ? std::to_string(s.world_size) : std::string("unknown"),
                     s.gpus);
  out << fmt::format("  written      {} events: {} kernels, {} memcpys, {} memsets, {} API calls, "
                     "{} collectives, {} marker ranges\n",
                     s.events_written, m.kernels, m.memcpys, m.memsets, m.api_calls,
                     m.collectives, m.markers);
  out << fmt::format("  layers       {} layers from {}{}", s.layers.layers,
                     kineto_layer_source_name(s.layer_source),
                     s.layer_source_reason.empty() ? std::string()
                                                   : " (auto: " + s.layer_source_reason + ")");
  if (s.layer_source == KinetoLayerSource::kMarks) {
    out << "\n";
  } else {
    const auto& l = s.layers;
    out << fmt::format(": {} forward and {} backward ranges\n", l.forward_ranges, l.backward_ranges);
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
  if (m.collectives_numbered > 0) {
    out << fmt::format("  collectives  {} without a Seq arg, numbered by start time\n",
                       m.collectives_numbered);
  }
  std::uint64_t skipped = 0;
  for (const auto& [reason, n] : m.skipped) skipped += n;
  out << fmt::format("  skipped      {} events\n", skipped);
  for (const auto& [reason, n] : m.skipped) out << fmt::format("    {:>10}  {}\n", n, reason);
}

}  // namespace ssgd::trace
