#include "traces/chakra/chakra_et.h"

#include <array>
#include <limits>

#include <fmt/format.h>

namespace ssgd::chakra {

std::string node_type_name(std::int32_t type) {
  static constexpr std::array<const char*, kNodeTypeCount> kNames = {
      "INVALID_NODE", "METADATA_NODE",  "MEM_LOAD_NODE",  "MEM_STORE_NODE",
      "COMP_NODE",    "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE"};
  if (type >= 0 && type < kNodeTypeCount) return kNames[static_cast<std::size_t>(type)];
  return fmt::format("NODE_TYPE_{}", type);
}

std::string collective_type_name(std::int64_t type) {
  static constexpr std::array<const char*, kCollectiveTypeCount> kNames = {
      "ALL_REDUCE", "REDUCE",         "ALL_GATHER",           "GATHER", "SCATTER", "BROADCAST",
      "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER"};
  if (type >= 0 && type < kCollectiveTypeCount) return kNames[static_cast<std::size_t>(type)];
  return fmt::format("COMM_TYPE_{}", type);
}

std::string_view attr_type_name(AttrType type) {
  switch (type) {
    case AttrType::kNone: return "none";
    case AttrType::kDouble: return "double_val";
    case AttrType::kDoubleList: return "double_list";
    case AttrType::kFloat: return "float_val";
    case AttrType::kFloatList: return "float_list";
    case AttrType::kInt32: return "int32_val";
    case AttrType::kInt32List: return "int32_list";
    case AttrType::kInt64: return "int64_val";
    case AttrType::kInt64List: return "int64_list";
    case AttrType::kUint32: return "uint32_val";
    case AttrType::kUint32List: return "uint32_list";
    case AttrType::kUint64: return "uint64_val";
    case AttrType::kUint64List: return "uint64_list";
    case AttrType::kSint32: return "sint32_val";
    case AttrType::kSint32List: return "sint32_list";
    case AttrType::kSint64: return "sint64_val";
    case AttrType::kSint64List: return "sint64_list";
    case AttrType::kFixed32: return "fixed32_val";
    case AttrType::kFixed32List: return "fixed32_list";
    case AttrType::kFixed64: return "fixed64_val";
    case AttrType::kFixed64List: return "fixed64_list";
    case AttrType::kSfixed32: return "sfixed32_val";
    case AttrType::kSfixed32List: return "sfixed32_list";
    case AttrType::kSfixed64: return "sfixed64_val";
    case AttrType::kSfixed64List: return "sfixed64_list";
    case AttrType::kBool: return "bool_val";
    case AttrType::kBoolList: return "bool_list";
    case AttrType::kString: return "string_val";
    case AttrType::kStringList: return "string_list";
    case AttrType::kBytes: return "bytes_val";
    case AttrType::kBytesList: return "bytes_list";
  }
  return "unknown";
}

bool is_integer_scalar(AttrType type) {
  switch (type) {
    case AttrType::kInt32:
    case AttrType::kInt64:
    case AttrType::kUint32:
    case AttrType::kUint64:
    case AttrType::kSint32:
    case AttrType::kSint64:
    case AttrType::kFixed32:
    case AttrType::kFixed64:
    case AttrType::kSfixed32:
    case AttrType::kSfixed64:
    case AttrType::kBool: return true;
    default: return false;
  }
}

bool is_list(AttrType type) {
  const auto n = static_cast<int>(type);
  return n >= 4 && n % 2 == 0;
}

namespace {
bool is_unsigned_64(AttrType type) {
  return type == AttrType::kUint64 || type == AttrType::kFixed64;
}
}  // namespace

std::optional<std::int64_t> Attribute::as_int64() const {
  if (!is_integer_scalar(type)) return std::nullopt;
  if (is_unsigned_64(type) &&
      bits > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(bits);
}

Attribute Attribute::int64(std::string name, std::int64_t v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kInt64;
  a.bits = static_cast<std::uint64_t>(v);
  return a;
}

Attribute Attribute::int32(std::string name, std::int32_t v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kInt32;
  a.bits = static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
  return a;
}

Attribute Attribute::boolean(std::string name, bool v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kBool;
  a.bits = v ? 1 : 0;
  return a;
}

Attribute Attribute::string(std::string name, std::string v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kString;
  a.text = std::move(v);
  return a;
}

Attribute Attribute::bool_list(std::string name, const std::vector<bool>& v) {
  Attribute a;
  a.name = std::move(name);
  a.type = AttrType::kBoolList;
  for (const bool b : v) a.list_bits.push_back(b ? 1 : 0);
  return a;
}

const Attribute* Node::attr(std::string_view attr_name) const {
  for (const auto& a : attrs) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

}  // namespace ssgd::chakra
