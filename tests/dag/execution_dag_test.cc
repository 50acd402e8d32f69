// The task graph of an execution graph (dag/execution_dag.h): collectives
// shared by their group's members, sends paired with receives, resources
// by what a node does, and the errors of graphs that cannot run.
#include "dag/execution_dag.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "common/error.h"
#include "tests/support/test_files.h"
#include "traces/proto/trace_events.pb.h"
#include "traces/trace_writer.h"
#include "walk/execution_graph_reader.h"

namespace ssgd::dag {
namespace {

namespace v1 = trace::v1;

GraphNodeWork node(std::uint64_t id, GraphNodeKind kind, std::int64_t ns,
                   std::vector<std::uint32_t> deps = {}) {
  GraphNodeWork n;
  n.id = id;
  n.name = fmt::format("n{}", id);
  n.kind = kind;
  n.duration = Duration(ns);
  n.deps = std::move(deps);
  if (kind == GraphNodeKind::kCollective) {
    n.op = v1::Collective::ALL_REDUCE;
    n.bytes = 1000;
  }
  return n;
}

ExecutionGraph two_ranks() {
  // Each rank: compute (rank r: 100 + 50 r ns) -> all-reduce -> compute 10 ns.
  ExecutionGraph g;
  g.world = 2;
  g.ranks.resize(2);
  for (int r = 0; r < 2; ++r) {
    g.ranks[r] = {node(1, GraphNodeKind::kCompute, 100 + 50 * r),
                  node(2, GraphNodeKind::kCollective, 7, {0}),
                  node(3, GraphNodeKind::kCompute, 10, {1})};
  }
  g.nodes = 6;
  return g;
}

const GraphCommTime kModelled = [](const GraphCommCall& c) -> std::optional<Duration> {
  return Duration(c.bytes);  // 1 ns a byte
};
const GraphCommTime kRecorded = [](const GraphCommCall&) -> std::optional<Duration> {
  return std::nullopt;
};

TEST(ExecutionDag, ACollectiveIsOneTaskSharedByItsMembers) {
  const auto dag = build_execution_dag(two_ranks(), kModelled, "g.ssgdt");
  EXPECT_EQ(dag.graph.task_count(), 5u);  // 2 x 2 compute + 1 all-reduce
  EXPECT_EQ(dag.collectives, 1);
  EXPECT_EQ(dag.comm_modelled, 1);
  ASSERT_EQ(dag.comm.size(), 1u);
  EXPECT_TRUE(dag.comm[0].whole_world);
  EXPECT_EQ(dag.comm[0].ranks, 2);
  const auto& ar = dag.graph.task(0);
  EXPECT_EQ(ar.kind, TaskKind::kComm);
  EXPECT_EQ(ar.rank, kAllRanks);
  EXPECT_EQ(ar.duration, Duration(1000));
  EXPECT_TRUE(ar.duration_modelled);
  EXPECT_EQ(dag.graph.predecessors(0).size(), 2u);  // each rank's first compute
  EXPECT_EQ(dag.graph.successors(0).size(), 2u);
}

TEST(ExecutionDag, WithoutAModelTheLongestRecordedTimeIsReplayed) {
  auto g = two_ranks();
  g.ranks[1][1].duration = Duration(9);
  const auto dag = build_execution_dag(g, kRecorded, "g.ssgdt");
  EXPECT_EQ(dag.graph.task(0).duration, Duration(9));
  EXPECT_FALSE(dag.graph.task(0).duration_modelled);
  EXPECT_EQ(dag.comm_replayed, 1);
}

TEST(ExecutionDag, MembersMustAgreeOnTheCollective) {
  auto g = two_ranks();
  g.ranks[1][1].bytes = 999;
  try {
    build_execution_dag(g, kModelled, "g.ssgdt");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "g.ssgdt");
    EXPECT_EQ(e.where().field, "graph_node.size_bytes");
    EXPECT_NE(std::string(e.what()).find("rank 1 node 2"), std::string::npos) << e.what();
  }
}

TEST(ExecutionDag, AMemberMissingACollectiveIsAnError) {
  auto g = two_ranks();
  g.ranks[1].erase(g.ranks[1].begin() + 1);
  g.ranks[1][1].deps = {0};
  EXPECT_THROW(build_execution_dag(g, kModelled, "g.ssgdt"), InputError);
}

TEST(ExecutionDag, ASendIsPairedWithItsReceive) {
  ExecutionGraph g;
  g.world = 2;
  g.ranks.resize(2);
  auto send = node(1, GraphNodeKind::kSend, 5);
  send.peer = 1;
  send.bytes = 64;
  auto recv = node(1, GraphNodeKind::kRecv, 8);
  recv.peer = 0;
  recv.bytes = 64;
  g.ranks[0] = {send};
  g.ranks[1] = {recv, node(2, GraphNodeKind::kCompute, 3, {0})};
  const auto dag = build_execution_dag(g, kRecorded, "g.ssgdt");
  EXPECT_EQ(dag.point_to_point, 1);
  EXPECT_EQ(dag.graph.task(0).duration, Duration(8));
  EXPECT_EQ(dag.comm[0].ranks, 2);

  g.ranks[1][0].tag = 3;  // no longer the send's receive
  try {
    build_execution_dag(g, kRecorded, "g.ssgdt");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("each send needs its receive"), std::string::npos)
        << e.what();
  }
}

TEST(ExecutionDag, ResourcesFollowWhatANodeDoes) {
  ExecutionGraph g;
  g.world = 1;
  g.ranks.resize(1);
  auto cpu = node(2, GraphNodeKind::kCompute, 5);
  cpu.on_cpu = true;
  auto io = node(3, GraphNodeKind::kCompute, 5);
  io.task_kind = "io";
  g.ranks[0] = {node(1, GraphNodeKind::kCompute, 5), cpu, io, node(4, GraphNodeKind::kMemory, 5),
                node(5, GraphNodeKind::kMetadata, 99)};
  const auto dag = build_execution_dag(g, kModelled, "g.ssgdt");
  const auto& t = dag.graph;
  EXPECT_NE(t.task(0).resource, t.task(1).resource);  // GPU vs CPU
  EXPECT_EQ(t.task(2).kind, TaskKind::kIo);
  EXPECT_EQ(t.task(2).resource, t.task(3).resource);  // io and memory share the io resource
  EXPECT_EQ(t.task(4).duration, Duration::zero());    // metadata takes no time
}

TEST(ExecutionDag, RanksWaitingForEachOtherAreAnInputError) {
  // Rank 0 receives from 1 before sending to it, and rank 1 likewise.
  ExecutionGraph g;
  g.world = 2;
  g.ranks.resize(2);
  for (int r = 0; r < 2; ++r) {
    auto recv = node(1, GraphNodeKind::kRecv, 1);
    recv.peer = 1 - r;
    auto send = node(2, GraphNodeKind::kSend, 1, {0});
    send.peer = 1 - r;
    g.ranks[r] = {recv, send};
  }
  try {
    build_execution_dag(g, kRecorded, "g.ssgdt");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "g.ssgdt");
    EXPECT_NE(std::string(e.what()).find("wait for each other"), std::string::npos) << e.what();
  }
}

TEST(ExecutionDag, ASendToItselfIsOneTask) {
  // The fuzzer's first finding: a rank's receive from itself waits for its
  // send to itself; both are one task, and the edge between them is dropped.
  ExecutionGraph g;
  g.world = 1;
  auto send = node(1, GraphNodeKind::kSend, 4);
  send.peer = 0;
  auto recv = node(2, GraphNodeKind::kRecv, 6, {0});
  recv.peer = 0;
  g.ranks = {{send, recv}};
  const auto dag = build_execution_dag(g, kRecorded, "g.ssgdt");
  EXPECT_EQ(dag.graph.task_count(), 1u);
  EXPECT_EQ(dag.graph.edge_count(), 0u);
  EXPECT_EQ(dag.graph.task(0).duration, Duration(6));
}

// A graph trace from elsewhere (ssgd pack) is checked where it is read, by
// the rules the import applies (traces/graph_node_check.h).
class ExecutionGraphRead : public ssgd::testing::TempDirTest {
 protected:
  // Writes rank 0's nodes (id, then the ids it depends on) and reads them back.
  ExecutionGraph write_and_read(const std::vector<std::vector<std::uint64_t>>& nodes) {
    const auto path = dir_ / "g.ssgdt";
    v1::CaptureMetadata metadata;
    metadata.set_world_size(1);
    trace::TraceWriter writer(path, metadata);
    for (const auto& ids : nodes) {
      v1::Event e;
      auto* n = e.mutable_graph_node();
      n->set_id(ids[0]);
      n->set_name(fmt::format("n{}", ids[0]));
      n->set_kind(v1::GraphNode::COMPUTE);
      for (std::size_t k = 1; k < ids.size(); ++k) n->add_data_deps(ids[k]);
      writer.append(e);
    }
    writer.close();
    auto reader = trace::TraceReader::open(path);
    return walk::read_execution_graph(reader, path.string());
  }
  void expect_error(const std::vector<std::vector<std::uint64_t>>& nodes, const std::string& field,
                    const std::string& what) {
    try {
      write_and_read(nodes);
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      EXPECT_EQ(e.where().field, field) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  }
};

TEST_F(ExecutionGraphRead, DependenciesBecomeIndices) {
  const auto g = write_and_read({{7}, {9, 7}});
  ASSERT_EQ(g.ranks.size(), 1u);
  EXPECT_EQ(g.ranks[0][1].deps, std::vector<std::uint32_t>{0});
  EXPECT_EQ(g.nodes, 2);
}

TEST_F(ExecutionGraphRead, ARanksCycleNamesItsNodes) {
  expect_error({{1, 2}, {2, 1}}, "graph_node.data_deps",
               "rank 0: node 1 'n1' is on a dependency cycle (nodes 1 -> 2)");
}

TEST_F(ExecutionGraphRead, AnIdUsedTwiceNamesBothEvents) {
  expect_error({{1}, {1}}, "graph_node.id", "event 1: rank 0: node id 1 is used again: event 0");
}

TEST_F(ExecutionGraphRead, ADanglingDependencyNamesTheNode) {
  expect_error({{1, 5}}, "graph_node.data_deps", "node 1 'n1' depends on node 5");
}

}  // namespace
}  // namespace ssgd::dag
