#include "common/sha256.h"

#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/test_files.h"

namespace ssgd {
namespace {

// The SHA-256 examples of FIPS 180-4 (NIST's "Cryptographic Standards and
// Guidelines: Examples with Intermediate Values", SHA256.pdf and
// SHA2_Additional.pdf).
TEST(Sha256, FipsVectors) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnop"
                       "jklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(sha256_hex(std::string(1'000'000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(sha256_hex(std::string(1, '\xbd')),
            "68325720aabd7c82f30f554b313d0570c95accbb7dc4b5aae11204c08ffe732b");
  EXPECT_EQ(sha256_hex(std::string("\xc9\x8c\x8e\x55", 4)),
            "7abc22c0ae5af26ce93dbb94433a0e0b2e119d014f8e7f65bd56c61ccccd9504");
  EXPECT_EQ(sha256_hex(std::string(55, '\0')),
            "02779466cdec163811d078815c633f21901413081449002f24aa3e80f0b88ef7");
  EXPECT_EQ(sha256_hex(std::string(56, '\0')),
            "d4817aa5497628e7c77e6b606107042bbba3130888c5f47a375e6179be789fbb");
  EXPECT_EQ(sha256_hex(std::string(57, '\0')),
            "65a16cb7861335d5ace3c60718b5052e44660726da4cd13bb745381b235a1785");
  EXPECT_EQ(sha256_hex(std::string(64, '\0')),
            "f5a5fd42d16a20302798ef6ed309979b43003d2320d9f0e8ea9831a92759fb4b");
  EXPECT_EQ(sha256_hex(std::string(1000, '\0')),
            "541b3e9daa09b20bf85fa273e5cbd3e80185aa4ec298e765db87742b70138a53");
  EXPECT_EQ(sha256_hex(std::string(1000, 'A')),
            "c2e686823489ced2017f6059b8b239318b6364f6dcd835d0a519105a1eadd6e4");
  EXPECT_EQ(sha256_hex(std::string(1005, 'U')),
            "f4d62ddec0f3dd90ea1380fa16a5ff8dc4c54b21740650f24afc4120903552b0");
}

// Any split of the message into updates gives the one digest, including
// splits across the 64-byte block and the 56-byte padding boundary.
TEST(Sha256, UpdatesInPiecesGiveTheSameDigest) {
  std::string message;
  for (int i = 0; i < 300; ++i) message += static_cast<char>(i * 7 + 3);
  for (std::size_t piece : {1u, 3u, 55u, 56u, 63u, 64u, 65u, 128u, 299u}) {
    Sha256 h;
    for (std::size_t at = 0; at < message.size(); at += piece) {
      h.update(std::string_view(message).substr(at, piece));
    }
    EXPECT_EQ(to_hex(h.finish()), sha256_hex(message)) << "pieces of " << piece;
  }
}

TEST(Sha256, FinishStartsOver) {
  Sha256 h;
  h.update("abc");
  h.finish();
  h.update("abc");
  EXPECT_EQ(to_hex(h.finish()), sha256_hex("abc"));
}

class Sha256File : public testing::TempDirTest {};

TEST_F(Sha256File, HashesAndSizesAFile) {
  const std::string bytes(200'000, 'a');
  testing::write_file_bytes(dir_ / "f.bin", bytes);
  std::int64_t size = -1;
  EXPECT_EQ(sha256_file_hex(dir_ / "f.bin", &size), sha256_hex(bytes));
  EXPECT_EQ(size, 200'000);
  EXPECT_THROW(sha256_file_hex(dir_ / "missing.bin"), std::runtime_error);
}

}  // namespace
}  // namespace ssgd
