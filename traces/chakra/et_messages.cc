#include "traces/chakra/et_messages.h"

#include <bit>
#include <exception>

#include <fmt/format.h>

#include "common/utf8.h"
#include "traces/chakra/protobuf_wire.h"

namespace ssgd::chakra {

MessageError::MessageError(std::string field, std::size_t offset, const std::string& what)
    : std::runtime_error(fmt::format("{}: {} (byte {})", field, what, offset)),
      field_(std::move(field)),
      offset_(offset),
      reason_(what) {}

namespace {

// The field being decoded, for messages: "Node.attr[2].int64_val".
class FieldPath {
 public:
  explicit FieldPath(std::string root) : path_(std::move(root)) {}
  [[nodiscard]] const std::string& str() const { return path_; }
  // Appends ".name" for the life of the returned guard; when that life ends
  // by an exception the part stays, so the handler sees the field that failed.
  class Guard {
   public:
    Guard(FieldPath& p, std::string_view part)
        : p_(p), size_(p.path_.size()), exceptions_(std::uncaught_exceptions()) {
      p.path_ += part;
    }
    ~Guard() {
      if (std::uncaught_exceptions() == exceptions_) p_.path_.resize(size_);
    }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    FieldPath& p_;
    std::size_t size_;
    int exceptions_;
  };
  Guard enter(std::string_view part) { return Guard(*this, part); }

 private:
  std::string path_;
};

[[noreturn]] void fail(const FieldPath& path, std::size_t offset, const std::string& what) {
  throw MessageError(path.str(), offset, what);
}

void expect_type(const FieldPath& path, std::size_t offset, FieldTag tag, WireType want) {
  if (tag.type != want) {
    fail(path, offset,
         fmt::format("field {} has wire type {}, but the schema gives it wire type {}", tag.number,
                     static_cast<int>(tag.type), static_cast<int>(want)));
  }
}

std::string utf8_string(const FieldPath& path, std::size_t offset, std::string_view bytes) {
  if (auto problem = utf8_problem(bytes); !problem.empty()) fail(path, offset, problem);
  return std::string(bytes);
}

// A string field: length-delimited, valid UTF-8.
std::string string_field(WireReader& in, const FieldPath& path, std::size_t at, FieldTag tag) {
  expect_type(path, at, tag, WireType::kLength);
  const std::size_t text_at = in.offset();
  return utf8_string(path, text_at, in.length_delimited());
}

// A length-delimited field's bytes and the offset where they start.
std::pair<std::string_view, std::size_t> sub_message(WireReader& in) {
  const std::string_view bytes = in.length_delimited();
  return {bytes, in.offset() - bytes.size()};
}

// Wire type and decoding of one scalar member of the AttributeProto oneof,
// or of one element of its list twin.
WireType scalar_wire_type(AttrType scalar) {
  switch (scalar) {
    case AttrType::kDouble:
    case AttrType::kFixed64:
    case AttrType::kSfixed64: return WireType::kFixed64;
    case AttrType::kFloat:
    case AttrType::kFixed32:
    case AttrType::kSfixed32: return WireType::kFixed32;
    case AttrType::kString:
    case AttrType::kBytes: return WireType::kLength;
    default: return WireType::kVarint;
  }
}

std::uint64_t sign_extend_32(std::uint64_t v) {
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(
      static_cast<std::int32_t>(static_cast<std::uint32_t>(v & 0xffffffffu))));
}

// The 64 bits of an integer or bool scalar read off the wire.
std::uint64_t integer_bits(AttrType scalar, WireReader& in) {
  switch (scalar) {
    case AttrType::kInt32: return sign_extend_32(in.varint());
    case AttrType::kInt64: return in.varint();
    case AttrType::kUint32: return in.varint() & 0xffffffffu;
    case AttrType::kUint64: return in.varint();
    case AttrType::kSint32: {
      const auto n = static_cast<std::uint32_t>(in.varint() & 0xffffffffu);
      const auto v = static_cast<std::int32_t>((n >> 1) ^ (0u - (n & 1u)));
      return static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
    }
    case AttrType::kSint64: return static_cast<std::uint64_t>(zigzag_decode(in.varint()));
    case AttrType::kFixed32: return in.fixed32();
    case AttrType::kFixed64: return in.fixed64();
    case AttrType::kSfixed32: return sign_extend_32(in.fixed32());
    case AttrType::kSfixed64: return in.fixed64();
    case AttrType::kBool: return in.varint() != 0 ? 1 : 0;
    default: return 0;
  }
}

double real_value(AttrType scalar, WireReader& in) {
  if (scalar == AttrType::kDouble) return std::bit_cast<double>(in.fixed64());
  return static_cast<double>(std::bit_cast<float>(in.fixed32()));
}

bool is_real(AttrType scalar) { return scalar == AttrType::kDouble || scalar == AttrType::kFloat; }
bool is_text(AttrType scalar) { return scalar == AttrType::kString || scalar == AttrType::kBytes; }

// One element of a list, appended to `a`.
void list_element(Attribute& a, AttrType scalar, WireReader& in, const FieldPath& path) {
  if (is_real(scalar)) {
    a.list_reals.push_back(real_value(scalar, in));
  } else if (is_text(scalar)) {
    const std::size_t at = in.offset();
    const std::string_view bytes = in.length_delimited();
    a.list_texts.push_back(scalar == AttrType::kString ? utf8_string(path, at, bytes)
                                                       : std::string(bytes));
  } else {
    a.list_bits.push_back(integer_bits(scalar, in));
  }
}

void decode_list(Attribute& a, AttrType scalar, std::string_view bytes, std::size_t base,
                 FieldPath& path, DecodeCounts& counts) {
  WireReader in(bytes, base);
  while (!in.done()) {
    const std::size_t at = in.offset();
    const FieldTag tag = in.tag();
    if (tag.number != 1) {
      ++counts.unknown_fields;
      in.skip(tag.type);
      continue;
    }
    const auto guard = path.enter(".values");
    const WireType element = scalar_wire_type(scalar);
    if (tag.type == WireType::kLength && element != WireType::kLength) {
      // Packed: the elements one after another.
      const auto [elements, packed_at] = sub_message(in);
      WireReader packed(elements, packed_at);
      while (!packed.done()) list_element(a, scalar, packed, path);
    } else {
      expect_type(path, at, tag, element);
      list_element(a, scalar, in, path);
    }
  }
}

Attribute decode_attribute(std::string_view bytes, std::size_t base, FieldPath& path,
                           DecodeCounts& counts) {
  Attribute a;
  WireReader in(bytes, base);
  while (!in.done()) {
    const std::size_t at = in.offset();
    const FieldTag tag = in.tag();
    if (tag.number == 1 || tag.number == 2) {
      const auto guard = path.enter(tag.number == 1 ? ".name" : ".doc_string");
      std::string text = string_field(in, path, at, tag);
      if (tag.number == 1) a.name = std::move(text);
      continue;
    }
    if (tag.number < 3 || tag.number > 32) {
      ++counts.unknown_fields;
      in.skip(tag.type);
      continue;
    }
    // A oneof member: the last one on the wire wins, as in protobuf.
    const auto type = static_cast<AttrType>(tag.number);
    const auto guard = path.enter(fmt::format(".{}", attr_type_name(type)));
    std::string name = std::move(a.name);
    a = Attribute{};
    a.name = std::move(name);
    a.type = type;
    if (is_list(type)) {
      expect_type(path, at, tag, WireType::kLength);
      const auto [list, list_at] = sub_message(in);
      decode_list(a, static_cast<AttrType>(tag.number - 1), list, list_at, path, counts);
      continue;
    }
    expect_type(path, at, tag, scalar_wire_type(type));
    if (is_real(type)) {
      a.real = real_value(type, in);
    } else if (is_text(type)) {
      const std::size_t text_at = in.offset();
      const std::string_view text = in.length_delimited();
      a.text = type == AttrType::kString ? utf8_string(path, text_at, text) : std::string(text);
    } else {
      a.bits = integer_bits(type, in);
    }
  }
  return a;
}

void decode_repeated_u64(std::vector<std::uint64_t>& out, FieldTag tag, WireReader& in) {
  if (tag.type == WireType::kLength) {
    const auto [bytes, at] = sub_message(in);
    WireReader packed(bytes, at);
    while (!packed.done()) out.push_back(packed.varint());
  } else {
    out.push_back(in.varint());
  }
}

IoInfo decode_io_info(std::string_view bytes, std::size_t base, FieldPath& path,
                      DecodeCounts& counts) {
  IoInfo io;
  WireReader in(bytes, base);
  while (!in.done()) {
    const std::size_t at = in.offset();
    const FieldTag tag = in.tag();
    std::string* target = tag.number == 1   ? &io.values
                          : tag.number == 2 ? &io.shapes
                          : tag.number == 3 ? &io.types
                                            : nullptr;
    if (target == nullptr) {
      ++counts.unknown_fields;
      in.skip(tag.type);
      continue;
    }
    const auto guard = path.enter(tag.number == 1   ? ".values"
                                  : tag.number == 2 ? ".shapes"
                                                    : ".types");
    *target = string_field(in, path, at, tag);
  }
  return io;
}

// The `index`-th `attr` of a Node or a GlobalMetadata.
Attribute attribute_field(WireReader& in, FieldPath& path, std::size_t at, FieldTag tag,
                          std::size_t index, DecodeCounts& counts) {
  const auto guard = path.enter(fmt::format(".attr[{}]", index));
  expect_type(path, at, tag, WireType::kLength);
  const auto [sub, sub_at] = sub_message(in);
  return decode_attribute(sub, sub_at, path, counts);
}

template <typename Body>
auto decode_guarded(FieldPath& path, Body&& body) {
  try {
    return body();
  } catch (const WireError& e) {
    throw MessageError(path.str(), e.offset(), e.reason());
  }
}

}  // namespace

Node decode_node(std::string_view bytes, DecodeCounts& counts) {
  FieldPath path("Node");
  return decode_guarded(path, [&] {
    Node node;
    std::size_t attrs = 0;
    WireReader in(bytes);
    while (!in.done()) {
      const std::size_t at = in.offset();
      const FieldTag tag = in.tag();
      switch (tag.number) {
        case 1: {
          const auto g = path.enter(".id");
          expect_type(path, at, tag, WireType::kVarint);
          node.id = in.varint();
          break;
        }
        case 2: {
          const auto g = path.enter(".name");
          node.name = string_field(in, path, at, tag);
          break;
        }
        case 3: {
          const auto g = path.enter(".type");
          expect_type(path, at, tag, WireType::kVarint);
          node.type =
              static_cast<std::int32_t>(static_cast<std::uint32_t>(in.varint() & 0xffffffffu));
          break;
        }
        case 4:
        case 5: {
          const auto g = path.enter(tag.number == 4 ? ".ctrl_deps" : ".data_deps");
          if (tag.type != WireType::kLength) expect_type(path, at, tag, WireType::kVarint);
          decode_repeated_u64(tag.number == 4 ? node.ctrl_deps : node.data_deps, tag, in);
          break;
        }
        case 6:
        case 7: {
          const auto g = path.enter(tag.number == 6 ? ".start_time_micros" : ".duration_micros");
          expect_type(path, at, tag, WireType::kVarint);
          (tag.number == 6 ? node.start_time_micros : node.duration_micros) = in.varint();
          break;
        }
        case 8:
        case 9: {
          const auto g = path.enter(tag.number == 8 ? ".inputs" : ".outputs");
          expect_type(path, at, tag, WireType::kLength);
          const auto [sub, sub_at] = sub_message(in);
          (tag.number == 8 ? node.inputs : node.outputs) =
              decode_io_info(sub, sub_at, path, counts);
          break;
        }
        case 10: node.attrs.push_back(attribute_field(in, path, at, tag, attrs++, counts)); break;
        default: ++counts.unknown_fields; in.skip(tag.type);
      }
    }
    return node;
  });
}

GlobalMetadata decode_metadata(std::string_view bytes, DecodeCounts& counts) {
  FieldPath path("GlobalMetadata");
  return decode_guarded(path, [&] {
    GlobalMetadata meta;
    std::size_t attrs = 0;
    WireReader in(bytes);
    while (!in.done()) {
      const std::size_t at = in.offset();
      const FieldTag tag = in.tag();
      if (tag.number == 1) {
        const auto g = path.enter(".version");
        meta.version = string_field(in, path, at, tag);
      } else if (tag.number == 2) {
        meta.attrs.push_back(attribute_field(in, path, at, tag, attrs++, counts));
      } else {
        ++counts.unknown_fields;
        in.skip(tag.type);
      }
    }
    return meta;
  });
}

namespace {

// A varint or fixed scalar's value, without its tag.
void encode_value(WireWriter& out, AttrType scalar, std::uint64_t bits, double real) {
  switch (scalar) {
    case AttrType::kDouble: out.fixed64(std::bit_cast<std::uint64_t>(real)); return;
    case AttrType::kFloat:
      out.fixed32(std::bit_cast<std::uint32_t>(static_cast<float>(real)));
      return;
    case AttrType::kFixed64:
    case AttrType::kSfixed64: out.fixed64(bits); return;
    case AttrType::kFixed32:
    case AttrType::kSfixed32: out.fixed32(static_cast<std::uint32_t>(bits)); return;
    case AttrType::kSint32:
    case AttrType::kSint64: out.varint(zigzag_encode(static_cast<std::int64_t>(bits))); return;
    case AttrType::kUint32: out.varint(bits & 0xffffffffu); return;
    default: out.varint(bits); return;
  }
}

std::string encode_attribute(const Attribute& a) {
  WireWriter out;
  if (!a.name.empty()) out.bytes_field(1, a.name);
  if (a.type == AttrType::kNone) return out.take();
  const auto number = static_cast<std::uint32_t>(a.type);
  if (!is_list(a.type)) {
    if (is_text(a.type)) {
      out.bytes_field(number, a.text);
    } else {
      out.tag(number, scalar_wire_type(a.type));
      encode_value(out, a.type, a.bits, a.real);
    }
    return out.take();
  }
  const auto scalar = static_cast<AttrType>(number - 1);
  WireWriter list;
  if (is_text(scalar)) {
    for (const auto& t : a.list_texts) list.bytes_field(1, t);
  } else {
    WireWriter packed;
    if (is_real(scalar)) {
      for (const double r : a.list_reals) encode_value(packed, scalar, 0, r);
    } else {
      for (const auto b : a.list_bits) encode_value(packed, scalar, b, 0);
    }
    if (!packed.bytes().empty()) list.bytes_field(1, packed.bytes());
  }
  out.bytes_field(number, list.bytes());
  return out.take();
}

std::string encode_io_info(const IoInfo& io) {
  WireWriter out;
  if (!io.values.empty()) out.bytes_field(1, io.values);
  if (!io.shapes.empty()) out.bytes_field(2, io.shapes);
  if (!io.types.empty()) out.bytes_field(3, io.types);
  return out.take();
}

void packed_u64(WireWriter& out, std::uint32_t number, const std::vector<std::uint64_t>& values) {
  if (values.empty()) return;
  WireWriter packed;
  for (const auto v : values) packed.varint(v);
  out.bytes_field(number, packed.bytes());
}

}  // namespace

std::string encode_node(const Node& node) {
  WireWriter out;
  if (node.id != 0) out.varint_field(1, node.id);
  if (!node.name.empty()) out.bytes_field(2, node.name);
  if (node.type != 0) {
    out.varint_field(3, static_cast<std::uint64_t>(static_cast<std::int64_t>(node.type)));
  }
  packed_u64(out, 4, node.ctrl_deps);
  packed_u64(out, 5, node.data_deps);
  if (node.start_time_micros != 0) out.varint_field(6, node.start_time_micros);
  if (node.duration_micros != 0) out.varint_field(7, node.duration_micros);
  const std::string inputs = encode_io_info(node.inputs);
  if (!inputs.empty()) out.bytes_field(8, inputs);
  const std::string outputs = encode_io_info(node.outputs);
  if (!outputs.empty()) out.bytes_field(9, outputs);
  for (const auto& a : node.attrs) out.bytes_field(10, encode_attribute(a));
  return out.take();
}

std::string encode_metadata(const GlobalMetadata& metadata) {
  WireWriter out;
  if (!metadata.version.empty()) out.bytes_field(1, metadata.version);
  for (const auto& a : metadata.attrs) out.bytes_field(2, encode_attribute(a));
  return out.take();
}

}  // namespace ssgd::chakra
