// The Chakra ET codec (traces/chakra/): bytes checked by hand against the
// protobuf encoding rules, every attribute type both ways, and the errors of
// damaged files, each naming the file, the record and the field.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "common/error.h"
#include "tests/support/test_files.h"
#include "traces/chakra/chakra_et.h"
#include "traces/chakra/et_file.h"
#include "traces/chakra/et_messages.h"
#include "traces/chakra/protobuf_wire.h"

namespace ssgd::chakra {
namespace {

using ssgd::testing::read_file_bytes;
using ssgd::testing::TempDirTest;
using ssgd::testing::write_file_bytes;

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (const int c : b) s.push_back(static_cast<char>(c));
  return s;
}

ExecutionTrace small_trace() {
  ExecutionTrace et;
  et.metadata.version = "0.0.4";
  Node n;
  n.id = 1;
  n.name = "a";
  n.type = static_cast<std::int32_t>(NodeType::kComp);
  n.data_deps = {0};
  n.duration_micros = 5;
  n.attrs.push_back(Attribute::boolean("is_cpu_op", false));
  n.attrs.push_back(Attribute::int64("comm_size", 1048576));
  et.nodes.push_back(n);
  return et;
}

// Worked out by hand from protobuf.dev's "Encoding": each record is its
// length as a varint, then the message's fields as (number << 3 | wire type).
TEST(ChakraEtBytes, SmallTraceEncodesAsWorkedOutByHand) {
  std::string want = bytes({0x07, 0x0a, 0x05}) + "0.0.4";  // GlobalMetadata{version}
  want += bytes({0x2d});                                   // Node: 45 bytes
  want += bytes({0x08, 0x01});                             // id 1
  want += bytes({0x12, 0x01}) + "a";                       // name
  want += bytes({0x18, 0x04});                             // type COMP_NODE
  want += bytes({0x2a, 0x01, 0x00});                       // data_deps, packed: [0]
  want += bytes({0x38, 0x05});                             // duration_micros 5
  // attr: name (field 1) and bool_val (field 27: tag 216 = 0xd8 0x01) false.
  want += bytes({0x52, 0x0e, 0x0a, 0x09}) + "is_cpu_op" + bytes({0xd8, 0x01, 0x00});
  // attr: name and int64_val (field 9: tag 0x48) 2^20 = 0x80 0x80 0x40.
  want += bytes({0x52, 0x0f, 0x0a, 0x09}) + "comm_size" + bytes({0x48, 0x80, 0x80, 0x40});
  EXPECT_EQ(serialize_execution_trace(small_trace()), want);
}

class ChakraEtFile : public TempDirTest {
 protected:
  // Writes `content` and expects reading it to fail naming the file, `record`
  // and `field`, with `reason` in the message.
  void expect_error(const std::string& content, std::optional<std::int64_t> record,
                    const std::string& field, const std::string& reason) {
    const auto path = dir_ / "bad.0.et";
    write_file_bytes(path, content);
    try {
      read_execution_trace(path);
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      EXPECT_EQ(e.where().file, path.string()) << e.what();
      EXPECT_EQ(e.where().record, record) << e.what();
      EXPECT_EQ(e.where().field, field) << e.what();
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  }
};

TEST_F(ChakraEtFile, ReadsBackWhatItWrites) {
  const auto path = dir_ / "t.0.et";
  write_execution_trace(path, small_trace());
  DecodeCounts counts;
  const ExecutionTrace back = read_execution_trace(path, &counts);
  EXPECT_EQ(back.metadata.version, "0.0.4");
  ASSERT_EQ(back.nodes.size(), 1u);
  const Node& n = back.nodes[0];
  EXPECT_EQ(n.id, 1u);
  EXPECT_EQ(n.name, "a");
  EXPECT_EQ(n.type, 4);
  EXPECT_EQ(n.data_deps, std::vector<std::uint64_t>{0});
  EXPECT_EQ(n.duration_micros, 5u);
  ASSERT_NE(n.attr("comm_size"), nullptr);
  EXPECT_EQ(n.attr("comm_size")->type, AttrType::kInt64);
  EXPECT_EQ(n.attr("comm_size")->as_int64(), 1048576);
  EXPECT_EQ(n.attr("is_cpu_op")->as_int64(), 0);
  EXPECT_EQ(counts.unknown_fields, 0);
}

TEST_F(ChakraEtFile, GzipIsRecognisedByContent) {
  const auto gz = dir_ / "t.0.et.gz";
  write_execution_trace(gz, small_trace());
  EXPECT_EQ(static_cast<unsigned char>(read_file_bytes(gz)[0]), 0x1f);
  // Renamed without its .gz: still read as gzip.
  std::filesystem::rename(gz, dir_ / "t.0.et");
  EtFileReader reader(dir_ / "t.0.et");
  EXPECT_TRUE(reader.compressed());
  Node n;
  ASSERT_TRUE(reader.next(n));
  EXPECT_EQ(n.name, "a");
  EXPECT_FALSE(reader.next(n));
}

TEST_F(ChakraEtFile, UnpackedDependenciesAndUnknownFieldsAreRead) {
  // A COMP_NODE whose deps are written one varint each (proto2 style), then
  // field 99, unknown.
  const std::string node =
      bytes({0x08, 0x07, 0x18, 0x04, 0x20, 0x03, 0x20, 0x04, 0x28, 0x05, 0x98, 0x06, 0x01});
  write_file_bytes(dir_ / "u.0.et", bytes({0x00, static_cast<int>(node.size())}) + node);
  DecodeCounts counts;
  const auto et = read_execution_trace(dir_ / "u.0.et", &counts);
  ASSERT_EQ(et.nodes.size(), 1u);
  EXPECT_EQ(et.nodes[0].id, 7u);
  EXPECT_EQ(et.nodes[0].ctrl_deps, (std::vector<std::uint64_t>{3, 4}));
  EXPECT_EQ(et.nodes[0].data_deps, std::vector<std::uint64_t>{5});
  EXPECT_EQ(counts.unknown_fields, 1);
}

TEST(ChakraEtAttributes, EveryMemberRoundTrips) {
  Node n;
  n.id = 3;
  const auto scalar = [&n](AttrType type, std::uint64_t bits) {
    Attribute a;
    a.name = std::string(attr_type_name(type));
    a.type = type;
    a.bits = bits;
    n.attrs.push_back(a);
  };
  const auto minus_one = std::numeric_limits<std::uint64_t>::max();
  for (const AttrType t : {AttrType::kInt32, AttrType::kInt64, AttrType::kSint32, AttrType::kSint64,
                           AttrType::kSfixed32, AttrType::kSfixed64}) {
    scalar(t, minus_one);  // -1
  }
  scalar(AttrType::kUint32, 4000000000u);
  scalar(AttrType::kUint64, minus_one);
  scalar(AttrType::kFixed32, 4000000000u);
  scalar(AttrType::kFixed64, minus_one);
  scalar(AttrType::kBool, 1);
  Attribute d;
  d.name = "d";
  d.type = AttrType::kDouble;
  d.real = 2.5;
  n.attrs.push_back(d);
  Attribute s = Attribute::string("s", "h\xc3\xa9");
  n.attrs.push_back(s);
  Attribute list;
  list.name = "l";
  list.type = AttrType::kSint64List;
  list.list_bits = {1, minus_one, 300};
  n.attrs.push_back(list);
  n.attrs.push_back(Attribute::bool_list("involved_dim", {true, false, true}));
  Attribute texts;
  texts.name = "t";
  texts.type = AttrType::kStringList;
  texts.list_texts = {"x", "", "yz"};
  n.attrs.push_back(texts);

  DecodeCounts counts;
  const Node back = decode_node(encode_node(n), counts);
  EXPECT_EQ(encode_node(back), encode_node(n));
  for (const AttrType t : {AttrType::kInt32, AttrType::kInt64, AttrType::kSint32, AttrType::kSint64,
                           AttrType::kSfixed32, AttrType::kSfixed64}) {
    EXPECT_EQ(back.attr(attr_type_name(t))->as_int64(), -1) << attr_type_name(t);
  }
  EXPECT_EQ(back.attr("uint32_val")->as_int64(), 4000000000);
  EXPECT_EQ(back.attr("uint64_val")->as_int64(), std::nullopt);  // 2^64-1 is no int64
  EXPECT_EQ(back.attr("bool_val")->as_int64(), 1);
  EXPECT_EQ(back.attr("d")->real, 2.5);
  EXPECT_EQ(back.attr("s")->text, "h\xc3\xa9");
  EXPECT_EQ(back.attr("l")->list_bits, (std::vector<std::uint64_t>{1, minus_one, 300}));
  EXPECT_EQ(back.attr("involved_dim")->list_bits, (std::vector<std::uint64_t>{1, 0, 1}));
  EXPECT_EQ(back.attr("t")->list_texts, (std::vector<std::string>{"x", "", "yz"}));
}

TEST(ChakraEtAttributes, ANegativeInt32IsTenBytesOnTheWire) {
  // protobuf.dev: negative int32 values are sign-extended to 64 bits.
  Node n;
  n.attrs.push_back(Attribute::int32("comm_src", -1));
  const std::string wire = encode_node(n);
  EXPECT_NE(wire.find(bytes({0x38, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})),
            std::string::npos);
}

TEST_F(ChakraEtFile, AnEmptyFileIsAnError) { expect_error("", std::nullopt, "", "empty file"); }

TEST_F(ChakraEtFile, ARecordLongerThanTheFileIsAnError) {
  const std::string meta = bytes({0x07, 0x0a, 0x05}) + "0.0.4";
  expect_error(meta + bytes({0x10, 0x08, 0x01}), 1, "", "the file is truncated");
}

TEST_F(ChakraEtFile, AHugeLengthPrefixIsAnError) {
  expect_error(bytes({0xff, 0xff, 0xff, 0xff, 0x0f}), 0, "", "more than the");
}

TEST_F(ChakraEtFile, AnOverlongVarintIsAnError) {
  std::string prefix(11, static_cast<char>(0x80));
  expect_error(prefix, 0, "", "is not a varint");
}

TEST_F(ChakraEtFile, AFieldOfTheWrongWireTypeNamesTheField) {
  const std::string meta = bytes({0x07, 0x0a, 0x05}) + "0.0.4";
  // name (field 2) written as a varint.
  expect_error(meta + bytes({0x02, 0x10, 0x01}), 1, "Node.name", "wire type 0");
}

TEST_F(ChakraEtFile, AGroupIsAnError) {
  const std::string meta = bytes({0x07, 0x0a, 0x05}) + "0.0.4";
  expect_error(meta + bytes({0x01, 0x0b}), 1, "Node", "group");
}

TEST_F(ChakraEtFile, AnAttributeRunningPastItsMessageNamesTheAttribute) {
  const std::string meta = bytes({0x07, 0x0a, 0x05}) + "0.0.4";
  // attr of 3 bytes whose name claims 9.
  expect_error(meta + bytes({0x05, 0x52, 0x03, 0x0a, 0x09, 0x61}), 1, "Node.attr[0].name",
               "runs past the end");
}

TEST_F(ChakraEtFile, ANameThatIsNotUtf8IsAnError) {
  const std::string meta = bytes({0x07, 0x0a, 0x05}) + "0.0.4";
  expect_error(meta + bytes({0x03, 0x12, 0x01, 0xff}), 1, "Node.name", "not valid UTF-8");
}

TEST_F(ChakraEtFile, AFolderIsRefused) { EXPECT_THROW(read_execution_trace(dir_), InputError); }

}  // namespace
}  // namespace ssgd::chakra
