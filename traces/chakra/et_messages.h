#pragma once
// One Chakra message (chakra_et.h) to and from its protobuf bytes. Decoding
// checks every tag, length and varint (protobuf_wire.h), every field's wire
// type against the schema, and that every string is UTF-8, and throws
// MessageError naming the field (as "Node.attr[2].int64_val") and the byte.
// Fields the schema does not have are skipped and counted. Encoding writes
// fields in number order, leaves out proto3 defaults except a oneof member,
// and packs repeated integers, as protoc's serializers do.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "traces/chakra/chakra_et.h"

namespace ssgd::chakra {

class MessageError : public std::runtime_error {
 public:
  MessageError(std::string field, std::size_t offset, const std::string& what);
  [[nodiscard]] const std::string& field() const { return field_; }
  [[nodiscard]] std::size_t offset() const { return offset_; }
  [[nodiscard]] const std::string& reason() const { return reason_; }

 private:
  std::string field_;
  std::size_t offset_;
  std::string reason_;
};

struct DecodeCounts {
  std::int64_t unknown_fields = 0;  // fields the schema does not have, skipped
};

Node decode_node(std::string_view bytes, DecodeCounts& counts);
GlobalMetadata decode_metadata(std::string_view bytes, DecodeCounts& counts);

std::string encode_node(const Node& node);
std::string encode_metadata(const GlobalMetadata& metadata);

}  // namespace ssgd::chakra
