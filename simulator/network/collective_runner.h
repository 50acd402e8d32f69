#pragma once
// Runs collectives on the flow-level network: each step of an algorithm's
// decomposition (simulator/collective/collective.h) becomes one flow per
// transfer, routed over the platform; the step starts after its latency
// (repeat x the largest route latency, or a calibrated band's latency for
// transfers between nodes) and ends when its last flow ends. The next step
// starts then: lock step, as the closed forms assume.

#include <cstdint>
#include <functional>
#include <vector>

#include "simulator/calibration/network_calibration.h"
#include "simulator/collective/collective.h"
#include "simulator/engine/engine.h"
#include "simulator/network/flow_network.h"
#include "simulator/platform/platform.h"

namespace ssgd::sim {

struct CollectiveCall {
  CollectiveOp op = CollectiveOp::kAllReduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;  // resolved, never kAuto
  CollectiveShape shape;
  double bytes = 0;
  const std::vector<VertexId>* endpoints = nullptr;  // ranks 0..P-1, then servers
  const CalibrationBand* band = nullptr;             // calibrated costs between nodes, or null
};

class CollectiveRunner : public FlowListener {
 public:
  CollectiveRunner(Engine& engine, FlowNetwork& network, const Platform& platform);

  // Starts `call` now; `done` runs (from an engine event) when it has ended.
  void run(const CollectiveCall& call, std::function<void()> done);

  [[nodiscard]] std::uint64_t collectives_run() const { return started_; }

 private:
  struct Instance {
    std::vector<CollectiveStep> steps;
    std::size_t step = 0;
    std::int64_t outstanding = 0;
    std::function<void()> done;
    const std::vector<VertexId>* endpoints = nullptr;
    const CalibrationBand* band = nullptr;
  };

  void begin_step(std::uint32_t id);
  void inject(std::uint32_t id);
  void flow_finished(std::uint64_t tag) override;

  Engine& engine_;
  FlowNetwork& network_;
  const Platform& platform_;
  StreamCap streams_;  // the platform's TCP stream bound between nodes
  std::vector<Instance> instances_;
  std::vector<std::uint32_t> free_;
  RouteCache routes_;
  HandlerId inject_handler_ = 0;
  HandlerId done_handler_ = 0;
  std::uint64_t started_ = 0;
};

}  // namespace ssgd::sim
