// Flows per second of the flow-level network model (simulator/network/):
// all-reduces run step by step by the CollectiveRunner on a fresh engine and
// FlowNetwork, on the generic platform of heterogeneous_wall.sh's flow case
// (8 GPUs a node on NVLink 2, EDR InfiniBand between nodes). Arguments: GPUs,
// the algorithm (0 double binary tree, 1 ring, 2 hierarchical), and how many
// collectives run at once (1: one after another, as WFBP issues them; 2: two
// at a time, so their flows share links). Each pass runs the sizes of
// ResNet-50's gradient groups that matter for the tree (512 B to 4 MiB).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "simulator/engine/engine.h"
#include "simulator/network/collective_runner.h"
#include "simulator/network/flow_network.h"
#include "simulator/scenario/scenario_network.h"

namespace {

using ssgd::sim::CollectiveAlgorithm;
using ssgd::sim::CollectiveOp;

void BM_FlowAllReduce(benchmark::State& state) {
  ssgd::sim::Scenario s;
  s.gpus_per_node = 8;
  s.nodes = state.range(0) / 8;
  s.intra_node.preset = "nvlink2";
  s.inter_node.preset = "ib_edr100";
  s.network_model = "flow";
  const CollectiveAlgorithm algorithms[] = {CollectiveAlgorithm::kDoubleBinaryTree,
                                            CollectiveAlgorithm::kRing,
                                            CollectiveAlgorithm::kHierarchical};
  s.algorithm = algorithms[state.range(1)];
  const auto at_once = static_cast<int>(state.range(2));
  const ssgd::sim::CommModel comm = ssgd::sim::scenario_comm_model(s);
  const std::vector<double> sizes = {512, 4096, 65536, 262144, 1 << 20, 4 << 20};
  std::uint64_t flows = 0;
  std::uint64_t events = 0;
  for (auto _ : state) {
    ssgd::sim::Engine engine;
    ssgd::sim::FlowNetwork network(engine, comm.platform().link_capacities());
    ssgd::sim::CollectiveRunner runner(engine, network, comm.platform(), &comm.planner());
    // Each size's collectives start when the previous size's have ended.
    std::size_t next = 0;
    int running = 0;
    std::function<void()> start_next = [&] {
      if (next == sizes.size()) return;
      const double bytes = sizes[next++];
      running = at_once;
      for (int i = 0; i < at_once; ++i) {
        runner.run(comm.call(CollectiveOp::kAllReduce, bytes), [&] {
          if (--running == 0) start_next();
        });
      }
    };
    start_next();
    engine.run();
    flows += network.flows_started();
    events += engine.events_processed();
  }
  state.counters["flows_per_s"] =
      benchmark::Counter(static_cast<double>(flows), benchmark::Counter::kIsRate);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FlowAllReduce)
    ->ArgNames({"gpus", "algorithm", "at_once"})
    ->ArgsProduct({{1024, 16384}, {0}, {1, 2}})
    ->ArgsProduct({{1024}, {1, 2}, {1}})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
