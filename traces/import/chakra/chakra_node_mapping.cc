#include "traces/import/chakra/chakra_node_mapping.h"

#include <array>
#include <limits>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "common/error.h"
#include "traces/event_rules.h"

namespace ssgd::trace {
namespace {

using chakra::CollectiveType;
using chakra::NodeType;

// The attributes the mapping reads, and those it knows but the replay does
// not use (ASTRA-sim's and Chakra's converter's).
constexpr std::array<std::string_view, 13> kUsed = {
    "comm_type",      "comm_size",      "comm_src",    "comm_dst",      "comm_tag",
    "is_cpu_op",      "pg_name",        "tensor_size", "ssgd_start_ns", "ssgd_duration_ns",
    "ssgd_task_kind", "ssgd_iteration", "ssgd_layer"};
constexpr std::array<std::string_view, 8> kUnused = {
    "comm_priority", "involved_dim", "num_ops", "op_type", "rf_id", "fw_parent", "seq_id", "scope"};

struct NodeContext {
  const chakra::Node& node;
  const std::string& file;
  std::int64_t record;

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError({file, std::nullopt, record, field},
                     fmt::format("node {} '{}': {}", node.id, node.name, what));
  }
  [[noreturn]] void fail_attr(std::string_view name, const std::string& what) const {
    fail(fmt::format("attr {}", name), what);
  }

  std::optional<std::int64_t> integer(std::string_view name) const {
    const chakra::Attribute* a = node.attr(name);
    if (a == nullptr) return std::nullopt;
    const auto v = a->as_int64();
    if (!v) {
      fail_attr(
          name,
          chakra::is_integer_scalar(a->type)
              ? fmt::format("{} {} is above 2^63-1", chakra::attr_type_name(a->type), a->bits)
              : fmt::format("is a {}; an integer is expected", chakra::attr_type_name(a->type)));
    }
    return v;
  }

  std::int64_t required_integer(std::string_view name, std::string_view why) const {
    auto v = integer(name);
    if (!v) fail_attr(name, fmt::format("is missing; {}", why));
    return *v;
  }

  std::string text(std::string_view name) const {
    const chakra::Attribute* a = node.attr(name);
    if (a == nullptr) return {};
    if (a->type == chakra::AttrType::kString) return a->text;
    // pg_name is a string in Chakra's converter; some writers use a number.
    if (auto v = a->as_int64()) return std::to_string(*v);
    fail_attr(name, fmt::format("is a {}; a string is expected", chakra::attr_type_name(a->type)));
  }

  std::int64_t bytes(std::string_view name, bool required) const {
    const auto v = required ? required_integer(name, "it gives the operation's bytes")
                            : integer(name).value_or(0);
    if (v < 0 || v > kMaxSizeBytes) {
      fail_attr(name, fmt::format("{} bytes is out of range (0..2^50)", v));
    }
    return v;
  }

  std::int32_t rank_attr(std::string_view name) const {
    const auto v = required_integer(name, "it names the peer rank");
    if (v < 0 || v >= kMaxRanks) {
      fail_attr(name, fmt::format("rank {} is out of range (0..2^24-1)", v));
    }
    return static_cast<std::int32_t>(v);
  }
};

// Microseconds to ns, or the ssgd attribute's ns.
std::int64_t time_ns(const NodeContext& c, std::string_view ns_attr, std::uint64_t micros,
                     std::string_view micros_field) {
  if (auto ns = c.integer(ns_attr)) {
    if (*ns < 0 || *ns > kMaxTimeNs) {
      c.fail_attr(ns_attr, fmt::format("{} ns is out of range (0..2^62)", *ns));
    }
    return *ns;
  }
  if (micros > static_cast<std::uint64_t>(kMaxTimeNs / 1000)) {
    c.fail(std::string(micros_field), fmt::format("{} us is out of range (0..2^62 ns)", micros));
  }
  return static_cast<std::int64_t>(micros) * 1000;
}

// Chakra's collective to ssgd's; nullopt for one ssgd does not model.
std::optional<v1::Collective::Op> collective_op(std::int64_t type) {
  switch (static_cast<CollectiveType>(type)) {
    case CollectiveType::kAllReduce: return v1::Collective::ALL_REDUCE;
    case CollectiveType::kReduce: return v1::Collective::REDUCE;
    case CollectiveType::kAllGather: return v1::Collective::ALL_GATHER;
    case CollectiveType::kBroadcast: return v1::Collective::BROADCAST;
    case CollectiveType::kAllToAll: return v1::Collective::ALL_TO_ALL;
    case CollectiveType::kReduceScatter: return v1::Collective::REDUCE_SCATTER;
    default: return std::nullopt;
  }
}

void count_attributes(const chakra::Node& node, ChakraMappingCounts& counts) {
  for (const auto& a : node.attrs) {
    const auto known = [&a](const auto& list) {
      for (const auto name : list) {
        if (a.name == name) return true;
      }
      return false;
    };
    if (known(kUsed)) continue;
    ++(known(kUnused) ? counts.unused_attributes : counts.unknown_attributes)[a.name];
  }
}

}  // namespace

v1::GraphNode map_chakra_node(const chakra::Node& node, const std::string& file,
                              std::int64_t record, ChakraMappingCounts& counts) {
  const NodeContext c{node, file, record};
  v1::GraphNode g;
  g.set_id(node.id);
  g.set_name(node.name);
  for (const auto d : node.data_deps) g.add_data_deps(d);
  for (const auto d : node.ctrl_deps) g.add_ctrl_deps(d);
  const std::int64_t start =
      time_ns(c, "ssgd_start_ns", node.start_time_micros, "start_time_micros");
  const std::int64_t duration =
      time_ns(c, "ssgd_duration_ns", node.duration_micros, "duration_micros");
  if (start > kMaxTimeNs - duration) {
    c.fail("duration_micros", "the node ends after 2^62 ns");
  }
  g.set_start_ns(start);
  g.set_end_ns(start + duration);
  g.set_peer(-1);
  const std::string type_name = chakra::node_type_name(node.type);
  g.set_source_type(type_name);
  ++counts.nodes_by_type[type_name];
  count_attributes(node, counts);
  if (auto on_cpu = c.integer("is_cpu_op")) g.set_on_cpu(*on_cpu != 0);
  g.set_task_kind(c.text("ssgd_task_kind"));
  g.set_iteration(-1);
  g.set_layer(-1);
  for (const auto& [attr, set] : {std::pair{"ssgd_iteration", &v1::GraphNode::set_iteration},
                                  std::pair{"ssgd_layer", &v1::GraphNode::set_layer}}) {
    if (auto v = c.integer(attr)) {
      if (*v < -1 || *v > std::numeric_limits<std::int32_t>::max()) {
        c.fail_attr(attr, fmt::format("{} is out of range (-1..2^31-1)", *v));
      }
      (g.*set)(static_cast<std::int32_t>(*v));
    }
  }
  switch (static_cast<NodeType>(node.type)) {
    case NodeType::kComp: g.set_kind(v1::GraphNode::COMPUTE); break;
    case NodeType::kCommColl: {
      g.set_kind(v1::GraphNode::COLLECTIVE);
      const auto type = c.required_integer("comm_type", "it says which collective the node is");
      if (auto op = collective_op(type)) {
        g.set_op(*op);
      } else {
        ++counts.unmodelled_collectives[chakra::collective_type_name(type)];
      }
      g.set_size_bytes(c.bytes("comm_size", true));
      g.set_group(c.text("pg_name"));
      break;
    }
    case NodeType::kCommSend:
    case NodeType::kCommRecv: {
      const bool send = static_cast<NodeType>(node.type) == NodeType::kCommSend;
      g.set_kind(send ? v1::GraphNode::SEND : v1::GraphNode::RECV);
      g.set_op(send ? v1::Collective::SEND : v1::Collective::RECV);
      g.set_peer(c.rank_attr(send ? "comm_dst" : "comm_src"));
      g.set_size_bytes(c.bytes("comm_size", true));
      if (auto tag = c.integer("comm_tag")) g.set_tag(static_cast<std::int32_t>(*tag));
      break;
    }
    case NodeType::kMemLoad:
    case NodeType::kMemStore:
      g.set_kind(v1::GraphNode::MEMORY);
      g.set_size_bytes(c.bytes("tensor_size", false));
      break;
    case NodeType::kMetadata:
    case NodeType::kInvalid: g.set_kind(v1::GraphNode::METADATA); break;
    default: g.set_kind(v1::GraphNode::UNKNOWN); ++counts.unknown_node_types;
  }
  return g;
}

}  // namespace ssgd::trace
