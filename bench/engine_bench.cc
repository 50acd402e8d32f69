// Events per second of the discrete-event engine on one core.
//
// Hold model (Vaucher and Duval, 1975): the queue holds Q pending events;
// each handler schedules one new event at now + a pseudo-random delay, so
// every event is one pop and one push at a constant queue size. This is the
// standard way to measure a pending-event set.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "simulator/engine/engine.h"

namespace {

using ssgd::Duration;
using ssgd::Time;
using ssgd::sim::Engine;
using ssgd::sim::HandlerId;

void BM_EngineHold(benchmark::State& state) {
  const auto queue_size = static_cast<std::uint64_t>(state.range(0));
  constexpr std::uint64_t kEvents = 1u << 22;
  std::uint64_t total = 0;
  for (auto _ : state) {
    Engine engine;
    engine.reserve(queue_size + 1);
    std::uint64_t rng = 88172645463325252ull;
    std::uint64_t remaining = kEvents;
    HandlerId h = 0;
    h = engine.register_handler([&](Engine& e, std::uint64_t payload) {
      if (remaining == 0) return;
      --remaining;
      rng ^= rng << 13;
      rng ^= rng >> 7;
      rng ^= rng << 17;
      e.schedule_after(Duration(static_cast<std::int64_t>(rng % 100'000)), h, payload);
    });
    for (std::uint64_t i = 0; i < queue_size; ++i) {
      engine.schedule(Time(static_cast<std::int64_t>(i * 7919 % 100'000)), h, i);
    }
    engine.run();
    total += engine.events_processed();
    benchmark::DoNotOptimize(engine.now());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(total));
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(total), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EngineHold)->Arg(64)->Arg(1024)->Arg(65536)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
