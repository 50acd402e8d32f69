// The simulated DAG as Chakra ETs (presentation/report/chakra_export.h), checked
// node by node on a two-layer job of two ranks: types and attribute members
// as ASTRA-sim reads them, dependencies inside each rank's file, the
// resource order as ctrl_deps, and times in microseconds and nanoseconds.
#include "presentation/report/chakra_export.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "common/error.h"
#include "simulator/replay/replay.h"
#include "tests/support/test_files.h"
#include "traces/chakra/et_file.h"

namespace ssgd::sim {
namespace {

using chakra::AttrType;
using chakra::Node;

class ChakraExportTest : public ssgd::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    profile_.layers.push_back(
        {0, "l0", Duration(1'000'400), Duration(2'000'600), 4 << 20, std::nullopt, std::nullopt, std::nullopt});
    profile_.layers.push_back(
        {1, "l1", Duration(3'000'000), Duration(5'000'000), 8 << 20, std::nullopt, std::nullopt, std::nullopt});
    scenario_.nodes = 2;
    scenario_.gpus_per_node = 1;
    scenario_.iterations = 1;
    scenario_.io_time = Duration(700);
    scenario_.update_time = Duration(90'000);
    ReplayOptions o;
    o.keep_schedule = true;
    o.fold_ranks = false;
    o.single_worker_baseline = false;
    result_ = replay(profile_, scenario_, o);
    summary_ = report::export_chakra(*result_.task_graph, *result_.schedule, 2, dir_, {});
  }
  // The node of `kind` (and `layer`) in a rank's file.
  static const Node& find(const chakra::ExecutionTrace& et, const std::string& kind,
                          int layer = -1) {
    for (const auto& n : et.nodes) {
      const auto* k = n.attr("ssgd_task_kind");
      const auto* l = n.attr("ssgd_layer");
      if (k != nullptr && k->text == kind && l != nullptr && l->as_int64() == layer) return n;
    }
    throw std::runtime_error("no " + kind + " node of layer " + std::to_string(layer));
  }
  static std::int64_t attr(const Node& n, const char* name) { return *n.attr(name)->as_int64(); }

  trace::LayerProfile profile_;
  Scenario scenario_;
  ReplayResult result_;
  report::ChakraExportSummary summary_;
};

TEST_F(ChakraExportTest, OneFilePerRankWithItsTasksAndEveryCollective) {
  EXPECT_EQ(summary_.ranks, 2);
  EXPECT_EQ(summary_.collectives, 2);  // one all-reduce per layer under wfbp
  EXPECT_EQ(summary_.cross_rank_edges, 0);
  const auto r0 = chakra::read_execution_trace(dir_ / "ssgd.0.et");
  const auto r1 = chakra::read_execution_trace(dir_ / "ssgd.1.et");
  EXPECT_EQ(r0.metadata.version, "0.0.4");
  // io, h2d, 2 forward, 2 backward, update, and the 2 collectives.
  EXPECT_EQ(r0.nodes.size(), 9u);
  EXPECT_EQ(r1.nodes.size(), 9u);
  EXPECT_EQ(summary_.nodes, 18);
  // A collective has the same id in every rank's file.
  EXPECT_EQ(find(r0, "comm", 1).id, find(r1, "comm", 1).id);
  EXPECT_NE(find(r0, "forward", 0).id, find(r1, "forward", 0).id);
}

TEST_F(ChakraExportTest, CollectivesAreTypedAsAstraSimReadsThem) {
  const auto r0 = chakra::read_execution_trace(dir_ / "ssgd.0.et");
  const Node& c = find(r0, "comm", 1);
  EXPECT_EQ(c.type, static_cast<std::int32_t>(chakra::NodeType::kCommColl));
  EXPECT_EQ(c.attr("comm_type")->type, AttrType::kInt64);
  EXPECT_EQ(attr(c, "comm_type"), 0);  // ALL_REDUCE
  EXPECT_EQ(c.attr("comm_size")->type, AttrType::kInt64);
  EXPECT_EQ(attr(c, "comm_size"), 8 << 20);
  EXPECT_EQ(c.attr("is_cpu_op")->type, AttrType::kBool);
  EXPECT_EQ(attr(c, "is_cpu_op"), 0);
  EXPECT_EQ(c.attr("pg_name"), nullptr);  // every rank
  EXPECT_EQ(attr(find(r0, "io"), "is_cpu_op"), 1);
  EXPECT_EQ(find(r0, "forward", 0).type, static_cast<std::int32_t>(chakra::NodeType::kComp));
}

TEST_F(ChakraExportTest, DependenciesStayInsideTheRanksFile) {
  const auto r0 = chakra::read_execution_trace(dir_ / "ssgd.0.et");
  // The layer-1 all-reduce waits for layer 1's backward of rank 0 (rank 1's
  // is in rank 1's file).
  const Node& c1 = find(r0, "comm", 1);
  EXPECT_EQ(c1.data_deps, std::vector<std::uint64_t>{find(r0, "backward", 1).id});
  // Backward runs from the last layer down: layer 0's waits for layer 1's.
  const Node& b0 = find(r0, "backward", 0);
  EXPECT_NE(std::find(b0.data_deps.begin(), b0.data_deps.end(), find(r0, "backward", 1).id),
            b0.data_deps.end());
  // The network runs layer 1's all-reduce before layer 0's; and a control
  // dependency (the order a resource ran its tasks in) never repeats a data one.
  const Node& c0 = find(r0, "comm", 0);
  const auto has = [](const std::vector<std::uint64_t>& v, std::uint64_t id) {
    return std::find(v.begin(), v.end(), id) != v.end();
  };
  EXPECT_TRUE(has(c0.data_deps, c1.id) || has(c0.ctrl_deps, c1.id));
  for (const auto& n : r0.nodes) {
    for (const auto d : n.ctrl_deps) EXPECT_FALSE(has(n.data_deps, d)) << n.name;
  }
}

TEST_F(ChakraExportTest, TimesInMicrosecondsAndNanoseconds) {
  const auto r0 = chakra::read_execution_trace(dir_ / "ssgd.0.et");
  const Node& f0 = find(r0, "forward", 0);
  EXPECT_EQ(attr(f0, "ssgd_duration_ns"), 1'000'400);
  EXPECT_EQ(f0.duration_micros, 1000u);  // 1000.4 us rounds down
  const Node& b0 = find(r0, "backward", 0);
  EXPECT_EQ(attr(b0, "ssgd_duration_ns"), 2'000'600);
  EXPECT_EQ(b0.duration_micros, 2001u);  // 2000.6 us rounds up
  const Node& io = find(r0, "io");
  EXPECT_EQ(attr(io, "ssgd_start_ns"), 0);
  EXPECT_EQ(attr(io, "ssgd_duration_ns"), 700);
  EXPECT_EQ(io.duration_micros, 1u);
  EXPECT_EQ(attr(f0, "ssgd_start_ns"), 700);  // after io (h2d takes no time)
  EXPECT_EQ(f0.start_time_micros, 1u);
  EXPECT_EQ(attr(f0, "ssgd_iteration"), 0);
}

TEST_F(ChakraExportTest, StaleRanksOfAnEarlierExportAreRefused) {
  ssgd::testing::write_file_bytes(dir_ / "ssgd.7.et.gz", "x");
  EXPECT_THROW(report::export_chakra(*result_.task_graph, *result_.schedule, 2, dir_, {}),
               InputError);
  // Another prefix is no concern of this export.
  EXPECT_NO_THROW(
      report::export_chakra(*result_.task_graph, *result_.schedule, 2, dir_, {"other", false}));
}

}  // namespace
}  // namespace ssgd::sim
