// The network models, by name (network_model.h). A new model is one more
// file and one more entry here.
#include <array>

#include "simulator/network/analytical_network.h"
#include "simulator/network/flow_network_model.h"
#include "simulator/network/network_model.h"

namespace ssgd::sim {
namespace {

std::shared_ptr<const NetworkModel> make_analytical() { return std::make_shared<AnalyticalNetwork>(); }
std::shared_ptr<const NetworkModel> make_flow() { return std::make_shared<FlowNetworkModel>(); }

constexpr std::array kModels = {
    NetworkModelEntry{"analytical",
                      "each collective alone on the platform: NCCL's model of its choice, or a "
                      "textbook algorithm's steps paced by their busiest link",
                      "NCCL 2.30.7 src/graph/tuning.cc; Hockney's alpha-beta model per step",
                      make_analytical},
    NetworkModelEntry{"flow",
                      "collectives as flows on the platform's links, shared by max-min fairness "
                      "with everything in flight",
                      "Bertsekas and Gallager, Data Networks, 6.5.2; SimGrid's lazy LMM "
                      "(Casanova et al., JPDC 2014)",
                      make_flow},
};

}  // namespace

std::span<const NetworkModelEntry> network_models() { return kModels; }

std::shared_ptr<const NetworkModel> find_network_model(std::string_view name) {
  for (const auto& m : kModels) {
    if (m.name == name) return m.make();
  }
  return nullptr;
}

std::string network_model_names() {
  std::string s;
  for (const auto& m : kModels) {
    if (!s.empty()) s += ", ";
    s += m.name;
  }
  return s;
}

}  // namespace ssgd::sim
