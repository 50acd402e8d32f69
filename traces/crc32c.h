#pragma once
// CRC-32C (Castagnoli): the checksum of every record of a .ssgdt file.
//
// Reflected polynomial 0x82F63B78, initial value and final xor 0xFFFFFFFF,
// as in iSCSI (RFC 3720), ext4 and LevelDB; crc32c("123456789") is
// 0xE3069283. A portable table-driven implementation (no SSE4.2 or ARMv8
// CRC instructions), fast enough for traces read at disk speed.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ssgd::trace {

// Extends `crc` (the CRC of some earlier bytes, 0 for none) with `size`
// more bytes, so crc32c_extend(crc32c(a), b) == crc32c(a + b).
std::uint32_t crc32c_extend(std::uint32_t crc, const void* data, std::size_t size);

// The CRC-32C of `data`.
inline std::uint32_t crc32c(std::string_view data) {
  return crc32c_extend(0, data.data(), data.size());
}

}  // namespace ssgd::trace
