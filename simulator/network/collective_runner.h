#pragma once
// Runs collectives on the flow-level network: each step of an algorithm's
// decomposition (simulator/collective/collective.h) becomes one flow per
// transfer, routed over the platform; the step starts after its latency
// (repeat x the largest route latency, or a calibrated band's latency for
// transfers between nodes) and ends when its last flow ends. The next step
// starts then: lock step, as the closed forms assume.

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "simulator/calibration/network_calibration.h"
#include "simulator/collective/collective.h"
#include "simulator/engine/engine.h"
#include "simulator/network/collective_plan.h"
#include "simulator/network/flow_network.h"
#include "simulator/platform/platform.h"

namespace ssgd::sim {

class CollectiveRunner : public FlowListener {
 public:
  // Plans its collectives with `planner` (which must outlive it and plan for
  // `platform`), or with one of its own when null.
  CollectiveRunner(Engine& engine, FlowNetwork& network, const Platform& platform,
                   CollectivePlanner* planner = nullptr);

  // Starts `call` now; `done` runs (from an engine event) when it has ended.
  void run(const CollectiveCall& call, std::function<void()> done);
  // The same with its plan made beforehand, by a planner that outlives the
  // run (its routes are the planner's): runners on other threads may then
  // share a planner, which they do not touch.
  void run(const CollectiveCall& call, std::shared_ptr<const CollectivePlan> plan,
           std::function<void()> done);

  // Starts `call` now, as run(), where nothing else will use the engine or
  // the network until it has ended (the list schedule's executor tasks):
  // when the planner keeps a recording of its run alone and the network is
  // idle, the recording is replayed (its usage added, `done` called after
  // its duration, its events counted) instead of running every flow again;
  // the same figures either way (a run depends on its flows' start order,
  // not on their numbers: FlowNetwork).
  void run_alone(const CollectiveCall& call, std::function<void()> done);

  [[nodiscard]] std::uint64_t collectives_run() const { return started_; }
  [[nodiscard]] std::uint64_t collectives_replayed() const { return replayed_; }

 private:
  struct Instance {
    std::shared_ptr<const CollectivePlan> plan;
    std::size_t step = 0;
    std::int64_t outstanding = 0;
    std::function<void()> done;
    const CalibrationBand* band = nullptr;
    bool band_inside = false;
  };

  std::uint32_t instance();
  void begin_step(std::uint32_t id);
  void inject(std::uint32_t id);
  void flow_finished(std::uint64_t tag) override;

  Engine& engine_;
  FlowNetwork& network_;
  std::unique_ptr<CollectivePlanner> own_planner_;
  CollectivePlanner& planner_;
  StreamCap streams_;  // the platform's TCP stream bound between nodes
  std::vector<Instance> instances_;
  std::vector<std::uint32_t> free_;
  HandlerId inject_handler_ = 0;
  HandlerId done_handler_ = 0;
  std::uint64_t started_ = 0;
  std::uint64_t replayed_ = 0;
};

}  // namespace ssgd::sim
