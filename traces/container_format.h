#pragma once
// The byte layout of a .ssgdt trace file (container format version 1).
//
// All integers are unsigned, little-endian. CRC is CRC-32C (Castagnoli,
// traces/crc32c.h). Offsets are from the start of the file.
//
//   file header
//     0   8  magic            89 53 53 47 44 54 0D 0A  ("\x89SSGDT\r\n")
//     8   4  format_version   1
//     12  4  header_length    H, bytes of the metadata (<= kMaxHeaderBytes)
//     16  H  metadata         serialized ssgd.trace.v1.CaptureMetadata
//     16+H 4 header_crc       CRC of bytes [8, 16+H): version, length, metadata
//
//   zero or more chunks, each
//     +0  4  marker           "CHNK"
//     +4  4  compressed_length    C (<= kMaxChunkCompressedBytes)
//     +8  4  uncompressed_length U (<= kMaxChunkUncompressedBytes)
//     +12 4  event_count      N (>= 1, <= U / 2)
//     +16 4  data_crc         CRC of the C compressed bytes
//     +20 4  chunk_header_crc CRC of bytes +0 .. +20 of this chunk header
//     +24 C  one zstd frame (with its content size) that decompresses to U
//            bytes: a serialized ssgd.trace.v1.EventChunk, i.e. N times
//            { 0x0A, varint length L, L bytes of a serialized Event }
//
//   footer
//     +0  4  marker           "FOOT"
//     +4  4  footer_length    F (<= kMaxFooterBytes)
//     +8  4  length_crc       CRC of bytes +0 .. +8 of the footer record
//     +12 F  footer           serialized ssgd.trace.v1.Footer
//     +12+F 4 footer_crc      CRC of the F footer bytes
//     +16+F 8 end magic       "SSGDEND\n"; the file ends right after it
//
// A reader that finds the end of the file where a record should continue
// (a chunk header, chunk data or the footer is incomplete, or there is no
// footer) reports the file as cut short and keeps the events of every whole
// chunk before it. Anything else that does not match this layout is corrupt.
// Readers reject any format_version other than the one they know; changes
// that only add proto fields keep the version (traces/README.md).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace ssgd::trace::format {

inline constexpr std::array<unsigned char, 8> kMagic = {0x89, 'S', 'S', 'G', 'D', 'T', '\r', '\n'};
inline constexpr std::array<unsigned char, 8> kEndMagic = {'S', 'S', 'G', 'D', 'E', 'N', 'D', '\n'};
inline constexpr std::uint32_t kFormatVersion = 1;

// Record markers, as the four bytes appear in the file.
inline constexpr std::array<unsigned char, 4> kChunkMarker = {'C', 'H', 'N', 'K'};
inline constexpr std::array<unsigned char, 4> kFooterMarker = {'F', 'O', 'O', 'T'};

inline constexpr std::size_t kFileHeaderFixedBytes = 16;  // magic, version, length
inline constexpr std::size_t kChunkHeaderBytes = 24;
inline constexpr std::size_t kFooterFixedBytes = 12;  // marker, length, CRC
inline constexpr std::size_t kCrcBytes = 4;

// Limits that keep a corrupt length from causing a huge allocation. Writers
// stay well below them (kWriterMaxChunkBytes); readers reject more.
inline constexpr std::uint32_t kMaxHeaderBytes = 16u << 20;
inline constexpr std::uint32_t kMaxChunkCompressedBytes = 256u << 20;
inline constexpr std::uint32_t kMaxChunkUncompressedBytes = 256u << 20;
inline constexpr std::uint32_t kMaxFooterBytes = 1u << 20;

// A writer starts a new chunk once this many uncompressed bytes are
// buffered, whatever its events_per_chunk; one event may not exceed
// kMaxEventBytes.
inline constexpr std::size_t kWriterMaxChunkBytes = 32u << 20;
inline constexpr std::size_t kMaxEventBytes = 64u << 20;

// The tag byte that starts each event in a chunk: field 1 of EventChunk,
// wire type 2 (length-delimited).
inline constexpr unsigned char kEventTag = 0x0A;

// Appends `v` to `out` as four little-endian bytes.
inline void append_u32_le(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFFu));
}

// Reads four little-endian bytes at `p`.
inline std::uint32_t load_u32_le(const char* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

}  // namespace ssgd::trace::format
