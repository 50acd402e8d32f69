#pragma once
// The flow-level network model (network.model: flow): each collective runs
// as flows over the platform's links (CollectiveRunner: a textbook
// algorithm's lock-step steps, or NCCL's channels all at once), and every
// link is shared by max-min fairness among all the flows in flight, the
// collective's own and everything else's (FlowNetwork). A collective's time
// alone is one such run on an idle network, recorded where it can be
// replayed to the last bit (CollectiveRecording).

#include "simulator/network/network_model.h"

namespace ssgd::sim {

class FlowNetworkModel final : public NetworkModel {
 public:
  [[nodiscard]] std::string_view name() const override { return "flow"; }
  [[nodiscard]] bool shares_links() const override { return true; }
  void times_alone(const Platform& platform, CollectivePlanner& planner,
                   std::span<const CollectiveCall> calls, std::span<Duration> times,
                   std::size_t threads) const override;
  [[nodiscard]] std::unique_ptr<NetworkRun> open(Engine& engine, const Platform& platform,
                                                 CollectivePlanner& planner,
                                                 std::vector<bool> keep_activity) const override;
};

}  // namespace ssgd::sim
