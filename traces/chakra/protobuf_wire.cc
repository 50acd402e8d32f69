#include "traces/chakra/protobuf_wire.h"

#include <fmt/format.h>

namespace ssgd::chakra {

WireError::WireError(std::size_t offset, const std::string& what)
    : std::runtime_error(fmt::format("{} (byte {})", what, offset)),
      offset_(offset),
      reason_(what) {}

std::string_view WireReader::take(std::size_t n) {
  if (n > bytes_.size() - at_) {
    throw WireError(offset(), fmt::format("a field of {} bytes runs past the end of its message, "
                                          "which has {} bytes left",
                                          n, bytes_.size() - at_));
  }
  const std::string_view out = bytes_.substr(at_, n);
  at_ += n;
  return out;
}

std::uint64_t WireReader::varint() {
  const std::size_t start = offset();
  std::uint64_t v = 0;
  for (int i = 0; i < 10; ++i) {
    if (at_ >= bytes_.size()) throw WireError(start, "a varint runs past the end of its message");
    const auto b = static_cast<std::uint8_t>(bytes_[at_++]);
    // The tenth byte holds bit 63 only.
    if (i == 9 && b > 1) throw WireError(start, "a varint is longer than 64 bits");
    v |= static_cast<std::uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) return v;
  }
  throw WireError(start, "a varint is longer than 10 bytes");
}

FieldTag WireReader::tag() {
  const std::size_t start = offset();
  const std::uint64_t key = varint();
  const auto type = static_cast<unsigned>(key & 7);
  const std::uint64_t number = key >> 3;
  if (number == 0 || number > 536870911u) {
    throw WireError(start, fmt::format("field number {} is outside 1..2^29-1", number));
  }
  if (type != 0 && type != 1 && type != 2 && type != 5) {
    throw WireError(start, fmt::format("field {} has wire type {}, which is a group or reserved; "
                                       "no Chakra field is one",
                                       number, type));
  }
  return {static_cast<std::uint32_t>(number), static_cast<WireType>(type)};
}

std::uint32_t WireReader::fixed32() {
  const std::string_view b = take(4);
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i)
    v = (v << 8) | static_cast<std::uint8_t>(b[static_cast<std::size_t>(i)]);
  return v;
}

std::uint64_t WireReader::fixed64() {
  const std::string_view b = take(8);
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | static_cast<std::uint8_t>(b[static_cast<std::size_t>(i)]);
  return v;
}

std::string_view WireReader::length_delimited() {
  const std::size_t start = offset();
  const std::uint64_t n = varint();
  if (n > bytes_.size() - at_) {
    throw WireError(start, fmt::format("a length-delimited field of {} bytes runs past the end of "
                                       "its message, which has {} bytes left",
                                       n, bytes_.size() - at_));
  }
  return take(static_cast<std::size_t>(n));
}

void WireReader::skip(WireType type) {
  switch (type) {
    case WireType::kVarint: varint(); return;
    case WireType::kFixed64: take(8); return;
    case WireType::kLength: length_delimited(); return;
    case WireType::kFixed32: take(4); return;
  }
}

void WireWriter::varint(std::uint64_t v) {
  while (v >= 0x80) {
    out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out_.push_back(static_cast<char>(v));
}

void WireWriter::tag(std::uint32_t number, WireType type) {
  varint((static_cast<std::uint64_t>(number) << 3) | static_cast<std::uint64_t>(type));
}

void WireWriter::varint_field(std::uint32_t number, std::uint64_t v) {
  tag(number, WireType::kVarint);
  varint(v);
}

void WireWriter::fixed64(std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void WireWriter::fixed32(std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void WireWriter::fixed64_field(std::uint32_t number, std::uint64_t v) {
  tag(number, WireType::kFixed64);
  fixed64(v);
}

void WireWriter::fixed32_field(std::uint32_t number, std::uint32_t v) {
  tag(number, WireType::kFixed32);
  fixed32(v);
}

void WireWriter::bytes_field(std::uint32_t number, std::string_view bytes) {
  tag(number, WireType::kLength);
  varint(bytes.size());
  out_.append(bytes);
}

}  // namespace ssgd::chakra
