#pragma once
// The analytical network model (network.model: analytical): every
// collective takes its estimate alone on the platform (CollectiveCall::
// estimate, worked out by CommModel: NCCL's model of what it chose, with the
// bandwidth its traffic gets on the platform's busiest link; or a textbook
// algorithm's lock-step steps, each paced by its busiest link and slowest
// route, platform_cost.h). Links several transfers of one collective share
// cost what sharing costs; collectives that overlap in time do not slow each
// other, so runs with several jobs on one fabric need the flow model.

#include "simulator/network/network_model.h"

namespace ssgd::sim {

class AnalyticalNetwork final : public NetworkModel {
 public:
  [[nodiscard]] std::string_view name() const override { return "analytical"; }
  [[nodiscard]] bool shares_links() const override { return false; }
  void times_alone(const Platform& platform, CollectivePlanner& planner,
                   std::span<const CollectiveCall> calls, std::span<Duration> times,
                   std::size_t threads) const override;
  [[nodiscard]] std::unique_ptr<NetworkRun> open(Engine& engine, const Platform& platform,
                                                 CollectivePlanner& planner,
                                                 std::vector<bool> keep_activity) const override;
};

}  // namespace ssgd::sim
