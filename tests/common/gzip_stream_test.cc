#include "common/gzip_stream.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "common/error.h"
#include "tests/support/test_files.h"

namespace ssgd {
namespace {

namespace fs = std::filesystem;

class GzipStreamTest : public ssgd::testing::TempDirTest {
 protected:
  static std::string gzip(const std::string& plain, int level = 6) {
    std::ostringstream out;
    GzipWriter w(out, level);
    w.write(plain);
    w.finish();
    return out.str();
  }
  static std::string read_all(GzipReader& r, std::size_t block) {
    std::string all;
    std::string buf(block, '\0');
    while (const std::size_t n = r.read(buf.data(), buf.size())) all.append(buf.data(), n);
    return all;
  }
  static std::string sample(std::size_t n) {
    std::mt19937 rng(7);
    std::string s;
    s.reserve(n);
    // Half-compressible: JSON-like text with random numbers.
    while (s.size() < n) s += "{\"ts\": " + std::to_string(rng() % 100000) + ".123, \"dur\": 4},\n";
    s.resize(n);
    return s;
  }
};

TEST_F(GzipStreamTest, RoundTripsLargeInputInSmallReads) {
  const std::string plain = sample(3'000'000);
  const std::string packed = gzip(plain);
  ASSERT_LT(packed.size(), plain.size() / 3);
  EXPECT_EQ(packed.substr(0, 2), std::string("\x1f\x8b"));
  GzipReader r(write_file("a.json.gz", packed));
  EXPECT_TRUE(r.compressed());
  EXPECT_EQ(read_all(r, 4093), plain);
  EXPECT_EQ(r.file_bytes_read(), packed.size());
  EXPECT_EQ(r.read(nullptr, 0), 0u);
}

TEST_F(GzipStreamTest, PlainFilesPassThroughWhateverTheirName) {
  const std::string plain = sample(700'000);
  GzipReader r(write_file("plain.json.gz", plain));
  EXPECT_FALSE(r.compressed());
  EXPECT_EQ(read_all(r, 10'000), plain);
}

TEST_F(GzipStreamTest, EmptyFilesAreEmpty) {
  GzipReader r(write_file("empty.json", ""));
  EXPECT_EQ(read_all(r, 16), "");
  GzipReader z(write_file("empty.json.gz", gzip("")));
  EXPECT_TRUE(z.compressed());
  EXPECT_EQ(read_all(z, 16), "");
}

TEST_F(GzipStreamTest, ConcatenatedMembersReadAsOneStream) {
  GzipReader r(write_file("cat.gz", gzip("first half, ") + gzip("second half")));
  EXPECT_EQ(read_all(r, 5), "first half, second half");
}

TEST_F(GzipStreamTest, TruncatedFileIsAnErrorNamingTheFile) {
  const std::string packed = gzip(sample(400'000));
  const fs::path p = write_file("cut.json.gz", packed.substr(0, packed.size() / 2));
  GzipReader r(p);
  try {
    read_all(r, 65536);
    FAIL() << "a truncated gzip file was read without error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, p.string());
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
}

TEST_F(GzipStreamTest, CorruptBytesAreAnError) {
  std::string packed = gzip(sample(200'000));
  for (std::size_t i = 100; i < 200; ++i) packed[i] = static_cast<char>(packed[i] ^ 0x5a);
  GzipReader r(write_file("bad.gz", packed));
  EXPECT_THROW(read_all(r, 65536), InputError);
}

TEST_F(GzipStreamTest, MissingFileAndFolderAreInputErrors) {
  EXPECT_THROW(GzipReader(dir_ / "nope.json.gz"), InputError);
  EXPECT_THROW(GzipReader{dir_}, InputError);
}

TEST_F(GzipStreamTest, WriterRejectsBadLevelAndWritesAfterFinish) {
  std::ostringstream out;
  EXPECT_THROW(GzipWriter(out, 0), std::invalid_argument);
  GzipWriter w(out, 1);
  w.write("x");
  w.finish();
  EXPECT_THROW(w.write("y"), std::logic_error);
  EXPECT_EQ(w.bytes_in(), 1u);
}

TEST(GzipExtension, IsDecidedByTheLastSuffix) {
  EXPECT_TRUE(has_gzip_extension("trace.json.gz"));
  EXPECT_FALSE(has_gzip_extension("trace.json"));
  EXPECT_FALSE(has_gzip_extension("trace.gz.json"));
}

}  // namespace
}  // namespace ssgd
