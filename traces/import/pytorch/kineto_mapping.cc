#include "traces/import/pytorch/kineto_mapping.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <tuple>
#include <utility>
#include <variant>

#include "common/checked_math.h"
#include "common/error.h"
#include "traces/collective_names.h"
#include "traces/collective_records.h"
#include "traces/datatype_names.h"
#include "traces/event_rules.h"
#include "traces/marker_names.h"
#include "traces/torch_op_names.h"

namespace ssgd::trace {

// The NCCL metadata of one collective, from the args PyTorch's c10d writes
// on its record_param_comms op and Kineto copies onto the NCCL kernel.
struct KinetoEventMapper::CommsMeta {
  bool present = false;         // has "Collective name" or "In msg nelems"
  std::string collective_name;  // c10d's name: "allreduce", "_allgather_base", ...
  std::string dtype;            // c10 ScalarType name: "Float", "BFloat16", ...
  std::optional<std::int64_t> in_nelems, out_nelems, group_size, rank, seq, peer;
  std::string pg_name;  // "Process Group Name", e.g. "0"
  std::string ranks;    // "Process Group Ranks" without spaces, e.g. "[0,1]"
};

struct KinetoEventMapper::PendingCollective {
  std::uint64_t index = 0;  // in traceEvents
  v1::Collective collective;
  NcclKernelName from_name;
  std::optional<std::int64_t> external_id;
  CommsMeta meta;
};

namespace {

std::string without_spaces(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != ' ') out += c;
  }
  return out;
}

// The number of ranks in "[0,1,2]"; nullopt when truncated ("...") or empty.
std::optional<std::int64_t> count_ranks(const std::string& ranks) {
  if (ranks.size() < 3 || ranks.find("...") != std::string::npos) return std::nullopt;
  return static_cast<std::int64_t>(std::count(ranks.begin(), ranks.end(), ',')) + 1;
}

// The position of `rank` in "[0,1,2]", or nullopt.
std::optional<std::int64_t> index_in_ranks(const std::string& ranks, std::int64_t rank) {
  std::int64_t i = 0;
  const char* p = ranks.data() + 1;
  const char* end = ranks.data() + ranks.size();
  while (p < end) {
    std::int64_t v = 0;
    auto [q, ec] = std::from_chars(p, end, v);
    if (ec != std::errc()) return std::nullopt;
    if (v == rank) return i;
    ++i;
    p = q + 1;  // past the ',' (or the closing ']')
  }
  return std::nullopt;
}

std::string value_text(const KinetoValue& v) {
  if (v.type == KinetoValue::Type::kString || v.is_number()) return v.text;
  if (v.type == KinetoValue::Type::kIntArray) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.ints.size(); ++i) {
      if (i > 0) s += ",";
      s += std::to_string(v.ints[i]);
    }
    return s + "]";
  }
  return "";
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

std::uint64_t kineto_communicator_id(std::string_view key) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

KinetoEventMapper::KinetoEventMapper(KinetoMappingOptions options, Emit emit)
    : options_(std::move(options)), emit_(std::move(emit)) {}

KinetoEventMapper::~KinetoEventMapper() = default;

namespace {

[[noreturn]] void bad_field(const std::string& file, const KinetoEvent& e, std::string_view field,
                            std::string_view what, const std::string& problem) {
  std::string label(what);
  if (e.name.type == KinetoValue::Type::kString) label += " '" + e.name.text + "'";
  throw InputError({file, std::nullopt, static_cast<std::int64_t>(e.index),
                    "traceEvents[" + std::to_string(e.index) + "]." + std::string(field)},
                   label + ": " + problem);
}

}  // namespace

void KinetoEventMapper::emit(std::uint64_t index, const v1::Event& event) {
  if (auto broken = check_event(event, 0, /*check_times=*/false)) {
    throw InputError({options_.file, std::nullopt, static_cast<std::int64_t>(index),
                      fmt::format("traceEvents[{}] as {}", index, broken->field)},
                     broken->what);
  }
  emit_(event);
}

KinetoEventMapper::Times KinetoEventMapper::times(const KinetoEvent& e,
                                                  std::string_view what) const {
  auto read = [&](const KinetoValue& v, std::string_view field) -> std::int64_t {
    if (!v.present()) bad_field(options_.file, e, field, what, "has no '" + std::string(field) + "'");
    std::optional<std::int64_t> ns;
    if (v.is_number()) ns = parse_microseconds_ns(v.text);
    if (!ns) {
      bad_field(options_.file, e, field, what,
                "'" + std::string(field) + "' is not a number of microseconds" +
                    (v.type == KinetoValue::Type::kString ? " (it is the string \"" + v.text + "\")"
                                                          : ""));
    }
    return *ns;
  };
  const std::int64_t ts = read(e.ts, "ts");
  const std::int64_t dur = read(e.dur, "dur");
  if (dur < 0) bad_field(options_.file, e, "dur", what, "'dur' is negative (" + e.dur.text + ")");
  const std::int64_t start = ts;
  if (start > std::numeric_limits<std::int64_t>::max() - dur) {
    bad_field(options_.file, e, "dur", what, "ts + dur overflows 64-bit nanoseconds");
  }
  return {start, start + dur};
}

std::string KinetoEventMapper::required_string(const KinetoEvent& e, const KinetoValue& v,
                                               std::string_view field,
                                               std::string_view what) const {
  if (!v.present()) bad_field(options_.file, e, field, what, "has no '" + std::string(field) + "'");
  if (v.type != KinetoValue::Type::kString) {
    bad_field(options_.file, e, field, what, "'" + std::string(field) + "' is not a string");
  }
  return v.text;
}

std::optional<std::int64_t> KinetoEventMapper::optional_int(const KinetoEvent& e,
                                                            std::string_view key,
                                                            std::string_view what) {
  const KinetoValue& v = e.arg(key);
  if (!v.present() || v.type == KinetoValue::Type::kNull) return std::nullopt;
  if (auto i = v.as_int()) return i;
  ++stats_.ignored_fields[std::string(what) + " args." + std::string(key)];
  return std::nullopt;
}

void KinetoEventMapper::convert(const KinetoEvent& e) {
  if (!e.ph.present()) {
    throw InputError({options_.file, std::nullopt, static_cast<std::int64_t>(e.index),
                      "traceEvents[" + std::to_string(e.index) + "].ph"},
                     "event has no 'ph' (phase)");
  }
  if (e.ph.type != KinetoValue::Type::kString) {
    throw InputError({options_.file, std::nullopt, static_cast<std::int64_t>(e.index),
                      "traceEvents[" + std::to_string(e.index) + "].ph"},
                     "'ph' is not a string");
  }
  if (e.ph.text != "X") {
    skip("ph " + e.ph.text + " (not a complete event)");
    return;
  }
  if (!e.cat.present() && e.pid.type == KinetoValue::Type::kString) {
    legacy_event(e);
    return;
  }
  if (e.cat.type != KinetoValue::Type::kString) {
    skip(e.cat.present() ? "cat of the wrong type" : "no cat");
    return;
  }
  ++stats_.kineto_events;
  const std::string& cat = e.cat.text;
  // Kineto's category names (ActivityType.cpp), and the capitalised names
  // of PyTorch 1.8-1.9 traces.
  if (cat == "kernel" || cat == "Kernel") {
    kernel(e);
  } else if (cat == "gpu_memcpy" || cat == "Memcpy") {
    memcpy(e);
  } else if (cat == "gpu_memset" || cat == "Memset") {
    memset(e);
  } else if (cat == "cuda_runtime" || cat == "Runtime") {
    api_call(e, false);
  } else if (cat == "cuda_driver") {
    api_call(e, true);
  } else if (cat == "cpu_op" || cat == "Operator" || cat == "user_annotation" ||
             cat == "python_function") {
    host_range(e, cat);
  } else {
    skip("cat " + cat);
  }
}

void KinetoEventMapper::kernel(const KinetoEvent& e) {
  const std::string name = required_string(e, e.name, "name", "kernel");
  const Times t = times(e, "kernel");
  ++stats_.gpu_events;
  if (is_nccl_kernel(name)) {
    nccl_kernel(e, name, t);
    return;
  }
  event_.Clear();
  auto* k = event_.mutable_kernel();
  k->set_name(name);
  k->set_device(static_cast<std::int32_t>(
      optional_int(e, "device", "kernel").value_or(e.pid.as_int().value_or(0))));
  k->set_stream(static_cast<std::uint32_t>(
      optional_int(e, "stream", "kernel").value_or(e.tid.as_int().value_or(0))));
  k->set_start_ns(t.start_ns);
  k->set_end_ns(t.end_ns);
  k->set_correlation_id(static_cast<std::uint64_t>(optional_int(e, "correlation", "kernel").value_or(0)));
  auto dims = [&](std::string_view key, auto set) {
    const KinetoValue& v = e.arg(key);
    if (!v.present()) return;
    if (v.type != KinetoValue::Type::kIntArray || v.ints.size() != 3) {
      ++stats_.ignored_fields["kernel args." + std::string(key)];
      return;
    }
    set(v.ints);
  };
  dims("grid", [&](const std::vector<std::int64_t>& d) {
    k->set_grid_x(static_cast<std::int32_t>(d[0]));
    k->set_grid_y(static_cast<std::int32_t>(d[1]));
    k->set_grid_z(static_cast<std::int32_t>(d[2]));
  });
  dims("block", [&](const std::vector<std::int64_t>& d) {
    k->set_block_x(static_cast<std::int32_t>(d[0]));
    k->set_block_y(static_cast<std::int32_t>(d[1]));
    k->set_block_z(static_cast<std::int32_t>(d[2]));
  });
  ++stats_.kernels;
  emit(e.index, event_);
}

KinetoEventMapper::CommsMeta KinetoEventMapper::comms_meta(const KinetoEvent& e,
                                                           std::string_view what) {
  CommsMeta m;
  const KinetoValue& name = e.arg("Collective name");
  if (name.type == KinetoValue::Type::kString) m.collective_name = name.text;
  const KinetoValue& dtype = e.arg("dtype");
  if (dtype.type == KinetoValue::Type::kString) m.dtype = dtype.text;
  m.in_nelems = optional_int(e, "In msg nelems", what);
  m.out_nelems = optional_int(e, "Out msg nelems", what);
  m.group_size = optional_int(e, "Group size", what);
  m.rank = optional_int(e, "Rank", what);
  m.seq = optional_int(e, "Seq", what);
  if (!m.seq) m.seq = optional_int(e, "seq", what);
  m.pg_name = value_text(e.arg("Process Group Name"));
  m.ranks = without_spaces(value_text(e.arg("Process Group Ranks")));
  m.peer = optional_int(e, "Dst Rank", what);
  if (!m.peer) m.peer = optional_int(e, "Src Rank", what);
  m.present = !m.collective_name.empty() || m.in_nelems.has_value();
  // Checked where they are read, on the op or the kernel that carries them.
  auto in_range = [&](const std::optional<std::int64_t>& v, std::string_view key, std::int64_t lo,
                      std::int64_t hi, const char* meaning) {
    if (v && (*v < lo || *v > hi)) {
      bad_field(options_.file, e, "args." + std::string(key), what,
                fmt::format("'{}' {} is not {}", key, *v, meaning));
    }
  };
  in_range(m.in_nelems, "In msg nelems", 0, kMaxSizeBytes, "a message size (0..2^50 elements)");
  in_range(m.out_nelems, "Out msg nelems", 0, kMaxSizeBytes, "a message size (0..2^50 elements)");
  in_range(m.group_size, "Group size", 1, kMaxRanks, "a group size (1..2^24)");
  in_range(m.rank, "Rank", 0, kMaxRanks - 1, "a rank");
  in_range(m.peer, "Dst Rank", 0, kMaxRanks - 1, "a peer rank");
  return m;
}

void KinetoEventMapper::nccl_kernel(const KinetoEvent& e, const std::string& name, Times t) {
  PendingCollective p;
  p.index = e.index;
  auto& c = p.collective;
  c.set_start_ns(t.start_ns);
  c.set_end_ns(t.end_ns);
  c.set_device(static_cast<std::int32_t>(
      optional_int(e, "device", "kernel").value_or(e.pid.as_int().value_or(0))));
  c.set_stream(static_cast<std::uint32_t>(
      optional_int(e, "stream", "kernel").value_or(e.tid.as_int().value_or(0))));
  c.set_correlation_id(
      static_cast<std::uint64_t>(optional_int(e, "correlation", "kernel").value_or(0)));
  p.from_name = parse_nccl_kernel_name(name);
  p.external_id = optional_int(e, "External id", "kernel");
  p.meta = comms_meta(e, "kernel");
  pending_.push_back(std::move(p));
}

void KinetoEventMapper::memcpy(const KinetoEvent& e) {
  ++stats_.gpu_events;
  const std::string name = required_string(e, e.name, "name", "memcpy");
  const Times t = times(e, "memcpy");
  event_.Clear();
  auto* m = event_.mutable_memcpy();
  // Kineto names a copy "Memcpy <kind> (<src memory> -> <dst memory>)".
  std::string_view kind(name);
  if (starts_with(kind, "Memcpy ")) kind.remove_prefix(7);
  kind = kind.substr(0, kind.find(' '));
  const std::int32_t device = static_cast<std::int32_t>(
      optional_int(e, "device", "memcpy")
          .value_or(optional_int(e, "inDevice", "memcpy").value_or(e.pid.as_int().value_or(0))));
  m->set_device(device);
  if (kind == "HtoD") {
    m->set_kind(v1::Memcpy::HTOD);
    m->set_src_device(-1);
    m->set_dst_device(device);
  } else if (kind == "DtoH") {
    m->set_kind(v1::Memcpy::DTOH);
    m->set_src_device(device);
    m->set_dst_device(-1);
  } else if (kind == "DtoD") {
    m->set_kind(v1::Memcpy::DTOD);
    m->set_src_device(device);
    m->set_dst_device(device);
  } else if (kind == "HtoH") {
    m->set_kind(v1::Memcpy::HTOH);
    m->set_src_device(-1);
    m->set_dst_device(-1);
  } else if (kind == "PtoP") {
    m->set_kind(v1::Memcpy::PTOP);
    m->set_src_device(static_cast<std::int32_t>(optional_int(e, "fromDevice", "memcpy").value_or(device)));
    m->set_dst_device(static_cast<std::int32_t>(optional_int(e, "toDevice", "memcpy").value_or(device)));
  } else {
    ++stats_.skipped["memcpy kind '" + std::string(kind) + "' recorded as UNKNOWN"];
  }
  m->set_size_bytes(optional_int(e, "bytes", "memcpy").value_or(0));
  m->set_stream(static_cast<std::uint32_t>(
      optional_int(e, "stream", "memcpy").value_or(e.tid.as_int().value_or(0))));
  m->set_start_ns(t.start_ns);
  m->set_end_ns(t.end_ns);
  m->set_correlation_id(static_cast<std::uint64_t>(optional_int(e, "correlation", "memcpy").value_or(0)));
  ++stats_.memcpys;
  emit(e.index, event_);
}

void KinetoEventMapper::memset(const KinetoEvent& e) {
  ++stats_.gpu_events;
  required_string(e, e.name, "name", "memset");
  const Times t = times(e, "memset");
  event_.Clear();
  auto* m = event_.mutable_memset();
  m->set_device(static_cast<std::int32_t>(
      optional_int(e, "device", "memset").value_or(e.pid.as_int().value_or(0))));
  m->set_stream(static_cast<std::uint32_t>(
      optional_int(e, "stream", "memset").value_or(e.tid.as_int().value_or(0))));
  m->set_start_ns(t.start_ns);
  m->set_end_ns(t.end_ns);
  m->set_size_bytes(optional_int(e, "bytes", "memset").value_or(0));
  m->set_correlation_id(static_cast<std::uint64_t>(optional_int(e, "correlation", "memset").value_or(0)));
  ++stats_.memsets;
  emit(e.index, event_);
}

void KinetoEventMapper::api_call(const KinetoEvent& e, bool driver) {
  ++stats_.gpu_events;
  const char* what = driver ? "cuda_driver" : "cuda_runtime";
  const std::string name = required_string(e, e.name, "name", what);
  const Times t = times(e, what);
  event_.Clear();
  auto* a = event_.mutable_api_call();
  a->set_api(driver ? v1::ApiCall::DRIVER : v1::ApiCall::RUNTIME);
  a->set_name(name);
  a->set_thread_id(static_cast<std::uint64_t>(std::max<std::int64_t>(0, e.tid.as_int().value_or(0))));
  a->set_start_ns(t.start_ns);
  a->set_end_ns(t.end_ns);
  a->set_correlation_id(static_cast<std::uint64_t>(optional_int(e, "correlation", what).value_or(0)));
  ++stats_.api_calls;
  emit(e.index, event_);
}

bool KinetoEventMapper::wants_host_ops() const {
  if (!options_.on_host_op) return false;
  switch (options_.layers) {
    case KinetoLayerSource::kMarks: return false;
    case KinetoLayerSource::kAuto: return stats_.layer_annotations == 0;
    default: return true;
  }
}

void KinetoEventMapper::host_op(const KinetoEvent& e, KinetoHostOp::Kind kind, std::string name,
                                std::int64_t sequence_number) {
  if (!wants_host_ops()) return;
  // Not an error when a range nothing else needs has bad times: it just
  // gives no layer.
  std::optional<std::int64_t> ts, dur;
  if (e.ts.is_number()) ts = parse_microseconds_ns(e.ts.text);
  if (e.dur.is_number()) dur = parse_microseconds_ns(e.dur.text);
  if (!ts || !dur || *dur < 0 || *ts > std::numeric_limits<std::int64_t>::max() - *dur) {
    skip("range without valid ts/dur (not used for layers)");
    return;
  }
  KinetoHostOp op;
  op.kind = kind;
  op.start_ns = *ts;
  op.end_ns = *ts + *dur;
  op.thread_id = static_cast<std::uint64_t>(std::max<std::int64_t>(0, e.tid.as_int().value_or(0)));
  op.sequence_number = sequence_number;
  op.name = std::move(name);
  options_.on_host_op(op);
}

void KinetoEventMapper::host_range(const KinetoEvent& e, const std::string& cat) {
  const std::string name = required_string(e, e.name, "name", cat == kLegacyCat ? "event" : cat);
  const bool legacy = cat == kLegacyCat;
  if (name == "record_param_comms") {
    CommsMeta m = comms_meta(e, "record_param_comms");
    const auto ext = optional_int(e, "External id", "record_param_comms");
    if (m.present && ext) {
      param_comms_[*ext] = std::move(m);
    } else {
      skip("record_param_comms without External id or metadata");
    }
    cpu_range(e, CpuRange::Kind::kCommunication, name);
    return;
  }
  if (is_metadata_mark(name)) {
    metadata_mark(e, name, cat);
    return;
  }
  // FSDP's ranges say where each sharding unit's parameters are gathered
  // and its gradients reduced: kept, name unchanged, for walk/trace_walk.h.
  if (!legacy && cat != "python_function" && parse_sharding_range(name)) {
    ++stats_.sharding_ranges;
    if (name.starts_with("FSDP::")) ++stats_.fsdp2_ranges;
    marker(e, name, cat);
    return;
  }
  const bool derive = options_.layers == KinetoLayerSource::kModules ||
                      options_.layers == KinetoLayerSource::kOps;
  if (is_profiler_step_range(name)) {
    const auto step = profiler_step_number(name);
    if (!step) {
      skip("ProfilerStep# without a step number");
      return;
    }
    host_op(e, KinetoHostOp::Kind::kStep, name, -1);
    cpu_range(e, CpuRange::Kind::kAnnotation, name);
    ++stats_.iteration_marks;
    marker(e, iteration_mark(*step), cat);
  } else if (starts_with(name, kIterationMarkPrefix)) {
    cpu_range(e, CpuRange::Kind::kAnnotation, name);
    ++stats_.iteration_marks;
    marker(e, name, cat);
  } else if (starts_with(name, kForwardMarkPrefix) || starts_with(name, kBackwardMarkPrefix)) {
    if (derive) {
      skip("forward/backward annotation (--layers " +
           std::string(kineto_layer_source_name(options_.layers)) + ")");
      return;
    }
    ++stats_.layer_annotations;
    if (starts_with(name, kForwardMarkPrefix)) {
      stats_.forward_mark_names.insert(name.substr(kForwardMarkPrefix.size()));
    }
    marker(e, name, cat);
  } else if (const auto module = module_range_name(name)) {
    ++stats_.module_ranges;
    if (options_.layers != KinetoLayerSource::kMarks) {
      host_op(e, KinetoHostOp::Kind::kModule, std::string(*module), -1);
      skip("nn.Module range (read for layers)");
      return;
    }
    stats_.forward_mark_names.insert(std::string(*module));
    marker(e, forward_mark(*module), cat);
  } else if (legacy) {
    // No categories: communication, then annotations (no "::"), then operators.
    if (is_communication_op(name)) {
      cpu_range(e, CpuRange::Kind::kCommunication, name);
    } else if (is_legacy_annotation(name)) {
      if (is_optimizer_range(name)) cpu_range(e, CpuRange::Kind::kAnnotation, name);
    } else {
      cpu_range(e, CpuRange::Kind::kOperator, name);
    }
  } else {
    if (cat == "cpu_op" || cat == "Operator") {
      // PyTorch writes both args only when the op has a sequence number
      // (>= 0); the records of backward nodes (scope BACKWARD_FUNCTION)
      // have a forward thread id > 0, forward ops 0.
      const auto seq = optional_int(e, "Sequence number", "cpu_op");
      if (backward_node_name(name)) {
        if (seq && *seq >= 0) {
          ++stats_.sequence_ops;
          host_op(e, KinetoHostOp::Kind::kBackwardOp, name, *seq);
        } else {
          ++stats_.backward_ops_without_sequence;
        }
      } else if (seq && *seq >= 0 && optional_int(e, "Fwd thread id", "cpu_op").value_or(0) == 0) {
        ++stats_.sequence_ops;
        host_op(e, KinetoHostOp::Kind::kForwardOp, name, *seq);
      }
      // A GPU trace's compute is its kernels: CPU operators are read only
      // until the first one.
      if (is_communication_op(name)) {
        cpu_range(e, CpuRange::Kind::kCommunication, name);
      } else if (stats_.gpu_events == 0) {
        cpu_range(e, CpuRange::Kind::kOperator, name);
      }
    } else if (is_communication_op(name)) {
      // gloo:<op> is a user_annotation (RecordScope::USER_SCOPE).
      cpu_range(e, CpuRange::Kind::kCommunication, name);
    } else if (is_optimizer_range(name)) {
      cpu_range(e, CpuRange::Kind::kAnnotation, name);
    }
    skip("cat " + cat + " (not a mark)");
  }
}

void KinetoEventMapper::marker(const KinetoEvent& e, const std::string& name,
                               const std::string& cat) {
  const Times t = times(e, cat == kLegacyCat ? "event" : cat);
  event_.Clear();
  auto* m = event_.mutable_marker();
  m->set_name(name);
  m->set_domain(cat == kLegacyCat ? std::string(kLegacyMarkDomain) : "kineto:" + cat);
  m->set_thread_id(static_cast<std::uint64_t>(std::max<std::int64_t>(0, e.tid.as_int().value_or(0))));
  m->set_start_ns(t.start_ns);
  m->set_end_ns(t.end_ns);
  ++stats_.markers;
  emit(e.index, event_);
}

void KinetoEventMapper::metadata_mark(const KinetoEvent& e, const std::string& name,
                                      const std::string& cat) {
  const auto index = static_cast<std::int64_t>(e.index);
  const MetadataMark parsed = parse_metadata_mark(
      name,
      {options_.file, std::nullopt, index, "traceEvents[" + std::to_string(index) + "].name"});
  MetadataMarks& md = stats_.metadata;
  if (md.take(parsed, name, fmt::format("event {}", index),
              [&] { return times(e, "metadata mark").start_ns; })) {
    return;
  }
  if (const auto* b = std::get_if<CollectiveBytesMark>(&parsed)) {
    md.collective_bytes.push_back({times(e, "metadata mark").start_ns, b->sizes_bytes, b->op});
    return;
  }
  if (const auto* r = std::get_if<CollectiveRanksMark>(&parsed)) {
    md.collective_ranks.push_back(
        {{times(e, "metadata mark").start_ns, r->op, r->ranks, r->members},
         name,
         {options_.file, std::nullopt, index, "traceEvents[" + std::to_string(index) + "].name"}});
    return;
  }
  if (const auto* g = std::get_if<GradBytesMark>(&parsed)) {
    // Every one is kept: the helper's first marks may precede a whole
    // iteration (before it knows which modules run), and the walker takes
    // the latest of each layer (walk/trace_walk.h).
    md.grad_bytes.emplace(g->layer, g->bytes);
  }
  marker(e, name, cat);  // grad_bytes, activation_bytes, and unknown keys
}

void KinetoEventMapper::cpu_range(const KinetoEvent& e, CpuRange::Kind kind,
                                  const std::string& name) {
  if (!options_.on_cpu_range) return;
  // Not an error when a range nothing else needs has bad times: it is left
  // out (and counted).
  std::optional<std::int64_t> ts, dur;
  if (e.ts.is_number()) ts = parse_microseconds_ns(e.ts.text);
  if (e.dur.is_number()) dur = parse_microseconds_ns(e.dur.text);
  if (!ts || !dur || *dur < 0 || *ts > std::numeric_limits<std::int64_t>::max() - *dur) {
    skip("CPU range without valid ts/dur");
    return;
  }
  CpuRange r;
  r.kind = kind;
  r.start_ns = *ts;
  r.end_ns = *ts + *dur;
  r.thread_id = static_cast<std::uint64_t>(std::max<std::int64_t>(0, e.tid.as_int().value_or(0)));
  r.name = name;
  if (kind == CpuRange::Kind::kCommunication) recorded_tensors(e, r);
  ++stats_.cpu_ranges;
  options_.on_cpu_range(r);
}

void KinetoEventMapper::recorded_tensors(const KinetoEvent& e, CpuRange& r) {
  // With record_shapes, Kineto writes each input's dims ("Input Dims":
  // [[321271]]) and type ("Input type": ["float"]); non-tensor inputs have
  // empty dims and an empty or non-tensor type, and add nothing.
  const KinetoValue& dims = e.arg("Input Dims");
  const KinetoValue& types = e.arg("Input type");
  if (dims.type != KinetoValue::Type::kIntArrays || types.type != KinetoValue::Type::kStringArray ||
      dims.lengths.size() != types.strings.size()) {
    return;
  }
  std::int64_t bytes = 0, count = 0;
  std::string datatype;
  bool mixed = false;
  std::size_t at = 0;
  for (std::size_t i = 0; i < dims.lengths.size(); ++i) {
    std::int64_t n = 1;
    bool valid = dims.lengths[i] > 0;  // a tensor has at least one dim here
    for (std::size_t d = 0; d < dims.lengths[i]; ++d) {
      const std::int64_t v = dims.ints[at + d];
      if (v < 0 || (v > 0 && n > std::numeric_limits<std::int64_t>::max() / v)) valid = false;
      n = valid ? n * v : 0;
    }
    at += dims.lengths[i];
    const std::string_view type = datatype_from_torch_type(types.strings[i]);
    const std::int64_t size = datatype_size_bytes(type);
    if (!valid || size == 0) continue;
    if (!datatype.empty() && datatype != type) mixed = true;
    datatype = std::string(type);
    count += n;
    bytes += n * size;
  }
  r.size_bytes = bytes;
  r.count = count;
  r.datatype = mixed ? std::string() : datatype;
}

void KinetoEventMapper::legacy_event(const KinetoEvent& e) {
  // torch.autograd.profiler's export_chrome_trace writes "CPU functions"
  // (and "CUDA functions" for kernels); its C++ RecordProfile "CPU Functions".
  const std::string& pid = e.pid.text;
  // The legacy profiler's times count from its own start: nothing it
  // records begins before 0. A negative ts (-5e12 us is 58 days before) is
  // from another clock, and would put the event, with the clock mark's
  // base added, weeks away from the rest of the capture.
  if (pid == "CPU functions" || pid == "CPU Functions" || pid == "CUDA functions") {
    if (e.ts.is_number()) {
      if (const auto ts = parse_microseconds_ns(e.ts.text); ts && *ts < 0) {
        bad_field(options_.file, e, "ts", "legacy profiler event",
                  fmt::format("ts {} us is before the profiler's start (its times count from 0)",
                              e.ts.text));
      }
    }
  }
  if (pid == "CPU functions" || pid == "CPU Functions") {
    ++stats_.legacy_events;
    // A remote event's tid is a string (" node_id:1, thread_id:2 "): thread 0.
    if (e.tid.present() && !e.tid.as_int()) ++stats_.ignored_fields["legacy event tid"];
    host_range(e, std::string(kLegacyCat));
  } else if (pid == "CUDA functions") {
    ++stats_.legacy_events;
    const std::string name = required_string(e, e.name, "name", "kernel");
    const Times t = times(e, "kernel");
    ++stats_.gpu_events;
    event_.Clear();
    auto* k = event_.mutable_kernel();
    k->set_name(name);
    k->set_device(
        static_cast<std::int32_t>(e.tid.as_int().value_or(0)));  // the legacy writer's tid
    k->set_start_ns(t.start_ns);
    k->set_end_ns(t.end_ns);
    ++stats_.kernels;
    emit(e.index, event_);
  } else {
    skip("no cat");
  }
}

void KinetoEventMapper::finish(std::int32_t rank_in_world, std::int32_t world_size) {
  // Join metadata, then fill each collective.
  std::map<std::string, std::vector<std::size_t>> unnumbered;  // communicator key -> indices
  std::vector<std::string> keys(pending_.size());
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    auto& p = pending_[i];
    // Kineto copies only some of record_param_comms's args onto the kernel
    // (none before PyTorch 2.1, no Rank): fill what the kernel lacks from
    // the op it was launched under.
    if (p.external_id) {
      if (auto it = param_comms_.find(*p.external_id); it != param_comms_.end()) {
        const CommsMeta& op = it->second;
        CommsMeta& k = p.meta;
        if (k.collective_name.empty()) k.collective_name = op.collective_name;
        if (k.dtype.empty()) k.dtype = op.dtype;
        if (k.pg_name.empty()) k.pg_name = op.pg_name;
        if (k.ranks.empty()) k.ranks = op.ranks;
        for (auto [mine, theirs] : {std::pair{&k.in_nelems, &op.in_nelems},
                                    {&k.out_nelems, &op.out_nelems}, {&k.group_size, &op.group_size},
                                    {&k.rank, &op.rank}, {&k.seq, &op.seq}, {&k.peer, &op.peer}}) {
          if (!*mine) *mine = *theirs;
        }
        k.present = k.present || op.present;
      }
    }
    const CommsMeta& m = p.meta;
    auto& c = p.collective;
    if (!m.present) ++stats_.collectives_without_metadata;
    v1::Collective::Op op = p.from_name.op;
    if (op == v1::Collective::UNKNOWN) op = collective_op_from_c10d(m.collective_name);
    c.set_op(op);
    std::string dtype(datatype_from_c10(m.dtype));
    if (dtype.empty()) dtype = p.from_name.datatype;
    c.set_datatype(dtype);
    // An all-gather's and a reduce-scatter's size is their whole buffer,
    // the gathered output and the unreduced input (nccl-tests' convention,
    // docs/sharding.md): the larger of c10d's two counts.
    std::optional<std::int64_t> nelems = m.in_nelems;
    const char* nelems_field = "In msg nelems";
    const std::int64_t nranks =
        (m.group_size ? m.group_size : count_ranks(m.ranks)).value_or(world_size);
    if (op == v1::Collective::ALL_GATHER || op == v1::Collective::REDUCE_SCATTER) {
      if (m.out_nelems && (!nelems || *m.out_nelems > *nelems)) {
        nelems = m.out_nelems;
        nelems_field = "Out msg nelems";
      }
      // Only the share's count (an all-gather's input, a reduce-scatter's
      // output): the whole buffer is that times the group.
      const bool share_only = op == v1::Collective::ALL_GATHER ? !m.out_nelems : !m.in_nelems;
      if (share_only && nelems && nranks > 1) {
        const auto whole = checked_mul(*nelems, nranks);
        if (!whole || *whole > kMaxSizeBytes) {
          throw InputError(
              {options_.file, std::nullopt, static_cast<std::int64_t>(p.index),
               fmt::format("traceEvents[{}].args.{}", p.index, nelems_field)},
              fmt::format("NCCL kernel: {} elements times {} ranks exceed 2^50", *nelems, nranks));
        }
        nelems = whole;
      }
    }
    const std::int64_t element_bytes = datatype_size_bytes(dtype);
    if (nelems && element_bytes == 0) {
      // A count without a known element size has no size: said, not guessed.
      if (stats_.collectives_unknown_dtype++ == 0) {
        stats_.first_unknown_dtype = fmt::format(
            "traceEvents[{}].args.dtype: '{}'", p.index,
            m.dtype.empty() ? std::string("(none, and none in the kernel's name)") : m.dtype);
      }
    } else if (nelems) {  // 0..2^50 (comms_meta); the bytes too
      const auto bytes = checked_mul(*nelems, element_bytes);
      if (!bytes || *bytes > kMaxSizeBytes) {
        throw InputError({options_.file, std::nullopt, static_cast<std::int64_t>(p.index),
                          fmt::format("traceEvents[{}].args.{}", p.index, nelems_field)},
                         fmt::format("NCCL kernel: {} elements of {} exceed 2^50 bytes",
                                     *nelems, dtype));
      }
      c.set_count(*nelems);
      c.set_size_bytes(*bytes);
    } else if (op == v1::Collective::ALL_GATHER || op == v1::Collective::REDUCE_SCATTER) {
      // Sharded runs are read from these sizes (walk/trace_profile.h).
      if (stats_.sharding_collectives_without_size++ == 0) {
        stats_.first_sharding_collective_without_size =
            fmt::format("traceEvents[{}].args.In msg nelems", p.index);
      }
    }
    c.set_algorithm(p.from_name.algorithm);
    c.set_protocol(p.from_name.protocol);
    c.set_nranks(static_cast<std::int32_t>(nranks));
    std::optional<std::int64_t> rank = m.rank;
    if (!rank && !m.ranks.empty()) rank = index_in_ranks(m.ranks, rank_in_world);
    c.set_rank(static_cast<std::int32_t>(rank.value_or(rank_in_world)));
    if ((op == v1::Collective::SEND || op == v1::Collective::RECV) && m.peer) {
      c.set_peer(static_cast<std::int32_t>(*m.peer));
    }
    keys[i] = !m.pg_name.empty() ? "pg:" + m.pg_name
              : !m.ranks.empty() ? "ranks:" + m.ranks
                                 : std::string("world");
    c.set_communicator_id(kineto_communicator_id(keys[i]));
    if (m.seq) {
      c.set_sequence_number(static_cast<std::uint64_t>(*m.seq));
    } else {
      unnumbered[keys[i]].push_back(i);
    }
  }
  // Collectives without a sequence number: numbered 0, 1, ... per
  // communicator in order of start time, which is the order NCCL runs them
  // on one communicator (one stream).
  for (auto& [key, idx] : unnumbered) {
    std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
      const auto& x = pending_[a].collective;
      const auto& y = pending_[b].collective;
      return std::make_tuple(x.start_ns(), x.end_ns(), x.stream(), x.correlation_id()) <
             std::make_tuple(y.start_ns(), y.end_ns(), y.stream(), y.correlation_id());
    });
    for (std::size_t n = 0; n < idx.size(); ++n) {
      pending_[idx[n]].collective.set_sequence_number(n);
      ++stats_.collectives_numbered;
    }
  }
  // Two kernels with one sequence number (a file with an event repeated)
  // would be one collective counted twice (traces/collective_records.h).
  CollectiveRecordSet numbered;
  for (auto& p : pending_) {
    try {
      numbered.add(p.collective, {options_.file, std::nullopt,
                                  static_cast<std::int64_t>(p.index), ""});
    } catch (const InputError& twice) {
      throw InputError({options_.file, std::nullopt, static_cast<std::int64_t>(p.index),
                        fmt::format("traceEvents[{}].args.Seq", p.index)},
                       "NCCL kernel: " + twice.reason());
    }
  }
  for (auto& p : pending_) {
    event_.Clear();
      *event_.mutable_collective() = std::move(p.collective);
    ++stats_.collectives;
    emit(p.index, event_);
  }
  pending_.clear();
  param_comms_.clear();
}

}  // namespace ssgd::trace
