// Bounded readers (docs/reliability.md), the Chakra ET: degenerate files (a
// run of zero bytes, the same node again and again, a gzip bomb) are
// refused at their first bad record, in memory that does not grow with the
// file; a file of the smallest valid nodes is read in memory bounded per
// byte. Each reader runs in a child whose heap is limited
// (tests/support/heap_limit.h): the reader before these rules held every
// empty node (about 330 bytes a node from each byte of zeros) and is
// stopped at the limit instead of refusing.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "common/gzip_stream.h"
#include "tests/support/degenerate_inputs.h"
#include "tests/support/heap_limit.h"
#include "tests/support/test_files.h"
#include "traces/chakra/et_file.h"
#include "traces/chakra/protobuf_wire.h"

namespace ssgd::chakra {
namespace {

using ssgd::testing::HeapRun;
using ssgd::testing::kMiB;
using ssgd::testing::run_with_heap_limit;
using ssgd::testing::TempDirTest;
using ssgd::testing::write_file_bytes;

std::string gzip(const std::string& bytes) { return ssgd::testing::gzip_bytes(bytes, 9); }

// One length-prefixed record.
std::string record(const std::string& message) {
  WireWriter len;
  len.varint(message.size());
  return len.bytes() + message;
}

// A COMP_NODE with only its id: the smallest node the reader accepts.
std::string smallest_node(std::uint64_t id) {
  WireWriter node;
  node.varint_field(1, id);
  node.varint_field(3, 4);
  return record(node.bytes());
}

class BoundedChakra : public TempDirTest {
 protected:
  HeapRun read(const std::string& name, const std::string& bytes, std::size_t limit) {
    const auto path = write_file(name, bytes);
    return run_with_heap_limit(static_cast<std::int64_t>(limit),
                               [&] { read_execution_trace(path); });
  }
};

TEST_F(BoundedChakra, ARunOfZerosIsRefusedAtItsFirstNode) {
  // 50 MB of zeros: an empty GlobalMetadata, then 50 million empty nodes.
  const std::string zeros(50 * kMiB, '\0');
  const HeapRun r = read("zeros.0.et", zeros, 16 * kMiB);
  ASSERT_EQ(r.end, HeapRun::End::kInputError) << r;
  EXPECT_NE(r.message.find("zeros.0.et: record 1: field 'Node'"), std::string::npos) << r;
  EXPECT_NE(r.message.find("no name and no type"), std::string::npos) << r;
  // Constant memory: the read buffer, not the file (0.05 bytes per byte).
  EXPECT_LT(r.peak_bytes, static_cast<std::int64_t>(zeros.size() / 20)) << r;
}

TEST_F(BoundedChakra, AGzipOfZerosIsRefusedAtItsFirstNode) {
  // The case: 50 MB of zeros in about 50 KB of gzip.
  const std::string gz = gzip(std::string(50 * kMiB, '\0'));
  ASSERT_LT(gz.size(), 100 * 1024u);
  const HeapRun r = read("zeros.0.et.gz", gz, 16 * kMiB);
  ASSERT_EQ(r.end, HeapRun::End::kInputError) << r;
  EXPECT_NE(r.message.find("record 1: field 'Node'"), std::string::npos) << r;
  // At most 40 bytes of heap for each byte of the file.
  EXPECT_LT(r.peak_bytes, static_cast<std::int64_t>(40 * gz.size())) << r;
}

TEST_F(BoundedChakra, TheSameNodeRepeatedIsRefusedAtItsSecondRecord) {
  std::string et = record("");  // an empty GlobalMetadata
  const std::string node = smallest_node(7);
  for (std::size_t i = 0; i < 4 * kMiB / node.size(); ++i) et += node;
  const HeapRun r = read("same.0.et", et, 8 * kMiB);
  ASSERT_EQ(r.end, HeapRun::End::kInputError) << r;
  EXPECT_NE(r.message.find("record 2: field 'Node.id': node id 7 is used again: record 1"),
            std::string::npos)
      << r;
}

TEST_F(BoundedChakra, AnAttributeRepeatedInANodeIsRefused) {
  // One node of 4 MB: the attribute {name "a", int64_val 1} again and again,
  // each about 160 bytes of memory from 7 bytes of file (about 65 bytes
  // a byte, with the record's buffer and its copy). Attributes are
  // checked once their record is decoded, so the record is held decoded
  // first: bounded per byte of the record (kMaxRecordBytes at most).
  WireWriter attr;
  attr.bytes_field(1, "a");
  attr.varint_field(9, 1);
  WireWriter node;
  node.varint_field(1, 1);
  node.varint_field(3, 4);
  while (node.bytes().size() < 4 * kMiB) node.bytes_field(10, attr.bytes());
  const std::string et = record("") + record(node.bytes());
  const HeapRun r = read("attrs.0.et", et, 256 * kMiB);
  ASSERT_EQ(r.end, HeapRun::End::kInputError) << r;
  EXPECT_NE(r.message.find("field 'Node.attr[1].name': attribute 'a' is given again: attr[0]"),
            std::string::npos)
      << r;
  EXPECT_LT(r.peak_bytes, static_cast<std::int64_t>(80 * et.size())) << r;
}

TEST_F(BoundedChakra, AnAttributeWithoutANameIsRefused) {
  // An attribute is found by its name; one without a name is no attribute.
  WireWriter attr;
  attr.varint_field(9, 1);  // int64_val, no name
  WireWriter node;
  node.varint_field(1, 1);
  node.varint_field(3, 4);
  node.bytes_field(10, attr.bytes());
  const HeapRun r = read("unnamed.0.et", record("") + record(node.bytes()), 16 * kMiB);
  ASSERT_EQ(r.end, HeapRun::End::kInputError) << r;
  EXPECT_NE(r.message.find("unnamed.0.et: record 1: field 'Node.attr[0].name': an attribute "
                           "without a name"),
            std::string::npos)
      << r;
}

TEST_F(BoundedChakra, AGzipBombIsRefusedPastItsExpansionLimit) {
  // A node whose name is 64 MB of 'a': about 64 KB of gzip, refused once the
  // stream has expanded past kGzipMaxExpansion times what was read.
  WireWriter node;
  node.varint_field(1, 1);
  node.bytes_field(2, std::string(64 * kMiB, 'a'));
  const std::string gz = gzip(record("") + record(node.bytes()));
  const HeapRun r = read("bomb.0.et.gz", gz, 96 * kMiB);
  ASSERT_EQ(r.end, HeapRun::End::kInputError) << r;
  EXPECT_NE(r.message.find("refused as a decompression bomb"), std::string::npos) << r;
  // What the stream may give before it is refused, and the buffer it fills.
  EXPECT_LT(r.peak_bytes, static_cast<std::int64_t>(3 * kGzipFreeBytes)) << r;
}

TEST_F(BoundedChakra, TheSmallestNodesAreReadInMemoryBoundedPerByte) {
  // 500,000 distinct COMP_NODEs of 6 or 7 bytes each: a file the reader
  // accepts, whose nodes cost the most memory for their bytes.
  std::string et = record("");
  for (std::uint64_t id = 0; id < 500000; ++id) et += smallest_node(id);
  const HeapRun r = read("small.0.et", et, 1024 * kMiB);
  ASSERT_EQ(r.end, HeapRun::End::kReturned) << r;
  const double per_byte = static_cast<double>(r.peak_bytes) / static_cast<double>(et.size());
  RecordProperty("heap_bytes_per_file_byte", std::to_string(per_byte));
  EXPECT_LT(per_byte, 160.0) << r << " for " << et.size() << " bytes";
}

}  // namespace
}  // namespace ssgd::chakra
