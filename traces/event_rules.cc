#include "traces/event_rules.h"

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include <string_view>
#include <utility>
#include <vector>

#include "common/utf8.h"

namespace ssgd::trace {

namespace {

using Problem = std::optional<ContentProblem>;

Problem problem(std::string_view payload, std::string_view field, std::string what) {
  return ContentProblem{fmt::format("{}.{}", payload, field), std::move(what)};
}

// Whether times are checked against their range (check_event's check_times).
struct Rules {
  bool times = true;
};

Problem time_in_range(const Rules& rules, std::string_view payload, std::string_view field,
                      std::int64_t t) {
  if (rules.times && (t < 0 || t > kMaxTimeNs)) {
    return problem(payload, field, fmt::format("{} {} is out of range (0..2^62 ns)", field, t));
  }
  return std::nullopt;
}

template <typename Payload>
Problem span_in_range(const Rules& rules, std::string_view payload, const Payload& p) {
  if (auto bad = time_in_range(rules, payload, "start_ns", p.start_ns())) return bad;
  if (auto bad = time_in_range(rules, payload, "end_ns", p.end_ns())) return bad;
  if (p.end_ns() < p.start_ns()) {
    return problem(payload, "end_ns",
                   fmt::format("end_ns {} is before start_ns {}", p.end_ns(), p.start_ns()));
  }
  return std::nullopt;
}

Problem size_in_range(std::string_view payload, std::string_view field, std::int64_t bytes) {
  if (bytes < 0 || bytes > kMaxSizeBytes) {
    return problem(payload, field, fmt::format("{} {} is out of range (0..2^50)", field, bytes));
  }
  return std::nullopt;
}

Problem device_in_range(std::string_view payload, std::string_view field, std::int32_t device) {
  if (device < -1) {
    return problem(payload, field,
                   fmt::format("{} {} is out of range (-1 for the CPU, else >= 0)", field, device));
  }
  return std::nullopt;
}

Problem utf8(std::string_view payload, std::string_view field, const std::string& text) {
  if (std::string why = utf8_problem(text); !why.empty()) {
    return problem(payload, field, fmt::format("{} {}", field, why));
  }
  return std::nullopt;
}

Problem check_kernel(const Rules& rules, const v1::Kernel& k) {
  if (auto bad = span_in_range(rules, "kernel", k)) return bad;
  if (auto bad = device_in_range("kernel", "device", k.device())) return bad;
  return utf8("kernel", "name", k.name());
}

Problem check_memcpy(const Rules& rules, const v1::Memcpy& m) {
  if (auto bad = span_in_range(rules, "memcpy", m)) return bad;
  if (auto bad = size_in_range("memcpy", "size_bytes", m.size_bytes())) return bad;
  if (auto bad = device_in_range("memcpy", "device", m.device())) return bad;
  if (auto bad = device_in_range("memcpy", "src_device", m.src_device())) return bad;
  return device_in_range("memcpy", "dst_device", m.dst_device());
}

Problem check_memset(const Rules& rules, const v1::Memset& m) {
  if (auto bad = span_in_range(rules, "memset", m)) return bad;
  if (auto bad = size_in_range("memset", "size_bytes", m.size_bytes())) return bad;
  return device_in_range("memset", "device", m.device());
}

Problem check_collective(const Rules& rules, const v1::Collective& c) {
  // proto3 keeps a number its enum lacks; no consumer can tell what it was.
  if (!v1::Collective::Op_IsValid(c.op())) {
    return problem("collective", "op",
                   fmt::format("op {} is not an operation of the format (0 UNKNOWN, 1 ALL_REDUCE "
                               ".. 8 RECV: traces/proto/trace_events.proto)",
                               static_cast<int>(c.op())));
  }
  if (auto bad = span_in_range(rules, "collective", c)) return bad;
  if (auto bad = size_in_range("collective", "size_bytes", c.size_bytes())) return bad;
  if (c.count() < 0) {
    return problem("collective", "count", fmt::format("count {} is negative", c.count()));
  }
  if (c.nranks() < 0 || c.nranks() > kMaxRanks) {
    return problem("collective", "nranks",
                   fmt::format("nranks {} is out of range (0..2^24)", c.nranks()));
  }
  if (c.rank() < 0 || (c.nranks() > 0 && c.rank() >= c.nranks())) {
    return problem("collective", "rank",
                   fmt::format("rank {} is not a rank of its {} ranks", c.rank(), c.nranks()));
  }
  if (c.peer() < -1 || (c.nranks() > 0 && c.peer() >= c.nranks())) {
    return problem("collective", "peer",
                   fmt::format("peer {} is not a rank of its {} ranks", c.peer(), c.nranks()));
  }
  if (c.channels() < 0) {
    return problem("collective", "channels", fmt::format("channels {} is negative", c.channels()));
  }
  if (auto bad = device_in_range("collective", "device", c.device())) return bad;
  if (auto bad = utf8("collective", "datatype", c.datatype())) return bad;
  if (auto bad = utf8("collective", "algorithm", c.algorithm())) return bad;
  return utf8("collective", "protocol", c.protocol());
}

Problem check_marker(const Rules& rules, const v1::MarkerRange& m) {
  if (auto bad = span_in_range(rules, "marker", m)) return bad;
  if (auto bad = utf8("marker", "name", m.name())) return bad;
  return utf8("marker", "domain", m.domain());
}

Problem check_api_call(const Rules& rules, const v1::ApiCall& a) {
  if (auto bad = span_in_range(rules, "api_call", a)) return bad;
  return utf8("api_call", "name", a.name());
}

Problem check_synchronization(const Rules& rules, const v1::Synchronization& s) {
  if (auto bad = span_in_range(rules, "synchronization", s)) return bad;
  return device_in_range("synchronization", "device", s.device());
}

Problem check_cuda_event(const Rules& rules, const v1::CudaEvent& e) {
  if (auto bad = time_in_range(rules, "cuda_event", "timestamp_ns", e.timestamp_ns())) return bad;
  return device_in_range("cuda_event", "device", e.device());
}

Problem check_gpu(std::string_view where, const v1::Gpu& g) {
  if (auto bad = device_in_range(where, "device_id", g.device_id())) return bad;
  if (g.sm_count() < 0) return problem(where, "sm_count", "sm_count is negative");
  if (g.memory_bytes() < 0) return problem(where, "memory_bytes", "memory_bytes is negative");
  if (auto bad = utf8(where, "name", g.name())) return bad;
  if (auto bad = utf8(where, "uuid", g.uuid())) return bad;
  return utf8(where, "pci_bus_id", g.pci_bus_id());
}

// Every string field of `message` and the messages it holds, by reflection:
// the header is read once per file, so its cost does not matter, and no
// string field added later is forgotten.
Problem strings_are_utf8(const google::protobuf::Message& message, const std::string& path) {
  const auto* descriptor = message.GetDescriptor();
  const auto* reflection = message.GetReflection();
  using Field = google::protobuf::FieldDescriptor;
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const Field* f = descriptor->field(i);
    const std::string name = path.empty() ? f->name() : path + "." + f->name();
    if (f->is_repeated()) {
      const int n = reflection->FieldSize(message, f);
      for (int k = 0; k < n; ++k) {
        const std::string item = fmt::format("{}[{}]", name, k);
        if (f->type() == Field::TYPE_STRING) {
          const std::string s = reflection->GetRepeatedString(message, f, k);
          if (std::string why = utf8_problem(s); !why.empty()) return ContentProblem{item, why};
        } else if (f->type() == Field::TYPE_MESSAGE) {
          if (auto bad = strings_are_utf8(reflection->GetRepeatedMessage(message, f, k), item)) {
            return bad;
          }
        }
      }
    } else if (f->type() == Field::TYPE_STRING) {
      const std::string s = reflection->GetString(message, f);
      if (std::string why = utf8_problem(s); !why.empty()) return ContentProblem{name, why};
    } else if (f->type() == Field::TYPE_MESSAGE && reflection->HasField(message, f)) {
      if (auto bad = strings_are_utf8(reflection->GetMessage(message, f), name)) return bad;
    }
  }
  return std::nullopt;
}

}  // namespace

Problem check_graph_node(const Rules& rules, const v1::GraphNode& n) {
  if (auto bad = span_in_range(rules, "graph_node", n)) return bad;
  if (auto bad = size_in_range("graph_node", "size_bytes", n.size_bytes())) return bad;
  if (n.peer() < -1 || n.peer() >= kMaxRanks) {
    return problem("graph_node", "peer",
                   fmt::format("peer {} is out of range (-1 for none, else below 2^24)", n.peer()));
  }
  if (n.iteration() < -1 || n.layer() < -1) {
    return problem("graph_node", n.iteration() < -1 ? "iteration" : "layer",
                   fmt::format("{} {} is out of range (-1 for none, else >= 0)",
                               n.iteration() < -1 ? "iteration" : "layer",
                               n.iteration() < -1 ? n.iteration() : n.layer()));
  }
  if (auto bad = utf8("graph_node", "name", n.name())) return bad;
  if (auto bad = utf8("graph_node", "group", n.group())) return bad;
  if (auto bad = utf8("graph_node", "source_type", n.source_type())) return bad;
  return utf8("graph_node", "task_kind", n.task_kind());
}

std::optional<ContentProblem> check_event(const v1::Event& event, std::int32_t world_size,
                                          bool check_times) {
  const Rules rules{check_times};
  if (event.rank() < 0 || (world_size > 0 && event.rank() >= world_size)) {
    return ContentProblem{
        "rank", fmt::format("rank {} is not a rank of the world of {}", event.rank(), world_size)};
  }
  switch (event.payload_case()) {
    case v1::Event::kKernel: return check_kernel(rules, event.kernel());
    case v1::Event::kMemcpy: return check_memcpy(rules, event.memcpy());
    case v1::Event::kMemset: return check_memset(rules, event.memset());
    case v1::Event::kCollective: return check_collective(rules, event.collective());
    case v1::Event::kMarker: return check_marker(rules, event.marker());
    case v1::Event::kApiCall: return check_api_call(rules, event.api_call());
    case v1::Event::kSynchronization: return check_synchronization(rules, event.synchronization());
    case v1::Event::kCudaEvent: return check_cuda_event(rules, event.cuda_event());
    case v1::Event::kDevice: return check_gpu("device", event.device());
    case v1::Event::kGraphNode: return check_graph_node(rules, event.graph_node());
    case v1::Event::kLink:
    case v1::Event::kExternalCorrelation:
    case v1::Event::PAYLOAD_NOT_SET: break;
  }
  return std::nullopt;
}

std::optional<ContentProblem> check_metadata(const v1::CaptureMetadata& metadata) {
  if (metadata.world_size() < 0 || metadata.world_size() > kMaxRanks) {
    return ContentProblem{"world_size", fmt::format("world_size {} is out of range (0..2^24)",
                                                    metadata.world_size())};
  }
  if (metadata.rank() < 0 ||
      (metadata.world_size() > 0 && metadata.rank() >= metadata.world_size())) {
    return ContentProblem{"rank", fmt::format("rank {} is not a rank of the world of {}",
                                              metadata.rank(), metadata.world_size())};
  }
  for (int h = 0; h < metadata.hosts_size(); ++h) {
    for (int g = 0; g < metadata.hosts(h).gpus_size(); ++g) {
      if (auto bad =
              check_gpu(fmt::format("hosts[{}].gpus[{}]", h, g), metadata.hosts(h).gpus(g))) {
        return bad;
      }
    }
  }
  return strings_are_utf8(metadata, "");
}

InvalidTraceContent::InvalidTraceContent(ContentProblem problem)
    : std::invalid_argument(problem.field + ": " + problem.what), problem_(std::move(problem)) {}

}  // namespace ssgd::trace
