#pragma once
// The MLCommons Chakra execution trace (ET), as ssgd reads and writes it.
//
// Facts from mlcommons/chakra, schema/protobuf/et_def.proto (proto3, package
// ChakraProtoMsg): a Node has 1 id (uint64), 2 name, 3 type (NodeType),
// 4 ctrl_deps and 5 data_deps (repeated uint64), 6 start_time_micros and
// 7 duration_micros (uint64), 8 inputs and 9 outputs (IOInfo: 1 values,
// 2 shapes, 3 types, strings), 10 attr (repeated AttributeProto).
// GlobalMetadata has 1 version and 2 attr. AttributeProto has 1 name,
// 2 doc_string and a oneof value, fields 3..32 (attr_type below). A file
// (`<prefix>.<rank>.et`, one per rank) is a sequence of messages, each
// preceded by its length as a varint: GlobalMetadata first, then the nodes;
// no magic number; gzip allowed.
//
// Attributes are typed: the tools that read them ask for one oneof member
// (ASTRA-sim reads comm_size as an int64, and an ET that wrote it as a
// uint64 reads as 0 there; astra-sim PR #229). ssgd's reader takes any
// integer member for an integer (range-checked) and ssgd's writer writes the
// member the readers ask for (docs/chakra.md).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ssgd::chakra {

enum class NodeType : std::int32_t {
  kInvalid = 0,
  kMetadata = 1,
  kMemLoad = 2,
  kMemStore = 3,
  kComp = 4,
  kCommSend = 5,
  kCommRecv = 6,
  kCommColl = 7,
};
inline constexpr std::int32_t kNodeTypeCount = 8;
// "COMP_NODE"; "NODE_TYPE_<n>" for a value outside the enum.
std::string node_type_name(std::int32_t type);

enum class CollectiveType : std::int32_t {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};
inline constexpr std::int32_t kCollectiveTypeCount = 10;
// "ALL_REDUCE"; "COMM_TYPE_<n>" outside the enum.
std::string collective_type_name(std::int64_t type);

// The oneof member an attribute's value was written as: its field number in
// AttributeProto.
enum class AttrType : std::uint8_t {
  kNone = 0,  // no value set
  kDouble = 3,
  kDoubleList = 4,
  kFloat = 5,
  kFloatList = 6,
  kInt32 = 7,
  kInt32List = 8,
  kInt64 = 9,
  kInt64List = 10,
  kUint32 = 11,
  kUint32List = 12,
  kUint64 = 13,
  kUint64List = 14,
  kSint32 = 15,
  kSint32List = 16,
  kSint64 = 17,
  kSint64List = 18,
  kFixed32 = 19,
  kFixed32List = 20,
  kFixed64 = 21,
  kFixed64List = 22,
  kSfixed32 = 23,
  kSfixed32List = 24,
  kSfixed64 = 25,
  kSfixed64List = 26,
  kBool = 27,
  kBoolList = 28,
  kString = 29,
  kStringList = 30,
  kBytes = 31,
  kBytesList = 32,
};
// "int64_val", "bool_list"; "none" for kNone.
std::string_view attr_type_name(AttrType type);
bool is_integer_scalar(AttrType type);  // the int, uint, sint, fixed and bool scalars
bool is_list(AttrType type);

struct Attribute {
  std::string name;
  AttrType type = AttrType::kNone;
  // Integer and bool scalars: the value's 64 bits; signed types sign-extended.
  std::uint64_t bits = 0;
  double real = 0;   // double_val, float_val
  std::string text;  // string_val, bytes_val
  // Lists: integer and bool members as 64 bits each (signed ones
  // sign-extended), float members as doubles, string and bytes members.
  std::vector<std::uint64_t> list_bits;
  std::vector<double> list_reals;
  std::vector<std::string> list_texts;

  // An integer or bool scalar's value as int64; nullopt for another member
  // or an unsigned value above 2^63-1.
  [[nodiscard]] std::optional<std::int64_t> as_int64() const;

  static Attribute int64(std::string name, std::int64_t v);
  static Attribute int32(std::string name, std::int32_t v);
  static Attribute boolean(std::string name, bool v);
  static Attribute string(std::string name, std::string v);
  static Attribute bool_list(std::string name, const std::vector<bool>& v);
};

struct IoInfo {
  std::string values;
  std::string shapes;
  std::string types;
};

struct Node {
  std::uint64_t id = 0;
  std::string name;
  std::int32_t type = 0;  // a NodeType as written; may lie outside the enum
  std::vector<std::uint64_t> ctrl_deps;
  std::vector<std::uint64_t> data_deps;
  std::uint64_t start_time_micros = 0;
  std::uint64_t duration_micros = 0;
  IoInfo inputs;
  IoInfo outputs;
  std::vector<Attribute> attrs;

  // The first attribute named `name`, or null.
  [[nodiscard]] const Attribute* attr(std::string_view attr_name) const;
};

struct GlobalMetadata {
  std::string version;
  std::vector<Attribute> attrs;
};

struct ExecutionTrace {
  GlobalMetadata metadata;
  std::vector<Node> nodes;
};

}  // namespace ssgd::chakra
