// `ssgd import chakra` (traces/import/chakra): per-rank files found and
// ranked, nodes mapped to GraphNode events, each rank's graph checked, and
// what ssgd does not use counted.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "tests/support/test_files.h"
#include "traces/chakra/et_file.h"
#include "traces/import/chakra/chakra_import.h"
#include "traces/trace_reader.h"

namespace ssgd::trace {
namespace {

using chakra::Attribute;
using chakra::NodeType;
using ssgd::testing::TempDirTest;

chakra::Node comp(std::uint64_t id, std::uint64_t micros, std::vector<std::uint64_t> deps = {}) {
  chakra::Node n;
  n.id = id;
  n.name = "comp" + std::to_string(id);
  n.type = static_cast<std::int32_t>(NodeType::kComp);
  n.duration_micros = micros;
  n.data_deps = std::move(deps);
  return n;
}

chakra::Node all_reduce(std::uint64_t id, std::int64_t bytes,
                        std::vector<std::uint64_t> deps = {}) {
  chakra::Node n;
  n.id = id;
  n.name = "ar" + std::to_string(id);
  n.type = static_cast<std::int32_t>(NodeType::kCommColl);
  n.data_deps = std::move(deps);
  n.attrs = {Attribute::int64("comm_type", 0), Attribute::int64("comm_size", bytes)};
  return n;
}

class ChakraImport : public TempDirTest {
 protected:
  void write_rank(int rank, const std::vector<chakra::Node>& nodes,
                  const std::string& prefix = "job", std::vector<Attribute> metadata = {}) {
    chakra::ExecutionTrace et;
    et.metadata.version = "0.0.4";
    et.metadata.attrs = std::move(metadata);
    et.nodes = nodes;
    chakra::write_execution_trace(dir_ / (prefix + "." + std::to_string(rank) + ".et"), et);
  }
  std::vector<v1::Event> read_output() {
    auto reader = TraceReader::open(dir_ / "out.ssgdt");
    std::vector<v1::Event> events;
    v1::Event e;
    while (reader.next(e)) events.push_back(e);
    return events;
  }
  // Expects the import of dir_ to fail with an InputError whose message
  // holds each of `parts`.
  void expect_error(const std::vector<std::string>& parts) {
    try {
      import_chakra({dir_}, dir_ / "out.ssgdt");
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      for (const auto& p : parts) {
        EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << "\nwant: " << p;
      }
    }
    EXPECT_FALSE(std::filesystem::exists(dir_ / "out.ssgdt"));
  }
};

TEST_F(ChakraImport, MapsEveryNodeOfEveryRank) {
  for (int r = 0; r < 2; ++r) {
    chakra::Node c = comp(1, 7);
    c.start_time_micros = 2;
    c.attrs.push_back(Attribute::boolean("is_cpu_op", r == 1));
    c.attrs.push_back(Attribute::int64("num_ops", 10));
    c.attrs.push_back(Attribute::string("my_annotation", "x"));
    write_rank(r, {c, all_reduce(2, 4096, {1})});
  }
  const auto summary = import_chakra({dir_}, dir_ / "out.ssgdt");
  EXPECT_EQ(summary.nodes, 4);
  EXPECT_EQ(summary.dependencies, 2);
  EXPECT_EQ(summary.counts.nodes_by_type.at("COMP_NODE"), 2);
  EXPECT_EQ(summary.counts.nodes_by_type.at("COMM_COLL_NODE"), 2);
  EXPECT_EQ(summary.counts.unused_attributes.at("num_ops"), 2);
  EXPECT_EQ(summary.counts.unknown_attributes.at("my_annotation"), 2);
  std::ostringstream printed;
  print_chakra_import_summary(summary, dir_ / "out.ssgdt", printed);
  EXPECT_NE(printed.str().find("my_annotation x2"), std::string::npos) << printed.str();

  const auto events = read_output();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].rank(), 0);
  EXPECT_EQ(events[2].rank(), 1);
  const auto& c = events[0].graph_node();
  EXPECT_EQ(c.kind(), v1::GraphNode::COMPUTE);
  EXPECT_EQ(c.start_ns(), 2000);
  EXPECT_EQ(c.end_ns(), 9000);
  EXPECT_FALSE(c.on_cpu());
  EXPECT_TRUE(events[2].graph_node().on_cpu());
  const auto& ar = events[1].graph_node();
  EXPECT_EQ(ar.kind(), v1::GraphNode::COLLECTIVE);
  EXPECT_EQ(ar.op(), v1::Collective::ALL_REDUCE);
  EXPECT_EQ(ar.size_bytes(), 4096);
  EXPECT_EQ(ar.data_deps_size(), 1);
  EXPECT_EQ(ar.source_type(), "COMM_COLL_NODE");
  auto reader = TraceReader::open(dir_ / "out.ssgdt");
  EXPECT_EQ(reader.metadata().world_size(), 2);
}

// The ranks' shape `ssgd export chakra` records (ssgd_nodes x
// ssgd_gpus_per_node in GlobalMetadata) becomes the trace's hosts: a host per
// node, with its GPUs. A shape that is not the files' count, or half of one,
// is refused naming the attribute.
TEST_F(ChakraImport, TheRecordedShapeBecomesTheHosts) {
  const std::vector<Attribute> shape = {Attribute::int64("ssgd_nodes", 2),
                                        Attribute::int64("ssgd_gpus_per_node", 2)};
  for (int r = 0; r < 4; ++r) write_rank(r, {comp(1, 5)}, "job", shape);
  const auto summary = import_chakra({dir_}, dir_ / "out.ssgdt");
  EXPECT_EQ(summary.shape_nodes, 2);
  EXPECT_EQ(summary.shape_gpus_per_node, 2);
  std::ostringstream printed;
  print_chakra_import_summary(summary, dir_ / "out.ssgdt", printed);
  EXPECT_NE(printed.str().find("shape        2 nodes x 2 GPUs"), std::string::npos) << printed.str();
  {
    auto reader = TraceReader::open(dir_ / "out.ssgdt");
    ASSERT_EQ(reader.metadata().hosts_size(), 2);
    EXPECT_EQ(reader.metadata().hosts(1).hostname(), "node1");
    EXPECT_EQ(reader.metadata().hosts(1).gpus_size(), 2);
  }
  std::filesystem::remove(dir_ / "out.ssgdt");
  write_rank(0, {comp(1, 5)}, "job", {Attribute::int64("ssgd_nodes", 3), shape[1]});
  expect_error({"job.0.et", "GlobalMetadata attr ssgd_nodes", "3 nodes x 2 GPUs is not the 4 rank files"});
  write_rank(0, {comp(1, 5)}, "job", {shape[1]});
  expect_error({"GlobalMetadata attr ssgd_nodes", "is missing"});
  write_rank(0, {comp(1, 5)}, "job", {shape[0], Attribute::string("ssgd_gpus_per_node", "two")});
  expect_error({"GlobalMetadata attr ssgd_gpus_per_node", "expected a positive integer"});
  // Without the attributes nothing is said of the shape, and the summary says so.
  write_rank(0, {comp(1, 5)});
  const auto none = import_chakra({dir_}, dir_ / "out.ssgdt");
  EXPECT_EQ(none.shape_nodes, 0);
  std::ostringstream plain;
  print_chakra_import_summary(none, dir_ / "out.ssgdt", plain);
  EXPECT_NE(plain.str().find("shape        not recorded"), std::string::npos) << plain.str();
}

TEST_F(ChakraImport, NanosecondAttributesWinOverMicroseconds) {
  chakra::Node c = comp(1, 3);
  c.attrs = {Attribute::int64("ssgd_start_ns", 1234), Attribute::int64("ssgd_duration_ns", 2999),
             Attribute::string("ssgd_task_kind", "backward"), Attribute::int64("ssgd_layer", 4)};
  write_rank(0, {c});
  import_chakra({dir_ / "job.0.et"}, dir_ / "out.ssgdt");
  const auto n = read_output().at(0).graph_node();
  EXPECT_EQ(n.start_ns(), 1234);
  EXPECT_EQ(n.end_ns(), 1234 + 2999);
  EXPECT_EQ(n.task_kind(), "backward");
  EXPECT_EQ(n.layer(), 4);
  EXPECT_EQ(n.iteration(), -1);
}

TEST_F(ChakraImport, UnknownTypesAndUnmodelledCollectivesAreCountedNotDropped) {
  chakra::Node odd = comp(1, 1);
  odd.type = 42;
  chakra::Node barrier = all_reduce(2, 0);
  barrier.attrs[0] = Attribute::int64("comm_type", 9);
  write_rank(0, {odd, barrier});
  const auto s = import_chakra({dir_}, dir_ / "out.ssgdt");
  EXPECT_EQ(s.counts.unknown_node_types, 1);
  EXPECT_EQ(s.counts.unmodelled_collectives.at("BARRIER"), 1);
  const auto events = read_output();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].graph_node().kind(), v1::GraphNode::UNKNOWN);
  EXPECT_EQ(events[0].graph_node().source_type(), "NODE_TYPE_42");
  EXPECT_EQ(events[1].graph_node().op(), v1::Collective::UNKNOWN);
}

TEST_F(ChakraImport, ADanglingDependencyNamesTheNode) {
  write_rank(0, {comp(1, 1), comp(2, 1, {9})});
  expect_error({"job.0.et", "record 2", "data_deps", "node 2 'comp2' depends on node 9"});
}

TEST_F(ChakraImport, ACycleNamesANodeOnIt) {
  write_rank(0, {comp(1, 1, {3}), comp(2, 1, {1}), comp(3, 1, {2}), comp(4, 1)});
  expect_error({"job.0.et", "dependency cycle", "1 -> 3 -> 2"});
}

TEST_F(ChakraImport, ADuplicateIdIsAnError) {
  write_rank(0, {comp(1, 1), comp(1, 2)});
  expect_error({"record 2", "node id 1 is used again: record 1"});
}

TEST_F(ChakraImport, ACollectiveNeedsItsTypeAndSize) {
  chakra::Node ar = all_reduce(1, 8);
  ar.attrs.erase(ar.attrs.begin());
  write_rank(0, {ar});
  expect_error({"field 'attr comm_type'", "is missing"});
}

TEST_F(ChakraImport, AnAttributeOfTheWrongTypeNamesIt) {
  chakra::Node ar = all_reduce(1, 8);
  ar.attrs[1] = Attribute::string("comm_size", "8");
  write_rank(0, {ar});
  expect_error({"field 'attr comm_size'", "is a string_val; an integer is expected"});
}

TEST_F(ChakraImport, AMissingRankIsAnError) {
  write_rank(0, {comp(1, 1)});
  write_rank(2, {comp(1, 1)});
  expect_error({"rank 1 is missing"});
}

TEST_F(ChakraImport, TwoPrefixesAreAnError) {
  write_rank(0, {comp(1, 1)}, "a");
  write_rank(1, {comp(1, 1)}, "b");
  expect_error({"one job's files share one prefix"});
}

TEST_F(ChakraImport, NoNodeIsAnError) {
  write_rank(0, {});
  expect_error({"no node: nothing to replay"});
}

TEST(ChakraFileNames, RankAndPrefix) {
  std::string prefix;
  std::int64_t rank = -1;
  EXPECT_TRUE(chakra::parse_file_name("all_reduce.12.et", prefix, rank));
  EXPECT_EQ(prefix, "all_reduce");
  EXPECT_EQ(rank, 12);
  EXPECT_TRUE(chakra::parse_file_name("a.b.3.et.gz", prefix, rank));
  EXPECT_EQ(prefix, "a.b");
  EXPECT_EQ(rank, 3);
  EXPECT_FALSE(chakra::parse_file_name("a.et", prefix, rank));
  EXPECT_FALSE(chakra::parse_file_name("a.x.et", prefix, rank));
  EXPECT_FALSE(chakra::parse_file_name("a.1.json", prefix, rank));
}

}  // namespace
}  // namespace ssgd::trace
