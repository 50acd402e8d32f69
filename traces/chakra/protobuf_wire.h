#pragma once
// The protobuf wire format (protobuf.dev, "Encoding"), by hand, for the
// Chakra execution traces (chakra_et.h): ssgd reads files other tools wrote,
// so every varint, tag and length is checked against the bytes that remain
// and a bad one is a WireError saying what and where, never a read past the
// end. The writer emits what protoc's serializers emit: packed repeated
// scalars, fields in number order, proto3 defaults left out (the caller
// decides, since a oneof member is written even when zero).

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ssgd::chakra {

// Wire types (protobuf.dev, "Message Structure").
enum class WireType : std::uint8_t { kVarint = 0, kFixed64 = 1, kLength = 2, kFixed32 = 5 };

// A malformed message: what is wrong and the byte offset in the message.
class WireError : public std::runtime_error {
 public:
  WireError(std::size_t offset, const std::string& what);
  [[nodiscard]] std::size_t offset() const { return offset_; }
  // what() without the offset.
  [[nodiscard]] const std::string& reason() const { return reason_; }

 private:
  std::size_t offset_;
  std::string reason_;
};

struct FieldTag {
  std::uint32_t number = 0;
  WireType type = WireType::kVarint;
};

// Reads one message's fields in order. Groups (wire types 3 and 4) and the
// reserved wire types 6 and 7 are errors, as is field number 0.
class WireReader {
 public:
  explicit WireReader(std::string_view bytes, std::size_t base_offset = 0)
      : bytes_(bytes), base_(base_offset) {}

  [[nodiscard]] bool done() const { return at_ >= bytes_.size(); }
  // Offset of the next byte, counted from the outermost message.
  [[nodiscard]] std::size_t offset() const { return base_ + at_; }

  FieldTag tag();
  std::uint64_t varint();
  std::uint32_t fixed32();
  std::uint64_t fixed64();
  // A length-delimited field's bytes (a string, bytes, a message or a packed list).
  std::string_view length_delimited();
  // Skips a field of `type` (an unknown or unwanted field).
  void skip(WireType type);

 private:
  std::string_view take(std::size_t n);
  std::string_view bytes_;
  std::size_t base_ = 0;
  std::size_t at_ = 0;
};

// Values as the field types decode them (protobuf.dev, "Encoding"): int32
// and int64 are two's complement in a varint, sint32 and sint64 zigzag.
inline std::int64_t zigzag_decode(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}
inline std::uint64_t zigzag_encode(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}

class WireWriter {
 public:
  void varint(std::uint64_t v);
  void fixed32(std::uint32_t v);
  void fixed64(std::uint64_t v);
  void tag(std::uint32_t number, WireType type);
  void varint_field(std::uint32_t number, std::uint64_t v);
  void fixed64_field(std::uint32_t number, std::uint64_t v);
  void fixed32_field(std::uint32_t number, std::uint32_t v);
  void bytes_field(std::uint32_t number, std::string_view bytes);

  [[nodiscard]] const std::string& bytes() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

}  // namespace ssgd::chakra
