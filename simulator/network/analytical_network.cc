#include "simulator/network/analytical_network.h"

namespace ssgd::sim {

void AnalyticalNetwork::times_alone(const Platform&, CollectivePlanner&,
                                    std::span<const CollectiveCall> calls, std::span<Duration> times,
                                    std::size_t) const {
  for (std::size_t i = 0; i < calls.size(); ++i) times[i] = calls[i].estimate;
}

std::unique_ptr<NetworkRun> AnalyticalNetwork::open(Engine&, const Platform&, CollectivePlanner&,
                                                    std::vector<bool>) const {
  return nullptr;
}

}  // namespace ssgd::sim
