#include "simulator/network/flow_network_model.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/run_indexed.h"
#include "simulator/network/collective_runner.h"

namespace ssgd::sim {
namespace {

// The run of `call` alone on an idle network of the platform's links,
// recorded into `recording` when given.
Duration run_alone(const Platform& platform, CollectivePlanner& planner, const CollectiveCall& call,
                   std::shared_ptr<const CollectivePlan> plan, CollectiveRecording* recording) {
  Engine engine;
  FlowNetwork network(engine, platform.link_capacities());
  CollectiveRunner runner(engine, network, platform, &planner);
  if (recording != nullptr) network.record(&recording->usage);
  runner.run(call, std::move(plan), [] {});
  engine.run();
  const Duration d = engine.now() - Time::zero();
  if (recording != nullptr) {
    network.record(nullptr);
    recording->duration = d;
    recording->events = engine.events_processed();
    recording->flows = network.flows_started();
    recording->recomputations = network.recomputations();
    recording->pruned = network.links_pruned();
    // A link's busy spells summed (whole nanoseconds: in any order).
    auto& busy = recording->usage.busy;
    std::sort(busy.begin(), busy.end());
    std::size_t kept = 0;
    for (const auto& [link, ns] : busy) {
      if (kept > 0 && busy[kept - 1].first == link) {
        busy[kept - 1].second += ns;
      } else {
        busy[kept++] = {link, ns};
      }
    }
    busy.resize(kept);
    busy.shrink_to_fit();
    recording->usage.bytes.shrink_to_fit();
  }
  return d;
}

class FlowRun final : public NetworkRun {
 public:
  FlowRun(Engine& engine, const Platform& platform, CollectivePlanner& planner,
          std::vector<bool> keep_activity)
      : network_(engine, platform.link_capacities()), runner_(engine, network_, platform, &planner) {
    if (!keep_activity.empty()) network_.record_activity(std::move(keep_activity));
  }
  void run(const CollectiveCall& call, std::function<void()> done) override {
    runner_.run(call, std::move(done));
  }
  void run_alone(const CollectiveCall& call, std::function<void()> done) override {
    runner_.run_alone(call, std::move(done));
  }
  std::vector<double> link_bytes() override {
    network_.settle();
    std::vector<double> out;
    out.reserve(network_.usage().size());
    for (const auto& u : network_.usage()) out.push_back(u.bytes);
    return out;
  }
  const std::vector<LinkActivity>& activity() const override { return network_.activity(); }
  std::string summary() const override {
    return fmt::format("flow model: {} collectives, {} of them replayed from their isolated runs' "
                       "recordings",
                       runner_.collectives_run(), runner_.collectives_replayed());
  }

 private:
  FlowNetwork network_;
  CollectiveRunner runner_;
};

}  // namespace

void FlowNetworkModel::times_alone(const Platform& platform, CollectivePlanner& planner,
                                   std::span<const CollectiveCall> calls, std::span<Duration> times,
                                   std::size_t threads) const {
  // Planned here, on the caller's thread: the runs only read the planner.
  std::vector<std::shared_ptr<const CollectivePlan>> plans;
  std::vector<std::shared_ptr<CollectiveRecording>> recordings;
  for (const CollectiveCall& c : calls) {
    plans.push_back(planner.plan(c));
    recordings.push_back(planner.keeps(plans.back().get()) ? std::make_shared<CollectiveRecording>()
                                                           : nullptr);
  }
  run_indexed(calls.size(), threads, [&](std::size_t i) {
    times[i] = run_alone(platform, planner, calls[i], plans[i], recordings[i].get());
  });
  for (std::size_t i = 0; i < calls.size(); ++i) {
    planner.keep_recording(plans[i].get(), std::move(recordings[i]));
  }
}

std::unique_ptr<NetworkRun> FlowNetworkModel::open(Engine& engine, const Platform& platform,
                                                   CollectivePlanner& planner,
                                                   std::vector<bool> keep_activity) const {
  return std::make_unique<FlowRun>(engine, platform, planner, std::move(keep_activity));
}

}  // namespace ssgd::sim
