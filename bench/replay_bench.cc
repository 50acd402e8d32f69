// Wall time of a whole replay (DAG build, event loop, breakdown, critical
// path; no single-worker baseline): ResNet-50 for 10 iterations under WFBP on
// P = 16 .. 1024 GPUs (8 per node, NVLink 2 inside nodes, EDR InfiniBand
// between them); the DAG built an iteration window at a time (the default)
// or whole before the run (second argument 1), with per-task jitter, and
// (fourth argument 1) every task run as events on the engine, not as a list
// schedule where the graph allows one (ReplayOptions::list_schedule; ranks
// that are all alike tie, and run as events either way).
#include <benchmark/benchmark.h>

#include "simulator/perturb/perturbation.h"
#include "simulator/replay/replay.h"
#include "traces/layer_profile.h"

namespace {

void BM_ReplayResNet50(benchmark::State& state) {
  const bool whole = state.range(1) != 0;
  const bool jitter = state.range(2) != 0;
  const bool events_only = state.range(3) != 0;
  const auto profile =
      ssgd::trace::read_layer_profile_csv(SSGD_SOURCE_DIR "/traces/datasets/resnet50_v100.csv");
  ssgd::sim::Scenario s;
  s.gpus_per_node = 8;
  s.nodes = state.range(0) / 8;
  s.iterations = 10;
  s.intra_node.preset = "nvlink2";
  s.inter_node.preset = "ib_edr100";
  if (jitter) s.perturb.jitter = ssgd::sim::parse_jitter("normal:0.05");
  ssgd::sim::ReplayOptions o;
  o.whole_graph = whole;
  o.list_schedule = !events_only;
  o.fold_ranks = false;  // the full DAG: what this benchmark measures
  o.single_worker_baseline = false;
  std::uint64_t events = 0;
  for (auto _ : state) {
    const auto r = ssgd::sim::replay(profile, s, o);
    events += r.events;
    benchmark::DoNotOptimize(r.iteration_time);
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ReplayResNet50)
    ->ArgNames({"gpus", "whole", "jitter", "events"})
    ->ArgsProduct({{16, 128, 1024}, {0, 1}, {0}, {0}})
    ->ArgsProduct({{2048}, {0, 1}, {1}, {0}})
    ->ArgsProduct({{2048}, {0}, {1}, {1}})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
