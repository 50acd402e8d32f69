#pragma once
// SHA-256 (FIPS 180-4, section 6.2), for the checksums of dataset manifests.
//
// Written out here rather than taken from a crypto library: the datasets need
// only a fixed, well-known digest to detect changed files, not a security
// boundary, and this keeps common/ free of another dependency. Tested against
// the FIPS 180-4 / NIST CAVP example vectors (tests/common/sha256_test.cc).

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace ssgd {

class Sha256 {
 public:
  using Digest = std::array<std::uint8_t, 32>;

  Sha256();
  // Feeds more of the message; any split of a message gives the same digest.
  void update(std::string_view bytes);
  // Pads, finishes and returns the digest; the object then starts over.
  Digest finish();

 private:
  void compress(const std::uint8_t* block);

  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> block_{};
  std::size_t block_used_ = 0;
  std::uint64_t length_bytes_ = 0;
};

// The digest as 64 lower-case hexadecimal digits.
std::string to_hex(const Sha256::Digest& digest);

// SHA-256 of `bytes`, in hex.
std::string sha256_hex(std::string_view bytes);

// SHA-256 of a file's contents, in hex, read in blocks. Sets `size_bytes` to
// the number of bytes read when given. Throws std::runtime_error naming the
// file when it cannot be opened or read.
std::string sha256_file_hex(const std::filesystem::path& path, std::int64_t* size_bytes = nullptr);

}  // namespace ssgd
